// The sandbox runs that checks ask for (cases, test suites): described by each check as data
// (planCheckRuns), run here in fresh containers of their own after the program's run, and stored with
// the attempt's execution, so that INSPECT, and an INSPECT resumed after a crash, judges this evidence
// and never runs the program's code again.
import { checkRunRow, type PrismaClient, type RowInsert } from "@loopsmith/db";
import type { RunPurpose, RunResult, Sandbox, SandboxFile } from "@loopsmith/sandbox";
import type { FrozenCheck, Language } from "@loopsmith/schemas";
import { planCheckRuns, rerunsFailed, type RunEvidence, type SandboxPlanContext } from "@loopsmith/verifier";

export interface CheckRunsOfCheck {
  index: number;
  checkId: string;
  runs: RunEvidence[];
}

export async function loadCheckerFiles(prisma: PrismaClient, goalId: string): Promise<SandboxFile[]> {
  const rows = await prisma.goalCheckerFile.findMany({ where: { goalId }, orderBy: { name: "asc" } });
  return rows.map((r) => ({ name: r.name, content: Buffer.from(r.content) }));
}

function evidenceOf(run: RunResult): RunEvidence {
  return {
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    oomKilled: run.oomKilled,
    stdout: run.stdout,
    stderr: run.stderr,
    durationMs: Math.round(run.durationMs),
    artifacts: run.artifacts.map((a) => ({ name: a.name, content: a.content })),
    artifactErrors: run.artifactErrors,
    ...(run.judge ? { judge: { exitCode: run.judge.exitCode, files: run.judge.files.map((f) => ({ name: f.name, content: f.content })), errors: run.judge.errors } } : {}),
    ...(run.channel ? { channel: run.channel } : {}),
    ...(run.protectedReplaced ? { protectedReplaced: run.protectedReplaced } : {}),
  };
}

/** Runs every check's sandbox requests, one fresh container each, within `timeLeftMs` in all. */
export async function runCheckRuns(opts: {
  sandbox: Sandbox;
  checks: FrozenCheck[];
  code: { filename: string; source: string };
  /** issue 14: the goal's language and workspace, for checks that run the workspace's own commands. */
  language?: Language;
  workspace?: SandboxPlanContext["workspace"];
  inputs: SandboxFile[];
  checkerFiles: SandboxFile[];
  env: Record<string, string>;
  timeLeftMs: () => number;
  signal: AbortSignal;
  run: (req: Parameters<Sandbox["run"]>[0]) => Promise<RunResult>;
  purpose?: RunPurpose;
  /**
   * Whether a check failed on its runs so far as a plain failure (not tampering, not flaky, not unrun): a
   * check with rerun_failed then gets one more repetition. Without it, no check is run again.
   */
  failedPlainly?: (check: FrozenCheck, runs: RunEvidence[]) => Promise<boolean>;
}): Promise<CheckRunsOfCheck[]> {
  const out: CheckRunsOfCheck[] = [];
  for (const [index, check] of opts.checks.entries()) {
    const planContext = {
      program: { filename: opts.code.filename, source: opts.code.source },
      checkerFiles: opts.checkerFiles,
      inputs: opts.inputs,
      ...(opts.language ? { language: opts.language } : {}),
      ...(opts.workspace ? { workspace: opts.workspace } : {}),
    };
    const requests = planCheckRuns(check, planContext);
    if (requests.length === 0) continue;
    const runs: RunEvidence[] = [];
    await runRequests(opts, requests, runs);
    if (opts.failedPlainly && rerunsFailed(check) && runs.length === requests.length && (await opts.failedPlainly(check, runs))) {
      await runRequests(opts, planCheckRuns(check, planContext, { rerun: true }), runs);
    }
    out.push({ index, checkId: check.id, runs });
  }
  return out;
}

/** Runs a check's requests in order, one fresh container each, while the goal has time left. */
async function runRequests(opts: Parameters<typeof runCheckRuns>[0], requests: ReturnType<typeof planCheckRuns>, runs: RunEvidence[]): Promise<void> {
  for (const req of requests) {
    const left = opts.timeLeftMs();
    if (left <= 0) break;
    const result = await opts.run({
      files: opts.inputs,
      workFiles: req.files,
      command: req.command,
      env: { ...opts.env, ...req.env },
      timeoutMs: Math.max(1, Math.min(req.timeoutMs, left)),
      ...(req.runtime ? { runtime: req.runtime } : {}),
      ...(req.protect ? { protect: req.protect } : {}),
      ...(req.judge ? { judge: req.judge } : {}),
      ...(req.channel ? { channel: true } : {}),
      ...(req.isolate ? { isolate: true } : {}),
      signal: opts.signal,
      purpose: opts.purpose ?? "check",
    });
    runs.push({ ...evidenceOf(result), ...(req.repetition !== undefined ? { repetition: req.repetition } : {}) });
  }
}

// Stored as JSON bytes with artifacts in base64: whatever a program wrote is kept as it was.
export function encodeRuns(runs: RunEvidence[]): Uint8Array<ArrayBuffer> {
  const b64 = (files: RunEvidence["artifacts"]) => files.map((a) => ({ name: a.name, content: a.content.toString("base64") }));
  const plain = runs.map((r) => ({ ...r, artifacts: b64(r.artifacts), ...(r.judge ? { judge: { ...r.judge, files: b64(r.judge.files) } } : {}) }));
  return new Uint8Array(Buffer.from(JSON.stringify(plain), "utf8"));
}

type StoredFiles = { name: string; content: string }[];
export function decodeRuns(bytes: Uint8Array): RunEvidence[] {
  const plain = JSON.parse(Buffer.from(bytes).toString("utf8")) as (Omit<RunEvidence, "artifacts" | "judge"> & { artifacts: StoredFiles; judge?: Omit<NonNullable<RunEvidence["judge"]>, "files"> & { files: StoredFiles } })[];
  const bytesOf = (files: StoredFiles) => files.map((a) => ({ name: a.name, content: Buffer.from(a.content, "base64") }));
  return plain.map(({ judge, ...r }) => ({ ...r, artifacts: bytesOf(r.artifacts), ...(judge ? { judge: { ...judge, files: bytesOf(judge.files) } } : {}) }));
}

/** The rows that store an attempt's check runs with its execution. */
export function checkRunRows(goalId: string, executionId: string, attempt: number, runs: CheckRunsOfCheck[]): RowInsert[] {
  return runs.map((r) => checkRunRow({ goalId, executionId, attempt, checkIndex: r.index, checkId: r.checkId, evidence: encodeRuns(r.runs) }));
}

/** Each check's runs for an attempt, by the check's index in the frozen plan. */
export async function loadCheckRuns(prisma: PrismaClient, goalId: string, attempt: number): Promise<Map<number, RunEvidence[]>> {
  const rows = await prisma.checkRun.findMany({ where: { goalId, attempt } });
  return new Map(rows.map((r) => [r.checkIndex, decodeRuns(r.evidence)]));
}

/** The tape's summary of a check's runs: how each ended, not what it printed. */
export function summarizeCheckRuns(runs: CheckRunsOfCheck[]) {
  return runs.map((r) => ({
    check: r.checkId,
    index: r.index,
    runs: r.runs.map((e) => ({
      ...(e.repetition !== undefined ? { repetition: e.repetition + 1 } : {}),
      exit_code: e.exitCode,
      timed_out: e.timedOut,
      oom_killed: e.oomKilled,
      duration_ms: e.durationMs,
      artifacts: e.artifacts.map((a) => a.name),
    })),
  }));
}
