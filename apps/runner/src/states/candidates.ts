// Best-of-N (a goal's `candidates`): GENERATE and REFINE sample N programs at once, EXECUTE runs and checks
// each and keeps one, which becomes the attempt. The machine does not change: candidates are data inside
// one attempt, each one's run and verdict on the EXECUTE row of the tape.
import type { PrismaClient } from "@loopsmith/db";
import { generatedCode, type FrozenCheck, type GeneratedCode } from "@loopsmith/schemas";
import { z } from "zod";
import { runProgram, verifyContext, workspaceEvidence, type GoalWorkspace, type ProgramRun } from "./attempt";
import type { StepDeps } from "./context";
import type { ModelTurnError, TurnOutcome } from "./model-call";

/** What a sampled turn's candidates came to: the programs in candidate order, and the calls that failed. */
export function sampled<T>(turns: TurnOutcome<T>[]): { outputs: T[]; errors: { candidate: number; error: ModelTurnError }[] } {
  const outputs: T[] = [];
  const errors: { candidate: number; error: ModelTurnError }[] = [];
  turns.forEach((t, i) => (t.ok ? outputs.push(t.output) : errors.push({ candidate: i, error: t.error })));
  return { outputs, errors };
}

/** The tape row's part for a turn's candidates (nothing for a goal that samples one). */
export function candidatesDetail(codes: GeneratedCode[], errors: { candidate: number; error: ModelTurnError }[], n: number) {
  if (n <= 1) return {};
  return { candidates: codes, ...(errors.length > 0 ? { candidate_errors: errors.map((e) => ({ candidate: e.candidate + 1, code: e.error.code, message: e.error.message })) } : {}) };
}

/** The candidates of the latest GENERATE or REFINE (one: its code, for goals that sample one). */
export async function loadLatestCandidates(prisma: PrismaClient, goalId: string): Promise<GeneratedCode[]> {
  const row = await prisma.transition.findFirst({
    where: { goalId, toState: "execute", fromState: { in: ["generate", "refine"] } },
    orderBy: { seq: "desc" },
    select: { detail: true },
  });
  const detail = (row?.detail ?? {}) as { code?: unknown; candidates?: unknown };
  const many = z.array(generatedCode).min(2).safeParse(detail.candidates);
  return many.success ? many.data : [generatedCode.parse(detail.code)];
}

/** One candidate as EXECUTE tried it. */
export interface Tried {
  code: GeneratedCode;
  program: ProgramRun;
  /** The checks it failed. */
  failing: string[];
}

/**
 * The verifier's pick, a pure function of the verdicts: a candidate that passes every check, else the one
 * that fails fewest; ties go to the shorter program, then to the earlier candidate. Deterministic, so a
 * replay picks the same one.
 */
export function chooseCandidate(tried: Pick<Tried, "failing" | "code">[]): number {
  let best = 0;
  for (let i = 1; i < tried.length; i++) {
    const a = tried[i]!;
    const b = tried[best]!;
    if (a.failing.length < b.failing.length || (a.failing.length === b.failing.length && size(a.code) < size(b.code))) best = i;
  }
  return best;
}

const size = (code: GeneratedCode) => code.source.length + (code.files ?? []).reduce((n, f) => n + f.content.length, 0);

/** Runs one candidate as an attempt runs (its container, then the checks' own runs) and checks it. */
export async function tryCandidate(
  deps: Pick<StepDeps, "sandbox" | "checks">,
  opts: Omit<Parameters<typeof runProgram>[1], "code"> & { code: GeneratedCode; checks: FrozenCheck[]; workspace: GoalWorkspace | null },
): Promise<Tried> {
  const program = await runProgram(deps, opts);
  const runs = new Map(program.checkRuns.map((r) => [r.index, r.runs]));
  const ctx = verifyContext(
    program.run,
    { inputs: opts.inputs, checkerFiles: opts.checkerFiles },
    { filename: opts.code.filename, source: opts.code.source },
    workspaceEvidence(opts.workspace, opts.code),
  );
  // Judged as INSPECT judges an attempt (the same checks, the same evidence), off the event loop.
  const outcomes = await deps.checks.run(opts.checks, ctx, (i) => runs.get(i) ?? []);
  return { code: opts.code, program, failing: outcomes.filter((o) => !o.passed).map((o) => o.id) };
}

/** What the EXECUTE row says of each candidate: how it ran and which checks it failed. */
export function triedSummary(tried: Tried[], chosen: number) {
  return tried.map((t, i) => ({
    candidate: i + 1,
    chosen: i === chosen,
    exit_code: t.program.run.exitCode,
    timed_out: t.program.run.timedOut,
    oom_killed: t.program.run.oomKilled,
    duration_ms: Math.round(t.program.run.durationMs),
    failing_checks: t.failing,
  }));
}
