// Every model turn goes through here: it is recorded in model_calls (tokens, latency, request, response or
// error), and a response already stored for the same goal, state, attempt and request is reused instead
// of asking (and paying) again, which is what a retried step needs.
import { createHash, randomUUID } from "node:crypto";
import { errorCodeOf, type ModelCallOutcome } from "@loopsmith/core";
import { Prisma, sendStatement } from "@loopsmith/db";
import { costUsd, ModelOutputError, ModelUnavailableError, priceOf, type LoopModel, type ModelRequest } from "@loopsmith/models";
import { MODEL_CALL_RESERVED, POSSIBLY_BILLED, storedBudgets } from "@loopsmith/schemas";
import { StepStop, type GoalContext, type StepDeps } from "./context";

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

/** Runs `fn` after every function handed to it before has settled. */
type Serial = <R>(fn: () => Promise<R>) => Promise<R>;

/**
 * Best-of-N: the turn's `n` candidates asked at once. Their budget checks and reservations take turns, each
 * seeing the reservations before it, so N concurrent calls pass a cap by no more than one call can.
 */
export async function modelTurns<T>(ctx: GoalContext, deps: StepDeps, req: ModelRequest<T>, n: number): Promise<TurnOutcome<T>[]> {
  let tail: Promise<unknown> = Promise.resolve();
  const serial: Serial = (fn) => {
    const run = tail.then(fn);
    tail = run.catch(() => undefined);
    return run;
  };
  return Promise.all(Array.from({ length: n }, (_, i) => modelTurn(ctx, deps, i === 0 ? req : { ...req, candidate: i }, serial)));
}

export async function modelTurn<T>(ctx: GoalContext, deps: StepDeps, req: ModelRequest<T>, serial?: Serial): Promise<TurnOutcome<T>> {
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
    // A further candidate (best-of-N) is a call of its own; the first keeps the hash calls always had.
    .update(JSON.stringify([model.provider, model.modelName, req.schemaName, req.index, req.system, req.prompt, ...(req.candidate ? [req.candidate] : [])]))
    .digest("hex");
  const key = { goalId: goal.id, state: req.turn, attempt: goal.attempts, requestHash };
  // A lone call reads what the goal spent beside its own earlier row (one round trip of waiting, not two);
  // best-of-N's calls read it in turn, each after the reservations before it.
  let spentNow = serial ? undefined : spentBefore(deps, key);
  spentNow?.catch(() => undefined);
  const prior = await priorCall(deps, key);
  if (prior && prior.response !== null && prior.error === null) {
    const reused = req.schema.safeParse(prior.response);
    if (reused.success) return { ok: true, output: reused.data, reused: true };
  }
  if (prior && prior.error === RESERVED) {
    await keepPossiblyBilled(deps, prior.id, key.requestHash);
    // Moved aside, the reservation counts as spent: read again with it.
    if (!serial) spentNow = spentBefore(deps, key);
  }

  // Provenance on every row (reservation, answer, error): which prompts this call sent, by hash.
  const base = {
    ...key,
    provider: model.provider,
    model: model.modelName,
    systemSha256: sha256(req.system),
    promptSha256: sha256(req.prompt),
    request: { system: req.system, prompt: req.prompt },
  };
  const price = priceOf(model.provider, model.modelName, deps.config);
  if (serial) await serial(async () => reserve(ctx, deps, req, key, base, price, await spentBefore(deps, key)));
  else await reserve(ctx, deps, req, key, base, price, await spentNow!);
  try {
    const res = await model.complete(req);
    const answer = {
      tokensIn: res.usage.inputTokens,
      tokensOut: res.usage.outputTokens,
      costUsd: costUsd(price, res.usage),
      latencyMs: Math.round(res.latencyMs),
      response: res.output as Prisma.InputJsonValue,
      error: null,
    };
    // The reservation row carries the request already: the answer settles it without sending the prompt
    // again. Should that row be gone (moved aside meanwhile), the answer is written whole.
    const settled = await settle(deps, key, answer);
    if (settled === 0) {
      const row = { ...base, ...answer };
      await deps.prisma.modelCall.upsert({ where: { goalId_state_attempt_requestHash: key }, create: row, update: row });
    }
    report(deps, { ...base, ...answer }, "ok");
    return { ok: true, output: res.output, reused: false };
  } catch (e) {
    // A provider that is down or busy (5xx, 429, network, timeout) fails the step, not the goal: the job
    // is retried with backoff. A schema failure after the bounded retries, or a request the provider
    // refuses outright (401, 404, 400...), is the goal's end, recorded on the tape.
    const permanent = e instanceof ModelUnavailableError && e.permanent;
    if (!(e instanceof ModelOutputError) && !permanent) {
      // Settle the reservation: nothing came back, so nothing is counted. The step is retried.
      const settled = { ...base, tokensIn: 0, tokensOut: 0, costUsd: 0, latencyMs: 0, response: Prisma.DbNull, error: `unavailable: ${(e as Error).message}`.slice(0, 2000) };
      await deps.prisma.modelCall.upsert({ where: { goalId_state_attempt_requestHash: key }, create: settled, update: settled }).catch(() => undefined);
      report(deps, settled, "unavailable");
      throw e;
    }
    const err = e as ModelOutputError | ModelUnavailableError;
    const row = {
      ...base,
      tokensIn: err.usage.inputTokens,
      tokensOut: err.usage.outputTokens,
      costUsd: costUsd(price, err.usage),
      latencyMs: Math.round(err.latencyMs),
      response: Prisma.DbNull,
      error: err.message,
    };
    await deps.prisma.modelCall.upsert({ where: { goalId_state_attempt_requestHash: key }, create: row, update: row });
    report(deps, row, err instanceof ModelOutputError ? "output_error" : "unavailable");
    return {
      ok: false,
      error:
        err instanceof ModelOutputError
          ? { code: errorCodeOf(err) ?? "LS_ERR_MODEL_OUTPUT", message: err.message, tries: err.tries, rejected: err.rejected }
          : { code: err.code, message: err.message, tries: 1, rejected: [], status_code: err.statusCode ?? null },
    };
  }
}

