// One step of one goal: load it, check the job is not stale, run the handler of its state, let the machine
// pick the next state, write the move (CAS + tape + evidence in one statement), schedule what follows.
import { errorCodeOf, isPostgresError, publicError } from "@loopsmith/core";
import { advanceGoal, asJson, tapeHash, type Goal, type PrismaClient } from "@loopsmith/db";
import { isState, isTerminal, transition, WORKING_STATES, type Move, type State } from "@loopsmith/machine";
import type { LoopModel } from "@loopsmith/models";
import { storable } from "@loopsmith/sandbox";
import { modelSpec, storedBudgets, type GoalJob } from "@loopsmith/schemas";
import { announceMove, eventForState } from "@loopsmith/webhooks";
import type { ReceiptSigner } from "./receipt-key";
import { issueReceipt } from "./receipt";
import { pinVerified } from "./ticks";
import { HANDLERS, StepStop, type StepDeps, type StepResult } from "./states";

export type StepOutcome =
  | { done: false; skipped: "missing" | "stale" | "terminal" | "errored"; state?: string }
  | { done: true; from: string; to: string; version: number };

export interface StepRunnerDeps extends StepDeps {
  /** Schedules a step of the goal (later, with delayMs: the approval timeout). */
  enqueue: (job: GoalJob, delayMs?: number) => Promise<void>;
  /** Queues the webhook deliveries a move created (after the commit). */
  deliver: (goalId: string) => Promise<void>;
  approvalTimeoutMs: number;
  /** How often a running step checks that its goal has not moved on (been cancelled). */
  watchIntervalMs?: number;
  /** Testing hook: called after a move is committed, before anything is scheduled. */
  afterCommit?: (move: Move) => void;
  /** Signs the receipt of each move to verified (a runner always has one; bare step tests may not). */
  receipts?: ReceiptSigner;
}

const isWorking = (s: string) => (WORKING_STATES as readonly string[]).includes(s);

/** `loaded`: the job's goal, read by the caller just before (the tenant's admission reads it too). */
export async function runStep(deps: StepRunnerDeps, job: GoalJob, loaded?: Goal | null): Promise<StepOutcome> {
  const goal = loaded !== undefined ? loaded : await deps.prisma.goal.findUnique({ where: { id: job.goalId } });
  if (!goal) return { done: false, skipped: "missing" };
  if (!isState(goal.state) || isTerminal(goal.state)) return { done: false, skipped: "terminal", state: goal.state };
  // A job scheduled from an older version already happened (or was superseded): doing it again would
  // duplicate a tape row. A job from a newer version than the goal cannot exist.
  if (goal.version !== job.version) {
    // One step ahead: this job's move was written but scheduling what follows may have failed (this is a
    // redelivery after a crash). Scheduling again is harmless: job ids are per version and deliveries
    // per id, so BullMQ keeps one of each.
    if (goal.version === job.version + 1) await scheduleAfter(deps, goal, goal.state, goal.version);
    return { done: false, skipped: "stale", state: goal.state };
  }
  if (goal.state === "errored") return { done: false, skipped: "errored", state: goal.state };

  const state = goal.state as keyof typeof HANDLERS;
  // Built on first use: EXECUTE needs no model, and a model that cannot be built is a model failure of
  // the step that asked for it (see modelTurn), not a crash of every step.
  let model: LoopModel | undefined;
  const abort = new AbortController();
  const ctx = {
    goal,
    signal: abort.signal,
    get model() {
      return (model ??= deps.models(modelSpec.parse(goal.model)));
    },
  };
  // When the goal entered this state, for the time-in-state histogram: the move's own update of the row
  // (advanceGoal's CAS sets updated_at in the transaction that writes the tape row; a webhook receiver
  // disabled by a 410 is the one other write to the row, which makes that state's observation shorter).
  const enteredAt = goal.updatedAt;
  const watcher = watchForMove(deps.prisma, goal, abort, deps.watchIntervalMs ?? 1000);
  // The commit chains its tape row to this one: read beside the handler's work, not after it (issue 29).
  const prevHash = tapeHash(deps.prisma, goal.id, goal.version);
  prevHash.catch(() => undefined); // awaited by the commit; a handler that throws first leaves it unread
  let result: StepResult;
  const began = performance.now();
  try {
    result = wallClockExceeded(goal, deps.now()) ?? (await HANDLERS[state](ctx, deps));
  } catch (e) {
    if (!(e instanceof StepStop)) throw e;
    result = { event: e.event, detail: e.detail, failure: e.failureMessage ? { message: e.failureMessage } : undefined };
  } finally {
    clearInterval(watcher);
  }
  const handled = performance.now();
  const move = transition(state, result.event);
  const commit = (r: Omit<StepResult, "event">) =>
    advanceGoal(deps.prisma, {
      goalId: goal.id,
      fromVersion: goal.version,
      from: move.from,
      to: move.to,
      detail: asJson(r.detail),
      reason: move.reason,
      at: deps.now(),
      patch: {
        ...(r.attempts !== undefined ? { attempts: r.attempts } : {}),
        ...(move.to === "verified" ? { verified: true, report: r.report as object } : {}),
      },
      failure: r.failure,
      rows: r.rows,
      prevHash,
      // Only a move that ends the goal or asks its client has writes beyond its rows (most moves are one statement).
      effects:
        move.to === "verified" || eventForState(move.to, goal)
          ? async (tx) => {
              // After the step's rows (the check results) and before the webhook, which carries the receipt.
              if (move.to === "verified" && deps.receipts) await issueReceipt(tx, goal.id, deps.receipts, deps.now());
              // A schedule's verified goal: its program is what the schedule's next tick runs first.
              if (move.to === "verified") await pinVerified(tx, goal, deps.now());
              await announceMove(tx, goal, move.to);
            }
          : undefined,
    });

  try {
    let version: number;
    try {
      ({ version } = await commit(result));
    } catch (e) {
      // Evidence the database refuses as data would be refused on every retry, and retrying EXECUTE
      // means running the (possibly hostile) program again: record the move once, without that evidence.
      const why = result.degraded ? dataRefusal(e) : undefined;
      if (why === undefined) throw e;
      deps.log.warn({ goalId: goal.id, from: move.from, to: move.to, why }, "evidence refused by the database: committing the move without it");
      ({ version } = await commit(result.degraded!(why)));
    }
    const committed = performance.now();
    deps.log.info({ goalId: goal.id, from: move.from, to: move.to, version }, "goal moved");
    const ended = move.to === "verified" || move.to === "failed" || move.to === "cancelled";
    deps.metrics?.goalMoved({
      from: move.from,
      to: move.to,
      reason: move.reason,
      secondsInState: (deps.now().getTime() - enteredAt.getTime()) / 1000,
      ...(ended ? { secondsSinceSubmit: (deps.now().getTime() - goal.createdAt.getTime()) / 1000 } : {}),
    });
    deps.afterCommit?.(move);
    // Its steps are over, or wait on its client for hours: what they read need not be kept meanwhile.
    if (!isWorking(move.to)) deps.material.forget(goal.id);
    await scheduleAfter(deps, goal, move.to, version);
    const phase = (p: "handler" | "commit" | "schedule", ms: number) => deps.metrics?.stepPhase({ state, phase: p, seconds: ms / 1000 });
    phase("handler", handled - began);
    phase("commit", committed - handled);
    phase("schedule", performance.now() - committed);
    return { done: true, from: move.from, to: move.to, version };
  } catch (e) {
    // Another runner (or a cancel) moved the goal first: that move stands and ours is dropped, evidence and all.
    if (errorCodeOf(e) === "LS_ERR_STALE_VERSION") return { done: false, skipped: "stale", state: goal.state };
    throw e;
  }
}

