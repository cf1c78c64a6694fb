// @loopsmith/machine: the closed loop's states, events and transition table. Pure: no I/O imports, no
// clock, no randomness. A model's judgement arrives here as data inside an event; only this table decides
// which state comes next.

export const STATES = [
  "plan",
  "generate",
  "execute",
  "inspect",
  "refine",
  "awaiting_approval",
  "errored",
  "verified",
  "failed",
  "cancelled",
] as const;
export type State = (typeof STATES)[number];

export const TERMINAL_STATES: readonly State[] = ["verified", "failed", "cancelled"];

/** The states in which the runner works on the goal (a step job is queued or running). */
export const WORKING_STATES = ["plan", "generate", "execute", "inspect", "refine"] as const;
export type WorkingState = (typeof WORKING_STATES)[number];

/**
 * The architecture (DESIGN.md), plus rows added by later issues, never side doors:
 * - model turns that fail their schema, and exhausted budgets, end the goal in `failed`;
 * - PLAN's evaluator self-test, when the checks cannot tell right from wrong, ends it `failed` too
 *   (reason evaluator_rejected) before any model call;
 * - any non-terminal state can be `cancelled` by the client;
 * - a model turn that would cross the approval threshold waits in `awaiting_approval`, and resumes in
 *   the state it left (approve) or ends `failed` (reject, timeout);
 * - a step whose infrastructure kept failing past the retry cap parks the goal in `errored` (the
 *   dead-letter list), from which an operator's retry resumes the state it left;
 * - an inspector or refiner that declares the goal infeasible ends it `failed` (declared_infeasible), or,
 *   when the goal asks for a human decision, waits in `awaiting_approval`: approving sends it on to
 *   `refine`, rejecting (or no answer) ends it `failed`. A give-up never leads to `verified`.
 * Anything not listed raises IllegalTransition.
 */
export const TRANSITIONS: Readonly<Record<State, readonly State[]>> = {
  plan: ["generate", "failed", "cancelled", "awaiting_approval", "errored"],
  generate: ["execute", "failed", "cancelled", "awaiting_approval", "errored"],
  execute: ["inspect", "failed", "cancelled", "errored"],
  inspect: ["verified", "refine", "failed", "cancelled", "awaiting_approval", "errored"],
  refine: ["execute", "failed", "cancelled", "awaiting_approval", "errored"],
  awaiting_approval: ["plan", "generate", "inspect", "refine", "failed", "cancelled"],
  errored: ["plan", "generate", "execute", "inspect", "refine", "cancelled"],
  verified: [],
  failed: [],
  cancelled: [],
};

/** Why a goal ended in `failed`. Stable strings: clients match on them. */
export const FAILURE_REASONS = [
  "budget_attempts",
  "budget_tokens",
  "budget_cost",
  "budget_wall",
  "model_failure",
  "stuck",
  "rejected",
  "approval_timeout",
  "evaluator_rejected",
  "declared_infeasible",
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];
/** What a goal does when a model declares it infeasible: end `failed`, or ask a human first. */
export const ON_INFEASIBLE = ["fail", "ask"] as const;
export type OnInfeasible = (typeof ON_INFEASIBLE)[number];

export type BudgetReason = Extract<FailureReason, "budget_tokens" | "budget_cost" | "budget_wall">;

export type MachineEvent =
  | { type: "PLANNED" }
  /** GENERATE or REFINE produced a complete program. */
  | { type: "CODE_READY" }
  | { type: "EXECUTED" }
  | {
      type: "INSPECTED";
      /** Every deterministic check passed. */
      checksPassed: boolean;
      /** The inspector model's opinion. It can veto, never overrule a failed check. */
      inspectorVerified: boolean;
      /** Executions so far, this one included. */
      attempts: number;
      maxAttempts: number;
      /** The progress guard saw this attempt's outcome repeat too often. */
      stuck?: boolean;
    }
  /**
   * The inspector or the refiner declared the goal infeasible (say, its tests contradict its objective).
   * Wins over everything the same inspection says, a "verified" over passing checks included: a model
   * can give up, never pass. Asking needs an attempt left to go on with.
   */
  | { type: "DECLARED_INFEASIBLE"; onInfeasible: OnInfeasible; attemptsLeft: boolean }
  /** The client approved going on after a give-up: the refiner tries again. */
  | { type: "GIVE_UP_OVERRULED" }
  /** The client rejected going on after a give-up, or did not answer in time: the give-up stands. */
  | { type: "GIVE_UP_UPHELD" }
  /** A model turn failed its schema after the bounded retries. */
  | { type: "MODEL_FAILED" }
  /** The evaluator's self-test (before any model call) showed the checks cannot tell right from wrong. */
  | { type: "EVALUATOR_REJECTED" }
  /** The next model call or execution would cross a token, cost or wall-clock cap. */
  | { type: "BUDGET_EXHAUSTED"; reason: BudgetReason }
  /** The next model call would cross the approval threshold. */
  | { type: "APPROVAL_NEEDED" }
  /** The client approved: resume in the state the goal was waiting in. */
  | { type: "APPROVED"; resume: State }
  | { type: "REJECTED" }
  | { type: "APPROVAL_TIMED_OUT" }
  | { type: "CANCELLED" }
  /** The step's infrastructure (Docker, database, queue, provider) kept failing past the retry cap. */
  | { type: "ERRORED" }
  /** An operator retried a dead-lettered goal: resume in the state it errored in. */
  | { type: "RETRIED"; resume: State };

