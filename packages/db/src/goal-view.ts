import { createHash } from "node:crypto";
// What GET /goals/:id returns (and what a webhook carries), read through the tenant: a goal of another
// tenant does not exist here.
import { tapeString, type FailureReason, type State } from "@loopsmith/machine";
import {
  checkFlaky,
  failureReport,
  inspection,
  MODEL_CALL_RESERVED,
  POSSIBLY_BILLED,
  storedBudgets,
  type CheckFlaky,
  type FailureReport,
  type GoalView,
  type ModelSpec,
} from "@loopsmith/schemas";
import type { PrismaClient } from "./generated/client";
import type { Tx } from "./tx";

const TAIL = 2000;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function loadGoalView(prisma: PrismaClient, scope: { tenantId: string; id: string }): Promise<GoalView | null> {
  if (!UUID.test(scope.id)) return null;
  const goal = await prisma.goal.findFirst({
    where: { id: scope.id, tenantId: scope.tenantId },
    include: {
      plan: true,
      transitions: { orderBy: { seq: "asc" } },
      executions: { orderBy: { attempt: "asc" } },
      workspace: { select: { files: true, locked: true, sha256: true } },
    },
  });
  if (!goal) return null;
  const id = goal.id;
  const deliverable = goal.deliverable;
  const [calls, possiblyBilled, results, verifiedArtifact, checkerFiles, callRows] = await Promise.all([
    prisma.modelCall.aggregate({
      where: { goalId: id },
      _count: { _all: true },
      _sum: { tokensIn: true, tokensOut: true, latencyMs: true, costUsd: true },
    }),
    prisma.modelCall.count({ where: { goalId: id, error: { startsWith: POSSIBLY_BILLED } } }),
    prisma.checkResult.findMany({ where: { goalId: id }, orderBy: [{ attempt: "asc" }, { createdAt: "asc" }] }),
    goal.verified && deliverable !== null
      ? prisma.artifact.findFirst({ where: { goalId: id, name: deliverable, execution: { attempt: goal.attempts } } })
      : null,
    prisma.goalCheckerFile.findMany({ where: { goalId: id }, orderBy: { name: "asc" }, select: { name: true, size: true, sha256: true } }),
    prisma.modelCall.findMany({
      where: { goalId: id },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
      omit: { request: true, response: true },
    }),
  ]);

  type Spec = { id: string; kind: "deterministic" | "judgement"; params: Record<string, unknown>; description: string; source?: string; hidden?: boolean; reveal?: string };
  // The API stores client checks with their visibility resolved; PLAN freezes them with their source.
  const specs = ((goal.plan?.checks ?? goal.checks) as Spec[]).map((c) => ({ ...c, source: c.source ?? "client" }));
  // A check's results: same id, and effective params (defaults filled in) that agree with every param the
  // spec gave. Ids may repeat with different params, so the id alone is not enough.
  const resultsFor = (c: Spec) =>
    results
      .filter((r) => r.checkId === c.id && resultMatchesParams((r.params ?? {}) as Record<string, unknown>, c.params))
      .map((r) => ({ attempt: r.attempt, passed: r.passed, message: r.message, feedback: r.feedback, findings: r.findings as Finding[], ...flakyOf(r.flaky) }));
  const lastInspection = [...goal.transitions]
    .reverse()
    .map((t) => inspection.safeParse((t.detail as { inspection?: unknown }).inspection))
    .find((p) => p.success)?.data;
  // Always set: POST /goals stores the resolved spec, with the model name pinned.
  const spec = goal.model as ModelSpec;
  const now = Date.now();
  const failure = failureReport.safeParse(goal.failureReport);

  return {
    id: goal.id,
    objective: goal.objective,
    success: goal.success,
    language: goal.language as GoalView["language"],
    workspace: goal.workspace
      ? {
          files: (goal.workspace.files as unknown[]).length,
          size: (goal.workspace.files as { size: number }[]).reduce((n, f) => n + f.size, 0),
          sha256: goal.workspace.sha256,
          locked: goal.workspace.locked as string[],
        }
      : null,
    // Written only by the machine's moves, so always one of its states and reasons.
    state: goal.state as State,
    verified: goal.verified,
    failure_reason: goal.failureReason as FailureReason | null,
    attempts: goal.attempts,
    max_attempts: goal.maxAttempts,
    model: spec.provider === "scripted" ? { provider: "scripted", model: "scripted" } : { provider: spec.provider, model: spec.model ?? null },
    inputs: goal.inputs as GoalView["inputs"],
    checker_files: checkerFiles,
    feedback: goal.feedback as GoalView["feedback"],
    candidates: goal.candidates,
    on_infeasible: goal.onInfeasible === "ask" ? "ask" : "fail",
    // The self-test ran in PLAN; its outcome rides on the row that left it.
    self_test: (goal.transitions.find((t) => t.fromState === "plan")?.detail as { self_test?: unknown } | undefined)?.self_test ?? null,
    deliverable: { name: deliverable, artifact: deliverableArtifact(goal, verifiedArtifact) },
    tape: tapeString(goal.transitions.map((t) => t.toState)),
    transitions: goal.transitions.map(transitionRow),
    plan: goal.plan
      ? { objective: goal.plan.objective, approach: goal.plan.approach as string[], output_contract: goal.plan.outputContract }
      : null,
    checks: specs.map((c) => {
      const all = resultsFor(c);
      return {
        id: c.id,
        kind: c.kind,
        params: c.params,
        description: c.description,
        source: c.source as "baseline" | "client" | "planner",
        hidden: c.hidden === true,
        reveal: (c.reveal ?? "input") as "full" | "input" | "verdict",
        latest: all[all.length - 1] ?? null,
        results: all,
      };
    }),
    executions: goal.executions.map((e) => ({
      attempt: e.attempt,
      exit_code: e.exitCode,
      duration_ms: e.durationMs,
      timed_out: e.timedOut,
      oom_killed: e.oomKilled,
      stderr_tail: e.stderr.slice(-TAIL),
      stdout_tail: e.stdout.slice(-TAIL),
      artifacts: e.artifacts as { name: string; size: number; sha256: string }[],
      image_id: e.imageId,
      image_digest: e.imageDigest,
      sandbox_runtime: e.sandboxRuntime,
      script_sha256: e.scriptSha256,
      limits: (e.limits as GoalView["executions"][number]["limits"]) ?? null,
    })),
    model_calls: callRows.map((c) => ({
      state: c.state,
      attempt: c.attempt,
      provider: c.provider,
      model: c.model,
      system_sha256: c.systemSha256,
      prompt_sha256: c.promptSha256,
      tokens_in: c.tokensIn,
      tokens_out: c.tokensOut,
      cost_usd: c.costUsd,
      latency_ms: c.latencyMs,
      error_kind: errorKind(c.error),
      created_at: c.createdAt.toISOString(),
    })),
    last_inspection: lastInspection ?? null,
    // Parsed from the stored bytes rather than the JSONB copy, which reorders keys.
    report: verifiedArtifact && deliverable?.endsWith(".json") ? parseReport(verifiedArtifact.content) : null,
    failure_report: failure.success ? failure.data : null,
    budgets: storedBudgets(goal.budgets, goal.maxAttempts),
    webhook: webhookView(goal.webhook),
    cost: {
      cost_usd: calls._sum.costUsd ?? 0,
      model_calls: calls._count._all,
      possibly_billed_calls: possiblyBilled,
      tokens_in: calls._sum.tokensIn ?? 0,
      tokens_out: calls._sum.tokensOut ?? 0,
      model_latency_ms: calls._sum.latencyMs ?? 0,
      sandbox_ms: goal.executions.reduce((s, e) => s + e.durationMs, 0),
      wall_time_ms: (goal.finishedAt?.getTime() ?? now) - goal.createdAt.getTime(),
    },
    schedule_id: goal.scheduleId,
    pinned_from: (goal.pinned as { goal_id?: string } | null)?.goal_id ?? null,
    loopsmith_version: goal.loopsmithVersion,
    // The text the runner stored, parsed: the signature covers its canonical form, which parsing keeps.
    receipt: goal.receipt === null ? null : (JSON.parse(goal.receipt) as GoalView["receipt"]),
    created_at: goal.createdAt.toISOString(),
    updated_at: goal.updatedAt.toISOString(),
    finished_at: goal.finishedAt?.toISOString() ?? null,
  };
}

