// Every model turn goes through here: it is recorded in model_calls (tokens, latency, request, response or
// error), and a response already stored for the same goal, state, attempt and request is reused instead
// of asking (and paying) again, which is what a retried step needs.
import { createHash } from "node:crypto";
import { errorCodeOf } from "@loopsmith/core";
import { Prisma } from "@loopsmith/db";
import { ModelOutputError, type ModelRequest } from "@loopsmith/models";
import type { GoalContext, StepDeps } from "./context";

export type TurnOutcome<T> =
  | { ok: true; output: T; reused: boolean }
  | { ok: false; error: { code: string; message: string; tries: number; rejected: unknown } };

export async function modelTurn<T>(ctx: GoalContext, deps: StepDeps, req: ModelRequest<T>): Promise<TurnOutcome<T>> {
  const { goal, model } = ctx;
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
    if (!(e instanceof ModelOutputError)) throw e; // provider down, timeouts: the job is retried
    const row = {
      ...base,
      tokensIn: e.usage.inputTokens,
      tokensOut: e.usage.outputTokens,
      latencyMs: Math.round(e.latencyMs),
      response: Prisma.DbNull,
      error: e.message,
    };
    await deps.prisma.modelCall.upsert({ where: { goalId_state_attempt_requestHash: key }, create: row, update: row });
    return {
      ok: false,
      error: { code: errorCodeOf(e) ?? "LS_ERR_MODEL_OUTPUT", message: e.message, tries: e.tries, rejected: e.rejected },
    };
  }
}

/** The step result for a model turn that failed its schema after the bounded retries. */
export function modelFailed(turn: string, error: { code: string; message: string; tries: number; rejected: unknown }) {
  return { event: { type: "MODEL_FAILED" } as const, detail: { turn, model_error: error } };
}
