// GENERATE: the generator writes the first complete program. The code rides on the tape row to execute.
import { generatorRequest } from "@loopsmith/agents";
import type { StateHandler } from "./context";
import { generatedCode, schedulePin, type Language } from "@loopsmith/schemas";
import { inputSummaries } from "./material";
import { candidatesDetail, sampled } from "./candidates";
import { modelFailed, modelTurns } from "./model-call";

export const generate: StateHandler = async (ctx, deps) => {
  // A schedule's tick with a pin: the program verified on an earlier tick runs first, with no model call.
  if (ctx.goal.pinned != null) {
    const pin = schedulePin.parse(ctx.goal.pinned);
    return { event: { type: "CODE_READY" }, detail: { code: generatedCode.parse(pin.code), pinned_from: pin.goal_id } };
  }
  // Side by side: a step's reads are independent round trips (issue 29).
  const [{ plan, checks }, inputs, workspace] = await Promise.all([
    deps.material.plan(ctx.goal.id),
    inputSummaries(deps, ctx.goal.id),
    deps.material.workspace(ctx.goal.id),
  ]);
  const req = generatorRequest({ plan, checks, inputs, deliverable: ctx.goal.deliverable, language: ctx.goal.language as Language, workspace });
  // Best-of-N: N programs at once (one for most goals); EXECUTE runs and checks each. Only when every call
  // failed is the turn a failure.
  const n = ctx.goal.candidates;
  const { outputs, errors } = sampled(await modelTurns(ctx, deps, req, n));
  if (outputs.length === 0) return modelFailed("generate", errors[0]!.error);
  return { event: { type: "CODE_READY" }, detail: { code: outputs[0]!, ...candidatesDetail(outputs, errors, n) } };
};
