// INSPECT: the deterministic checks run first and are ground truth; then the inspector model judges the
// run knowing their results. The machine, not this handler, turns both into the next state.
import { applyVeto, inspectorRequest, RESULT_FILE } from "@loopsmith/agents";
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
    where: { goalId: goal.id, toState: "inspect" },
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
  return {
    event: { type: "INSPECTED", checksPassed, inspectorVerified: inspection.verified, attempts: attempt, maxAttempts: goal.maxAttempts },
    detail: { attempt, checks_passed: checksPassed, checks: checksDetail, inspection, inspector_overruled: overruled, result_file: RESULT_FILE },
    report,
    effects,
  };
};
