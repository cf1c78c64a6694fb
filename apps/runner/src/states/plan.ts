// PLAN: the planner turns the goal into a plan; the checks are frozen here (baseline + the client's,
// binding + the planner's additions) and stored with the plan.
import { freezeChecks, plannerRequest } from "@loopsmith/agents";
import { asJson } from "@loopsmith/db";
import { checkSpec } from "@loopsmith/schemas";
import { z } from "zod";
import type { StateHandler } from "./context";
import { loadInputSummaries } from "./evidence";
import { modelFailed, modelTurn } from "./model-call";

export const plan: StateHandler = async (ctx, deps) => {
  const { goal } = ctx;
  const clientChecks = z.array(checkSpec).parse(goal.checks);
  const req = plannerRequest({
    objective: goal.objective,
    success: goal.success,
    inputs: await loadInputSummaries(deps.prisma, goal.id),
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
    },
    effects: async (tx) => {
      await tx.plan.create({
        data: {
          goalId: goal.id,
          objective: turn.output.objective,
          approach: turn.output.approach,
          outputContract: turn.output.output_contract,
          checks: asJson(checks),
        },
      });
    },
  };
};
