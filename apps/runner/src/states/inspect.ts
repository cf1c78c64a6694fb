// INSPECT: the deterministic checks run first and are ground truth; then the inspector model judges the
// run knowing their results. The machine, not this handler, turns both into the next state.
import { applyVeto, errorClass, inspectorRequest, outcomeHash, stuckHashes } from "@loopsmith/agents";
import { checkResultRow } from "@loopsmith/db";
import { jsonDepth, parseJsonExact } from "@loopsmith/verifier";
import { workspaceEvidence } from "./attempt";
import { loadCheckRuns } from "./check-runs";
import type { StateHandler } from "./context";
import { loadExecution, loadLatestAttempt, runSummary } from "./evidence";
import { modelFailed, modelTurn } from "./model-call";

export const inspect: StateHandler = async (ctx, deps) => {
  const { goal } = ctx;
  const attempt = goal.attempts;
  // Side by side: a step's reads are independent round trips (issue 29).
  const [{ plan, checks }, exec, inputs, checkerFiles, runs, { code, ran }, workspace, earlier] = await Promise.all([
    deps.material.plan(goal.id),
    loadExecution(deps.prisma, goal.id, attempt),
    deps.material.inputs(goal.id),
    deps.material.checkerFiles(goal.id),
    loadCheckRuns(deps.prisma, goal.id, attempt),
    loadLatestAttempt(deps.prisma, goal.id),
    deps.material.workspace(goal.id),
    // The progress guard's history: earlier attempts' outcomes on the tape.
    deps.prisma.transition.findMany({
      // awaiting_approval: an attempt whose give-up the client overruled (a spending pause has no hash).
      where: { goalId: goal.id, fromState: "inspect", toState: { in: ["refine", "failed", "verified", "awaiting_approval"] } },
      orderBy: { seq: "asc" },
      select: { detail: true },
    }),
  ]);
  // What EXECUTE could not collect, from the row that moved the goal here.
  const artifactErrors = (ran as { artifact_errors?: string[] } | undefined)?.artifact_errors ?? [];
  // issue 14: what the attempt changed in the workspace (command checks fail an edit of a locked file).
  const changed = workspaceEvidence(workspace, code);
  // Off the event loop, each check under its time limit (see the verifier's pool).
  const outcomes = await deps.checks.run(
    checks,
    {
      exitCode: exec.exitCode,
      timedOut: exec.timedOut,
      oomKilled: exec.oomKilled,
      stdout: exec.stdout,
      stderr: exec.stderr,
      durationMs: exec.durationMs,
      artifacts: exec.artifactFiles.map((a) => ({ name: a.name, content: Buffer.from(a.content) })),
      artifactErrors,
      inputs,
      checkerFiles,
      program: { filename: code.filename, source: exec.script },
      runs: [],
      ...(changed ? { workspace: changed } : {}),
    },
    (i) => runs.get(i) ?? [],
  );
  const checksPassed = outcomes.every((o) => o.passed);
  const run = runSummary(exec, goal.deliverable);

  // A schedule's pinned program on its first run, every check passed and none left to judgement: the
  // verdict is the checks' alone, with no model asked (a failure goes to the inspector as usual).
  const pinnedHeld = goal.pinned != null && attempt === 1 && checksPassed && checks.every((c) => c.kind === "deterministic");
  const turn = pinnedHeld
    ? { ok: true as const, output: { verified: true, failing_checks: [] as string[], diagnosis: "The pinned program passed every check on this tick's inputs; no model was asked.", fix_hint: "", infeasible: null } }
    : await modelTurn(ctx, deps, inspectorRequest({ plan, success: goal.success, checks, outcomes, run }));
  const rows = outcomes.map((o) =>
    checkResultRow({
      goalId: goal.id,
      executionId: exec.id,
      attempt,
      checkId: o.id,
      params: o.params,
      passed: o.passed,
      message: o.message,
      feedback: o.feedback,
      hidden: o.hidden,
      findings: o.findings,
      flaky: o.flaky ?? null,
    }),
  );
  const checksDetail = outcomes.map((o) => ({ id: o.id, passed: o.passed, message: o.message, ...(o.hidden ? { hidden: true } : {}), ...(o.flaky ? { flaky: o.flaky } : {}) }));
  if (!turn.ok) return { ...modelFailed("inspect", turn.error), detail: { attempt, checks: checksDetail, model_error: turn.error }, rows };

  const { inspection, overruled } = applyVeto(turn.output, outcomes);
  const giveUp = inspection.infeasible ?? null;
  const report = checksPassed && inspection.verified && !giveUp ? storableReport(goal.deliverable, run.deliverable?.text ?? null) : undefined;

  // The progress guard: this attempt's outcome against the earlier ones on the tape.
  const hash = outcomeHash({
    script: exec.script,
    failingChecks: outcomes.filter((o) => !o.passed).map((o) => o.id),
    errorClass: errorClass(exec),
  });
  const previous = earlier
    .map((t) => (t.detail as { outcome_hash?: unknown }).outcome_hash)
    .filter((h): h is string => typeof h === "string");
  const repeating = checksPassed && inspection.verified ? null : stuckHashes(previous, hash, deps.config.STUCK_REPEATS, deps.config.STUCK_WINDOW);
  const detail = {
    attempt,
    checks_passed: checksPassed,
    checks: checksDetail,
    inspection,
    inspector_overruled: overruled,
    deliverable: goal.deliverable,
    outcome_hash: hash,
    ...(pinnedHeld ? { pinned: true } : {}),
  };
  // issue 27: a give-up goes to the machine as what it is, whatever else the inspection says (a
  // "verified" beside it included): the machine ends the goal or asks the client, never verifies it.
  if (giveUp) {
    return {
      event: { type: "DECLARED_INFEASIBLE", onInfeasible: goal.onInfeasible === "ask" ? "ask" : "fail", attemptsLeft: attempt < goal.maxAttempts },
      detail: { ...detail, infeasible: { reason: giveUp.reason, declared_by: "inspector" } },
      rows,
      failure: { message: `The inspector declared the goal infeasible: ${giveUp.reason}` },
    };
  }
  return {
    event: {
      type: "INSPECTED",
      checksPassed,
      inspectorVerified: inspection.verified,
      attempts: attempt,
      maxAttempts: goal.maxAttempts,
      stuck: repeating !== null,
    },
    detail,
    report,
    rows,
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

/**
 * The verified JSON deliverable, for the goal's report column. Bounded: a document nested past what JSON
 * columns (and Prisma's serialiser) take is left out of the column; the view reads the stored artifact.
 */
function storableReport(deliverable: string | null, text: string | null): unknown {
  if (deliverable === null || !deliverable.endsWith(".json") || text === null) return undefined;
  const parsed = parseJsonExact(text);
  if (!parsed.ok || jsonDepth(parsed.value, 64) > 64) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
