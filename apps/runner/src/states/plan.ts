// PLAN: first the evaluator's self-test (no model involved: can the baseline and the client's checks tell
// right from wrong?), then the planner turns the goal into a plan; the checks are frozen here (baseline +
// the client's, binding + the planner's additions) and stored with the plan.
import { freezeChecks, plannerRequest } from "@loopsmith/agents";
import { planRow } from "@loopsmith/db";
import { checkSpec, frozenCheck, schedulePin, selfTestSpec, storedBudgets } from "@loopsmith/schemas";
import { z } from "zod";
import type { StateHandler } from "./context";
import { runSelfTest } from "./self-test";
import { inputSummaries } from "./material";
import { modelFailed, modelTurn } from "./model-call";

export const plan: StateHandler = async (ctx, deps) => {
  const { goal } = ctx;
  const clientChecks = z.array(checkSpec).parse(goal.checks);
  // Before any model call, so that a definition of done that cannot fail costs nothing. The planner's
  // additions can only make it stricter, so the client's checks are what must be able to say no.
  const selfTest = await runSelfTest(deps, {
    checks: freezeChecks(clientChecks, [], goal.deliverable).checks,
    fixtures: goal.selfTest === null ? null : selfTestSpec.parse(goal.selfTest),
    inputs: await deps.material.inputs(goal.id),
    checkerFiles: await deps.material.checkerFiles(goal.id),
    timeoutMs: storedBudgets(goal.budgets, goal.maxAttempts).execution_timeout_seconds * 1000,
    signal: ctx.signal,
  });
  if (!selfTest.ok) {
    return { event: { type: "EVALUATOR_REJECTED" }, detail: { self_test: selfTest }, failure: { message: selfTest.message } };
  }
  // A schedule's tick with a pin: the plan the pinned program was verified under, with no model call.
  if (goal.pinned != null) {
    const pin = schedulePin.parse(goal.pinned);
    const checks = z.array(frozenCheck).parse(pin.plan.checks);
    return {
      event: { type: "PLANNED" },
      detail: { pinned_from: pin.goal_id, approach: pin.plan.approach, checks: checks.map((c) => c.id), feedback: goal.feedback, self_test: selfTest },
      rows: [planRow({ goalId: goal.id, objective: pin.plan.objective, approach: pin.plan.approach, outputContract: String(pin.plan.output_contract), checks })],
    };
  }
  const req = plannerRequest({
    objective: goal.objective,
    success: goal.success,
    inputs: await inputSummaries(deps, goal.id),
    clientChecks,
    deliverable: goal.deliverable,
  });
  const turn = await modelTurn(ctx, deps, req);
  if (!turn.ok) return modelFailed("plan", turn.error);

  const { checks, dropped } = freezeChecks(clientChecks, turn.output.checks, goal.deliverable);
  return {
    event: { type: "PLANNED" },
    detail: {
      provider: ctx.model.provider,
      model: ctx.model.modelName,
      approach: turn.output.approach,
      checks: checks.map((c) => c.id),
      ...(dropped.length > 0 ? { dropped_checks: dropped } : {}),
      feedback: goal.feedback,
      self_test: selfTest,
    },
    rows: [planRow({ goalId: goal.id, objective: turn.output.objective, approach: turn.output.approach, outputContract: turn.output.output_contract, checks })],
  };
};
