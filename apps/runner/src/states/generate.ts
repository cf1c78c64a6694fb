// GENERATE: the generator writes the first complete program. The code rides on the tape row to execute.
import { generatorRequest } from "@loopsmith/agents";
import type { StateHandler } from "./context";
import { generatedCode, schedulePin, type Language } from "@loopsmith/schemas";
import { loadInputSummaries, loadPlan, loadWorkspace } from "./evidence";
import { candidatesDetail, sampled } from "./candidates";
import { modelFailed, modelTurn, modelTurns } from "./model-call";

export const generate: StateHandler = async (ctx, deps) => {
  // A schedule's tick with a pin: the program verified on an earlier tick runs first, with no model call.
  if (ctx.goal.pinned != null) {
    const pin = schedulePin.parse(ctx.goal.pinned);
    return { event: { type: "CODE_READY" }, detail: { code: generatedCode.parse(pin.code), pinned_from: pin.goal_id } };
  }
  const { plan, checks } = await loadPlan(deps.prisma, ctx.goal.id);
  const req = generatorRequest({
    plan,
    checks,
    inputs: await loadInputSummaries(deps.prisma, ctx.goal.id),
    deliverable: ctx.goal.deliverable,
    language: ctx.goal.language as Language,
    workspace: await loadWorkspace(deps.prisma, ctx.goal.id),
  });
  const n = ctx.goal.candidates;
  if (n <= 1) {
    const turn = await modelTurn(ctx, deps, req);
    if (!turn.ok) return modelFailed("generate", turn.error);
    return { event: { type: "CODE_READY" }, detail: { code: turn.output } };
  }
  // Best-of-N: N programs at once; EXECUTE runs and checks each. Only when every call failed is the turn a failure.
  const turns = await modelTurns(ctx, deps, req, n);
  const { outputs, errors } = sampled(turns);
  if (outputs.length === 0) return modelFailed("generate", errors[0]!.error);
  return { event: { type: "CODE_READY" }, detail: { code: outputs[0]!, ...candidatesDetail(outputs, errors, n) } };
};