const REFUSAL_MAX = 300;

/**
 * Why a commit failed because of the data it carried, or undefined when it failed for any other reason
 * (connection, authentication, a stale version, a bug), which a retry may cure. Data refusals are
 * Postgres SQLSTATE class 22 (data exception: NUL in text, a bad jsonb escape, a number out of range) and
 * 54 (program limit exceeded), as @prisma/adapter-pg reports them in meta.driverAdapterError.cause and
 * node-postgres in its own error's `code`, and the RangeError (stack overflow on deeply nested JSON, string too long) or TypeError that Prisma throws
 * while serialising the rows (those carry its clientVersion).
 */
export function dataRefusal(e: unknown): string | undefined {
  type Cause = { originalCode?: unknown; code?: unknown; originalMessage?: unknown; message?: unknown };
  // node-postgres's own error (a statement sent past Prisma, sendStatement) is its own cause.
  const cause: Cause | undefined = (e as { meta?: { driverAdapterError?: { cause?: Cause } } } | null)?.meta?.driverAdapterError?.cause ?? (isPostgresError(e) ? e : undefined);
  const sqlstate = cause?.originalCode ?? cause?.code;
  let why: string | undefined;
  if (typeof sqlstate === "string" && /^(22|54)[0-9A-Z]{3}$/.test(sqlstate)) {
    why = `Postgres ${sqlstate}: ${String(cause?.originalMessage ?? cause?.message ?? "")}`;
  } else if (e instanceof RangeError || (e instanceof TypeError && "clientVersion" in e)) {
    // Prisma's own messages carry a code frame of our source: the tape gets the sentence after it.
    why = `${e.name}: ${publicError(e).message}`;
  }
  // The reason is itself stored: keep it short and free of anything Postgres would refuse again.
  return why === undefined ? undefined : storable(why).text.slice(0, REFUSAL_MAX);
}

/** What follows a committed move: its webhook deliveries, and the next step (or the approval timeout). */
async function scheduleAfter(deps: StepRunnerDeps, goal: Goal, state: string, version: number): Promise<void> {
  if (eventForState(state)) await deps.deliver(goal.id);
  if (isWorking(state)) await deps.enqueue({ goalId: goal.id, version });
  else if (state === "awaiting_approval") await deps.enqueue({ goalId: goal.id, version }, deps.approvalTimeoutMs);
}

/** The wall-clock budget, checked before every step: past it, the goal ends without starting the step. */
function wallClockExceeded(goal: Goal, now: Date): StepResult | null {
  if (!isWorking(goal.state)) return null;
  const { max_wall_seconds } = storedBudgets(goal.budgets, goal.maxAttempts);
  const elapsed = (now.getTime() - goal.createdAt.getTime()) / 1000;
  if (elapsed < max_wall_seconds) return null;
  return {
    event: { type: "BUDGET_EXHAUSTED", reason: "budget_wall" },
    detail: { elapsed_seconds: Math.round(elapsed), max_wall_seconds },
    failure: { message: `${Math.round(elapsed)} s since submission reached the ${max_wall_seconds} s wall-clock budget.` },
  };
}

/**
 * Polls the goal while its step runs. When it moved on without us (a client cancelled it), the step's
 * signal aborts, so that the sandbox kills its container instead of running to the end for nothing.
 */
function watchForMove(prisma: PrismaClient, goal: Goal, abort: AbortController, everyMs: number) {
  const timer = setInterval(() => {
    prisma.goal
      .findUnique({ where: { id: goal.id }, select: { version: true } })
      .then((g) => {
        if (!g || g.version !== goal.version) abort.abort(new Error("the goal moved on (cancelled)"));
      })
      .catch(() => undefined);
  }, everyMs);
  timer.unref();
  return timer;
}

export type { State };