const RESERVED = MODEL_CALL_RESERVED;

/** A call as recorded in model_calls, to the metrics (where it is recorded, so the two agree). */
function report(deps: StepDeps, row: { provider: string; model: string; tokensIn: number; tokensOut: number; costUsd: number; latencyMs: number }, outcome: ModelCallOutcome): void {
  deps.metrics?.modelCall({ provider: row.provider, model: row.model, outcome, seconds: row.latencyMs / 1000, tokensIn: row.tokensIn, tokensOut: row.tokensOut, costUsd: row.costUsd });
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * A reservation still unsettled when the step runs again was left by a try whose runner died mid-call
 * (or lost its lock): the request may have reached the provider, which bills what it answered even if
 * nobody read the answer. Reserving again under the same key would overwrite it and the call would vanish
 * from the ledger; instead it moves aside under its own key, keeping its estimate counted in the totals
 * and the budget, and says so. Conditional on the text, so that of two runners only one moves it.
 */
async function keepPossiblyBilled(deps: StepDeps, id: string, requestHash: string): Promise<void> {
  await deps.prisma.modelCall.updateMany({
    where: { id, error: RESERVED },
    data: {
      requestHash: `${requestHash}:possibly-billed:${id}`,
      error: `${POSSIBLY_BILLED}: the runner making this call stopped before the answer came back; the provider may have charged it, so its reserved estimate stays counted`,
    },
  });
}

type CallKey = { goalId: string; state: string; attempt: number; requestHash: string };
// A turn's own statements go to Postgres directly (sendStatement), not through Prisma's client: they are
// most of a step's statements, and Prisma's client keeps its last hundred calls' arguments, the prompts
// among them.
const KEY_SQL = `goal_id = $1::uuid AND state = $2::text AND attempt = $3::int AND request_hash = $4::text`;
const keyParams = (k: CallKey) => [k.goalId, k.state, k.attempt, k.requestHash];

/** This call's own row, from an earlier try of the step (an answer to reuse, or a reservation left behind). */
async function priorCall(deps: StepDeps, key: CallKey) {
  const [row] = await sendStatement<{ id: string; response: unknown; error: string | null }>(deps.prisma, `SELECT id::text, response, error FROM model_calls WHERE ${KEY_SQL}`, keyParams(key));
  return row ?? null;
}

/** What the goal's model calls spent (reserved or answered), but this call's own earlier row. */
async function spentBefore(deps: StepDeps, key: CallKey): Promise<{ tokens: number; usd: number }> {
  // This call's own earlier reservation (a retried step) is replaced, not added to.
  const [row] = await sendStatement<{ tokens: number; usd: number }>(
    deps.prisma,
    `SELECT coalesce(sum(tokens_in + tokens_out), 0)::float8 AS tokens, coalesce(sum(cost_usd), 0)::float8 AS usd
       FROM model_calls WHERE goal_id = $1::uuid AND NOT (${KEY_SQL})`,
    keyParams(key),
  );
  return row!;
}

/** Settles the call's reservation with its answer; how many rows it settled (0: the row was moved aside). */
async function settle(deps: StepDeps, key: CallKey, answer: { tokensIn: number; tokensOut: number; costUsd: number; latencyMs: number; response: Prisma.InputJsonValue }): Promise<number> {
  const rows = await sendStatement<{ id: string }>(
    deps.prisma,
    `UPDATE model_calls SET tokens_in = $5::int, tokens_out = $6::int, cost_usd = $7::float8, latency_ms = $8::int, response = $9::jsonb, error = NULL
      WHERE ${KEY_SQL} RETURNING id::text`,
    [...keyParams(key), answer.tokensIn, answer.tokensOut, answer.costUsd, answer.latencyMs, JSON.stringify(answer.response)],
  );
  return rows.length;
}

/**
 * Before a model call: stop at the approval threshold or a cap the call could cross, else reserve the
 * call's estimate (a model_calls row without a response, counted as spent) so that a goal overshoots a
 * cap by at most what one call exceeds its estimate. The real figures replace the estimate after the call;
 * a runner that dies mid-call leaves the reservation counted, which errs on the side of the cap.
 */
async function reserve(
  ctx: GoalContext,
  deps: StepDeps,
  req: ModelRequest<unknown>,
  key: { goalId: string; state: string; attempt: number; requestHash: string },
  base: Record<string, unknown>,
  price: ReturnType<typeof priceOf>,
  spent: { tokens: number; usd: number },
): Promise<void> {
  const { goal } = ctx;
  const budgets = storedBudgets(goal.budgets, goal.maxAttempts);
  const usedTokens = spent.tokens;
  const usedUsd = spent.usd;
  const estimateIn = Math.ceil((req.system.length + req.prompt.length) / 4);
  const estimateOut = deps.config.MODEL_OUTPUT_TOKENS_ESTIMATE;
  const estimateUsd = costUsd(price, { inputTokens: estimateIn, outputTokens: estimateOut });
  const facts = {
    turn: req.turn,
    tokens_used: usedTokens,
    tokens_estimate: estimateIn + estimateOut,
    max_tokens: budgets.max_tokens,
    cost_usd_used: usedUsd,
    cost_usd_estimate: estimateUsd,
    max_cost_usd: budgets.max_cost_usd,
  };
  if (budgets.approval_threshold_usd !== null && usedUsd + estimateUsd > budgets.approval_threshold_usd)
    throw new StepStop({ type: "APPROVAL_NEEDED" }, { ...facts, approval_threshold_usd: budgets.approval_threshold_usd });
  if (usedTokens + estimateIn + estimateOut > budgets.max_tokens)
    throw new StepStop(
      { type: "BUDGET_EXHAUSTED", reason: "budget_tokens" },
      facts,
      `The next ${req.turn} call (estimated ${estimateIn + estimateOut} tokens) would take the goal past its ${budgets.max_tokens}-token budget (${usedTokens} used).`,
    );
  if (usedUsd + estimateUsd > budgets.max_cost_usd)
    throw new StepStop(
      { type: "BUDGET_EXHAUSTED", reason: "budget_cost" },
      facts,
      `The next ${req.turn} call (estimated $${estimateUsd.toFixed(4)}) would take the goal past its $${budgets.max_cost_usd} budget ($${usedUsd.toFixed(4)} spent).`,
    );
  const row = base as { provider: string; model: string; systemSha256: string; promptSha256: string; request: Prisma.InputJsonValue };
  // As Prisma's upsert wrote it: a new row with its id and the time (the real clock, as Prisma's default:
  // the receipt orders calls by it), or this call's earlier row overwritten (its id and time kept).
  await sendStatement(
    deps.prisma,
    `INSERT INTO model_calls (id, goal_id, state, attempt, request_hash, provider, model, system_sha256, prompt_sha256, request,
        tokens_in, tokens_out, cost_usd, latency_ms, response, error, created_at)
      VALUES ($5::uuid, $1::uuid, $2::text, $3::int, $4::text, $6::text, $7::text, $8::text, $9::text, $10::jsonb, $11::int, $12::int, $13::float8, 0, NULL, $14::text, $15::timestamptz)
      ON CONFLICT (goal_id, state, attempt, request_hash) DO UPDATE SET provider = EXCLUDED.provider, model = EXCLUDED.model,
        system_sha256 = EXCLUDED.system_sha256, prompt_sha256 = EXCLUDED.prompt_sha256, request = EXCLUDED.request, tokens_in = EXCLUDED.tokens_in,
        tokens_out = EXCLUDED.tokens_out, cost_usd = EXCLUDED.cost_usd, latency_ms = 0, response = NULL, error = EXCLUDED.error`,
    [...keyParams(key), randomUUID(), row.provider, row.model, row.systemSha256, row.promptSha256, JSON.stringify(row.request), estimateIn, estimateOut, estimateUsd, RESERVED, new Date()],
  );
}

/** The step result for a model turn that failed its schema after the bounded retries. */
export function modelFailed(turn: string, error: ModelTurnError) {
  return { event: { type: "MODEL_FAILED" } as const, detail: { turn, model_error: error } };
}
