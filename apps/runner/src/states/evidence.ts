// Reading back what earlier steps stored: the frozen plan, the code the last GENERATE/REFINE produced,
// the latest execution and its checks. All of it comes from the database, so any runner can take the
// next step of any goal.
import { LoopSmithError, storable } from "@loopsmith/core";
import type { Execution, PrismaClient } from "@loopsmith/db";
import type { RunSummary } from "@loopsmith/agents";
import { frozenCheck, generatedCode, inspection, planOutput, type FrozenCheck, type GeneratedCode, type Inspection, type PlanOutput } from "@loopsmith/schemas";
import { readStoredWorkspace, type WorkspaceFile } from "@loopsmith/verifier";
import { z } from "zod";

/** A goal's workspace as the runner holds it: the original files and the paths the model may not change. */
export interface GoalWorkspace {
  files: WorkspaceFile[];
  locked: string[];
}

export interface FrozenPlan {
  plan: PlanOutput;
  checks: FrozenCheck[];
}

/** A row a step needs is not in the database (a bug, or a goal changed by hand): the step fails. */
export function missing(what: string, goalId: string): never {
  throw new LoopSmithError("LS_ERR_INTERNAL", `goal ${goalId}: ${what} is missing from the database`);
}

export async function loadInputs(prisma: PrismaClient, goalId: string): Promise<{ name: string; content: Buffer }[]> {
  const rows = await prisma.goalInput.findMany({ where: { goalId }, orderBy: { name: "asc" } });
  return rows.map((r) => ({ name: r.name, content: Buffer.from(r.content) }));
}

/** issue 14: the goal's workspace (its original files and locked paths), or null for goals without one. */
export async function loadWorkspace(prisma: PrismaClient, goalId: string): Promise<GoalWorkspace | null> {
  const row = await prisma.goalWorkspace.findUnique({ where: { goalId } });
  if (!row) return null;
  return { files: await readStoredWorkspace(Buffer.from(row.archive)), locked: z.array(z.string()).parse(row.locked) };
}


export async function loadPlan(prisma: PrismaClient, goalId: string): Promise<FrozenPlan> {
  const row = (await prisma.plan.findUnique({ where: { goalId } })) ?? missing("the plan", goalId);
  return {
    plan: planOutput.parse({
      objective: row.objective,
      approach: row.approach,
      output_contract: row.outputContract,
      checks: row.checks,
    }),
    checks: z.array(frozenCheck).parse(row.checks),
  };
}

/**
 * The code of the latest attempt: the program of the latest GENERATE or REFINE, stored on the tape row that
 * moved the goal to execute, or, for a goal that samples candidates (best-of-N), the one EXECUTE chose,
 * stored on its row once it ran.
 */
export async function loadLatestCode(prisma: Pick<PrismaClient, "transition">, goalId: string): Promise<GeneratedCode> {
  return (await loadLatestAttempt(prisma, goalId)).code;
}

/** The latest attempt's code (see loadLatestCode) and the detail of the EXECUTE row that ran it, once it ran. */
export async function loadLatestAttempt(prisma: Pick<PrismaClient, "transition">, goalId: string): Promise<{ code: GeneratedCode; ran?: unknown }> {
  // Both rows in one statement (a schedule's pin reads this inside a transaction): the newest row that
  // carried a program (not a resume from errored: that row carries no code) and the newest run. A program's
  // run follows it once (EXECUTE moves to INSPECT once per attempt), so the newest two rows hold both.
  const rows = await prisma.transition.findMany({
    where: { goalId, OR: [{ toState: "execute", fromState: { in: ["generate", "refine"] } }, { fromState: "execute", toState: "inspect" }] },
    orderBy: { seq: "desc" },
    take: 2,
    select: { fromState: true, detail: true },
  });
  const at = rows.findIndex((r) => r.fromState !== "execute");
  if (at < 0) missing("the generated code", goalId);
  // The run of this code (a newer row than the code's), not of an earlier attempt's.
  const detail = at === 1 ? rows[0]!.detail : undefined;
  const chosen = (detail as { chosen?: { code?: unknown } } | undefined)?.chosen?.code;
  return { code: generatedCode.parse(chosen ?? (rows[at]!.detail as { code?: unknown }).code), ...(detail !== undefined ? { ran: detail } : {}) };
}

/**
 * The inspection stored on the tape row that moved the goal from its latest INSPECT to REFINE, or to
 * awaiting_approval with a give-up the client then overruled (issue 27; a spending pause there has none).
 */
export async function loadLatestInspection(prisma: PrismaClient, goalId: string): Promise<Inspection> {
  const rows = await prisma.transition.findMany({
    where: { goalId, fromState: "inspect", toState: { in: ["refine", "awaiting_approval"] } },
    orderBy: { seq: "desc" },
    take: 2,
  });
  const row = rows.find((r) => (r.detail as { inspection?: unknown } | null)?.inspection !== undefined) ?? missing("the inspection", goalId);
  return inspection.parse((row.detail as { inspection?: unknown }).inspection);
}

export async function loadExecution(prisma: PrismaClient, goalId: string, attempt: number) {
  // Side by side (an include would send the artifacts' statement once the execution came back).
  const [exec, artifactFiles] = await Promise.all([
    prisma.execution.findUnique({ where: { goalId_attempt: { goalId, attempt } } }),
    prisma.artifact.findMany({ where: { goalId, execution: { is: { goalId, attempt } } } }),
  ]);
  return { ...(exec ?? missing(`execution ${attempt}`, goalId)), artifactFiles };
}

/** What the models are told about a stored execution; `deliverable` names the file to show (null: none). */
export function runSummary(
  exec: Execution & { artifactFiles: { name: string; size: number; content: Uint8Array }[] },
  deliverable: string | null,
): RunSummary {
  const file = deliverable === null ? undefined : exec.artifactFiles.find((a) => a.name === deliverable);
  let text: string | null = null;
  if (file) {
    try {
      // The prompt (and the model_calls row that stores it) must be storable: NUL shown as U+2400.
      text = storable(new TextDecoder("utf-8", { fatal: true }).decode(file.content)).text;
    } catch {
      text = null;
    }
  }
  return {
    attempt: exec.attempt,
    exitCode: exec.exitCode,
    timedOut: exec.timedOut,
    oomKilled: exec.oomKilled,
    durationMs: exec.durationMs,
    stdout: exec.stdout,
    stderr: exec.stderr,
    artifacts: exec.artifactFiles.map((a) => ({ name: a.name, size: a.size })),
    deliverable: deliverable === null ? null : { name: deliverable, text },
  };
}
