// Every model turn goes through here: it is recorded in model_calls (tokens, latency, request, response or
// error), and a response already stored for the same goal, state, attempt and request is reused instead
// of asking (and paying) again, which is what a retried step needs.
import { createHash } from "node:crypto";
import { errorCodeOf } from "@loopsmith/core";
import { Prisma } from "@loopsmith/db";
import { ModelOutputError, ModelUnavailableError, type LoopModel, type ModelRequest } from "@loopsmith/models";
import type { GoalContext, StepDeps } from "./context";

export type TurnOutcome<T> =
  | { ok: true; output: T; reused: boolean }
  | { ok: false; error: ModelTurnError };

export interface ModelTurnError {
  code: string;
  message: string;
  tries: number;
  rejected: unknown;
  status_code?: number | null;
}

export async function modelTurn<T>(ctx: GoalContext, deps: StepDeps, req: ModelRequest<T>): Promise<TurnOutcome<T>> {
  const { goal } = ctx;
  let model: LoopModel;
  try {
    model = ctx.model;
  } catch (e) {
    // This runner cannot build the goal's model (say, the provider is not configured here): asking
    // again will not change that.
    if (errorCodeOf(e) !== "LS_ERR_MODEL_DISABLED") throw e;
    return { ok: false, error: { code: "LS_ERR_MODEL_DISABLED", message: (e as Error).message, tries: 0, rejected: [] } };
  }
  const requestHash = createHash("sha256")
    .update(JSON.stringify([model.provider, model.modelName, req.schemaName, req.index, req.system, req.prompt]))
    .digest("hex");
  const key = { goalId: goal.id, state: req.turn, attempt: goal.attempts, requestHash };
  const prior = await deps.prisma.modelCall.findUnique({ where: { goalId_state_attempt_requestHash: key } });
  if (prior && prior.response !== null && prior.error === null) {
    const reused = req.schema.safeParse(prior.response);
    if (reused.success) return { ok: true, output: reused.data, reused: true };
  }

  const base = { ...key, provider: model.provider, model: model.modelName, request: { system: req.system, prompt: req.prompt } };
  try {
    const res = await model.complete(req);
    const row = {
      ...base,
      tokensIn: res.usage.inputTokens,
      tokensOut: res.usage.outputTokens,
      latencyMs: Math.round(res.latencyMs),
      response: res.output as Prisma.InputJsonValue,
      error: null,
    };
    await deps.prisma.modelCall.upsert({ where: { goalId_state_attempt_requestHash: key }, create: row, update: row });
    return { ok: true, output: res.output, reused: false };
  } catch (e) {
    // A provider that is down or busy (5xx, 429, network, timeout) fails the step, not the goal: the job
    // is retried with backoff. A schema failure after the bounded retries, or a request the provider
    // refuses outright (401, 404, 400...), is the goal's end, recorded on the tape.
    const permanent = e instanceof ModelUnavailableError && e.permanent;
    if (!(e instanceof ModelOutputError) && !permanent) throw e;
    const err = e as ModelOutputError | ModelUnavailableError;
    const row = {
      ...base,
      tokensIn: err.usage.inputTokens,
      tokensOut: err.usage.outputTokens,
      latencyMs: Math.round(err.latencyMs),
      response: Prisma.DbNull,
      error: err.message,
    };
    await deps.prisma.modelCall.upsert({ where: { goalId_state_attempt_requestHash: key }, create: row, update: row });
    return {
      ok: false,
      error:
        err instanceof ModelOutputError
          ? { code: errorCodeOf(err) ?? "LS_ERR_MODEL_OUTPUT", message: err.message, tries: err.tries, rejected: err.rejected }
          : { code: err.code, message: err.message, tries: 1, rejected: [], status_code: err.statusCode ?? null },
    };
  }
}

/** The step result for a model turn that failed its schema after the bounded retries. */
export function modelFailed(turn: string, error: ModelTurnError) {
  return { event: { type: "MODEL_FAILED" } as const, detail: { turn, model_error: error } };
}
