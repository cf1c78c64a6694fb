// INSPECT: the deterministic checks run first and are ground truth; then the inspector model judges the
// run knowing their results. The machine, not this handler, turns both into the next state.
import { applyVeto, errorClass, inspectorRequest, outcomeHash, RESULT_FILE, stuckHashes } from "@loopsmith/agents";
import type { Tx } from "@loopsmith/db";
import { runChecks } from "@loopsmith/verifier";
import type { StateHandler } from "./context";
import { loadExecution, loadPlan, runSummary } from "./evidence";
import { modelFailed, modelTurn } from "./model-call";

export const inspect: StateHandler = async (ctx, deps) => {
  const { goal } = ctx;
  const attempt = goal.attempts;
  const { plan, checks } = await loadPlan(deps.prisma, goal.id);
  const exec = await loadExecution(deps.prisma, goal.id, attempt);
  const artifactErrors = ((await deps.prisma.transition.findFirst({
    where: { goalId: goal.id, fromState: "execute", toState: "inspect" },
    orderBy: { seq: "desc" },
  }))?.detail as { artifact_errors?: string[] } | undefined)?.artifact_errors ?? [];

  const outcomes = runChecks(checks, {
    exitCode: exec.exitCode,
    timedOut: exec.timedOut,
    oomKilled: exec.oomKilled,
    stderr: exec.stderr,
    artifacts: exec.artifactFiles.map((a) => ({ name: a.name, content: Buffer.from(a.content) })),
    artifactErrors,
  });
  const checksPassed = outcomes.every((o) => o.passed);
  const run = runSummary(exec);

  const turn = await modelTurn(ctx, deps, inspectorRequest({ plan, success: goal.success, checks, outcomes, run }));
  const effects = async (tx: Tx) => {
    await tx.checkResult.createMany({
      data: outcomes.map((o) => ({
        goalId: goal.id,
        executionId: exec.id,
        attempt,
        checkId: o.id,
        params: o.params as object,
        passed: o.passed,
        message: o.message,
      })),
    });
  };
  const checksDetail = outcomes.map((o) => ({ id: o.id, passed: o.passed, message: o.message }));
  if (!turn.ok) return { ...modelFailed("inspect", turn.error), detail: { attempt, checks: checksDetail, model_error: turn.error }, effects };

  const { inspection, overruled } = applyVeto(turn.output, outcomes);
  const report = checksPassed && inspection.verified && run.result !== null ? (JSON.parse(run.result) as unknown) : undefined;

  // The progress guard: this attempt's outcome against the earlier ones on the tape.
  const hash = outcomeHash({
    script: exec.script,
    failingChecks: outcomes.filter((o) => !o.passed).map((o) => o.id),
    errorClass: errorClass(exec),
  });
  const earlier = await deps.prisma.transition.findMany({
    where: { goalId: goal.id, fromState: "inspect", toState: { in: ["refine", "failed", "verified"] } },
    orderBy: { seq: "asc" },
    select: { detail: true },
  });
  const previous = earlier
    .map((t) => (t.detail as { outcome_hash?: unknown }).outcome_hash)
    .filter((h): h is string => typeof h === "string");
  const repeating = checksPassed && inspection.verified ? null : stuckHashes(previous, hash, deps.config.STUCK_REPEATS, deps.config.STUCK_WINDOW);
  return {
    event: {
      type: "INSPECTED",
      checksPassed,
      inspectorVerified: inspection.verified,
      attempts: attempt,
      maxAttempts: goal.maxAttempts,
      stuck: repeating !== null,
    },
    detail: {
      attempt,
      checks_passed: checksPassed,
      checks: checksDetail,
      inspection,
      inspector_overruled: overruled,
      result_file: RESULT_FILE,
      outcome_hash: hash,
    },
    report,
    effects,
    failure: repeating
      ? {
          message: `The same outcome (${hash}: same script, same failing checks, same error) came back ${repeating.length} times in the last ${deps.config.STUCK_WINDOW} attempts.`,
          extra: { stuck_hashes: repeating },
        }
      : {
          message: `${attempt} of ${goal.maxAttempts} attempts used without passing every check.`,
        },
  };
};