/**
 * Whether a check result row belongs to a check spec with the same id: its effective params (defaults
 * filled in) agree with every param the spec gave. Ids may repeat with different params.
 */
export function resultMatchesParams(effective: Record<string, unknown>, specParams: Record<string, unknown>): boolean {
  return Object.entries(specParams).every(([k, v]) => JSON.stringify(effective[k]) === JSON.stringify(v));
}

/** A model_calls row's outcome, from the error text the runner writes (see the runner's model-call.ts). */
function errorKind(error: string | null): GoalView["model_calls"][number]["error_kind"] {
  if (error === null) return null;
  if (error === MODEL_CALL_RESERVED) return "reserved";
  if (error.startsWith(POSSIBLY_BILLED)) return "possibly_billed";
  if (error.startsWith("unavailable:")) return "unavailable";
  return "failed";
}

type Finding = { where: string; input?: string; actual?: string; expected?: string; note?: string };

function parseReport(content: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(content).toString("utf8")) as unknown;
  } catch {
    // Verified means the checks read it as JSON; should the stored bytes ever not parse, show nothing.
    return null;
  }
}

/** The verified attempt's deliverable: its artifact, or for a program deliverable, the program. */
function deliverableArtifact(
  goal: { verified: boolean; attempts: number; deliverable: string | null; executions: { attempt: number; script: string }[] },
  artifact: { name: string; size: number; sha256: string } | null,
) {
  if (!goal.verified) return null;
  if (goal.deliverable !== null) return artifact ? { attempt: goal.attempts, name: artifact.name, size: artifact.size, sha256: artifact.sha256 } : null;
  const exec = goal.executions.find((e) => e.attempt === goal.attempts);
  if (!exec) return null;
  const bytes = Buffer.from(exec.script, "utf8");
  return { attempt: goal.attempts, name: "program", size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}

export function transitionRow(t: { seq: number; fromState: string | null; toState: string; at: Date; detail: unknown; hash: string | null }) {
  return { seq: t.seq, from: t.fromState as State | null, to: t.toState as State, at: t.at.toISOString(), detail: t.detail as Record<string, unknown>, hash: t.hash };
}

const LAST_TRANSITIONS = 6;

/**
 * The structured report of a failed goal, assembled from its tape and evidence inside the transaction
 * that writes the `failed` row (so the report and the tape cannot disagree).
 */
export async function buildFailureReport(tx: Tx, goalId: string, reason: string, message: string, extra: Partial<FailureReport> = {}): Promise<FailureReport> {
  const [transitions, lastExec] = await Promise.all([
    tx.transition.findMany({ where: { goalId }, orderBy: { seq: "desc" }, take: 40 }),
    tx.execution.findFirst({ where: { goalId }, orderBy: { attempt: "desc" } }),
  ]);
  const failing = lastExec
    ? await tx.checkResult.findMany({ where: { goalId, attempt: lastExec.attempt, passed: false }, orderBy: { createdAt: "asc" } })
    : [];
  const diagnosis = transitions
    .map((t) => inspection.safeParse((t.detail as { inspection?: unknown } | null)?.inspection))
    .find((p) => p.success)?.data?.diagnosis;
  const code = await tx.transition.findFirst({
    where: { goalId, toState: "execute" },
    orderBy: { seq: "desc" },
  });
  const script =
    lastExec?.script ?? ((code?.detail as { code?: { source?: string } } | null)?.code?.source ?? null);
  // issue 27: a give-up's reason is on the tape row that declared it (into failed or awaiting_approval).
  const declared = reason === "declared_infeasible" ? transitions.map((t) => giveUpOf(t.detail)).find((g) => g !== null) : undefined;
  return {
    reason: reason as FailureReason,
    message,
    last_transitions: transitions.slice(0, LAST_TRANSITIONS).reverse().map(transitionRow),
    last_run: lastExec
      ? {
          attempt: lastExec.attempt,
          exit_code: lastExec.exitCode,
          timed_out: lastExec.timedOut,
          oom_killed: lastExec.oomKilled,
          stderr_tail: lastExec.stderr.slice(-TAIL),
        }
      : null,
    failing_checks: failing.map((c) => ({ id: c.checkId, message: c.message, ...flakyOf(c.flaky) })),
    last_diagnosis: diagnosis ?? null,
    last_script: script,
    ...(declared ? { infeasible: declared } : {}),
    ...extra,
  };
}

/** The give-up a tape row's detail records (issue 27), or null. */
export function giveUpOf(detail: unknown): { reason: string; declared_by: "inspector" | "refiner" } | null {
  const g = (detail as { infeasible?: { reason?: unknown; declared_by?: unknown } } | null)?.infeasible;
  if (!g || typeof g.reason !== "string" || (g.declared_by !== "inspector" && g.declared_by !== "refiner")) return null;
  return { reason: g.reason, declared_by: g.declared_by };
}

/** The goal's webhook as the API shows it (the column may also hold why it was disabled). */
function webhookView(webhook: unknown): GoalView["webhook"] {
  const w = webhook as { url?: unknown; payload?: unknown; disabled_at?: unknown } | null;
  if (!w || typeof w.url !== "string") return null;
  return { url: w.url, payload: w.payload === "thin" ? "thin" : "full", disabled_at: typeof w.disabled_at === "string" ? w.disabled_at : null };
}

/** A stored check result's flaky record ({runs, passed}), as the view shows it: absent when the runs agreed. */
function flakyOf(stored: unknown): { flaky?: CheckFlaky } {
  const parsed = checkFlaky.safeParse(stored);
  return parsed.success ? { flaky: parsed.data } : {};
}