export interface Move {
  from: State;
  to: State;
  /** Set when `to` is `failed`. */
  reason?: FailureReason;
}

export class IllegalTransition extends Error {
  readonly code = "LS_ERR_ILLEGAL_TRANSITION";
  constructor(
    readonly from: string | null,
    readonly to: string,
    why?: string,
  ) {
    const allowed = isState(from) ? TRANSITIONS[from] : [];
    super(
      `illegal transition ${from ?? "(start)"} → ${to}${why ? ` (${why})` : ""}; ` +
        `allowed from ${from ?? "(start)"}: ${allowed.length ? allowed.join(", ") : "none"}`,
    );
    this.name = "IllegalTransition";
  }
}

export function isState(s: unknown): s is State {
  // Stryker disable next-line ConditionalExpression: equivalent; includes() of a non-string is false anyway (the typeof is for the type guard)
  return typeof s === "string" && (STATES as readonly string[]).includes(s);
}

export function isTerminal(s: State): boolean {
  return TERMINAL_STATES.includes(s);
}

/** The choke point: every state change in the system passes here. A goal starts in `plan`. */
export function assertTransition(from: string | null, to: string): asserts to is State {
  if (from === null) {
    if (to !== "plan") throw new IllegalTransition(from, to, "a goal starts in plan");
    return;
  }
  if (!isState(from) || !isState(to) || !TRANSITIONS[from].includes(to)) throw new IllegalTransition(from, to);
}

/** The next state for an event. Pure: same state and event, same move. */
export function transition(from: State, event: MachineEvent): Move {
  const move = decide(from, event);
  assertTransition(move.from, move.to);
  return move;
}

const MODEL_STATES: readonly State[] = ["plan", "generate", "inspect", "refine"];

function isWorking(s: State): boolean {
  return (WORKING_STATES as readonly State[]).includes(s);
}

function decide(from: State, event: MachineEvent): Move {
  switch (event.type) {
    case "PLANNED":
      if (from === "plan") return { from, to: "generate" };
      break;
    case "CODE_READY":
      if (from === "generate" || from === "refine") return { from, to: "execute" };
      break;
    case "EXECUTED":
      if (from === "execute") return { from, to: "inspect" };
      break;
    case "INSPECTED":
      if (from !== "inspect") break;
      // The veto: verified needs the model's yes AND every deterministic check.
      if (event.checksPassed && event.inspectorVerified) return { from, to: "verified" };
      if (event.stuck) return { from, to: "failed", reason: "stuck" };
      if (event.attempts >= event.maxAttempts) return { from, to: "failed", reason: "budget_attempts" };
      return { from, to: "refine" };
    case "DECLARED_INFEASIBLE":
      if (from !== "inspect" && from !== "refine") break;
      if (event.onInfeasible === "ask" && event.attemptsLeft) return { from, to: "awaiting_approval" };
      return { from, to: "failed", reason: "declared_infeasible" };
    case "GIVE_UP_OVERRULED":
      if (from === "awaiting_approval") return { from, to: "refine" };
      break;
    case "GIVE_UP_UPHELD":
      if (from === "awaiting_approval") return { from, to: "failed", reason: "declared_infeasible" };
      break;
    case "MODEL_FAILED":
      if (MODEL_STATES.includes(from)) return { from, to: "failed", reason: "model_failure" };
      break;
    case "EVALUATOR_REJECTED":
      // Only PLAN runs the self-test: it happens before the first model call, so nothing was spent.
      if (from === "plan") return { from, to: "failed", reason: "evaluator_rejected" };
      break;
    case "BUDGET_EXHAUSTED":
      if (isWorking(from)) return { from, to: "failed", reason: event.reason };
      break;
    case "APPROVAL_NEEDED":
      if (MODEL_STATES.includes(from)) return { from, to: "awaiting_approval" };
      break;
    case "APPROVED":
      if (from === "awaiting_approval") return { from, to: event.resume };
      break;
    case "REJECTED":
      if (from === "awaiting_approval") return { from, to: "failed", reason: "rejected" };
      break;
    case "APPROVAL_TIMED_OUT":
      if (from === "awaiting_approval") return { from, to: "failed", reason: "approval_timeout" };
      break;
    case "CANCELLED":
      if (!isTerminal(from)) return { from, to: "cancelled" };
      break;
    case "ERRORED":
      if (isWorking(from)) return { from, to: "errored" };
      break;
    case "RETRIED":
      if (from === "errored") return { from, to: event.resume };
      break;
  }
  throw new IllegalTransition(from, `(${event.type})`, `event ${event.type} is not accepted in ${from}`);
}

/** The tape as one line: `plan → generate → … → verified`. */
export function tapeString(states: readonly string[]): string {
  return states.join(" → ");
}
