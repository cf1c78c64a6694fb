// @loopsmith/machine: the closed loop's states, events and transition table. Pure: no I/O imports, no
// clock, no randomness. A model's judgement arrives here as data inside an event; only this table decides
// which state comes next.

export const STATES = ["plan", "generate", "execute", "inspect", "refine", "verified", "failed"] as const;
export type State = (typeof STATES)[number];

export const TERMINAL_STATES: readonly State[] = ["verified", "failed"];

/**
 * The architecture (DESIGN.md), plus one kind of row: a model turn whose output still fails its schema
 * after the bounded retries ends the goal in `failed` from the state that asked for it. Anything not
 * listed raises IllegalTransition.
 */
export const TRANSITIONS: Readonly<Record<State, readonly State[]>> = {
  plan: ["generate", "failed"],
  generate: ["execute", "failed"],
  execute: ["inspect"],
  inspect: ["verified", "refine", "failed"],
  refine: ["execute", "failed"],
  verified: [],
  failed: [],
};

/** Why a goal ended in `failed`. Stable strings: clients match on them. */
export type FailureReason = "budget_attempts" | "model_failure";

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
    }
  /** A model turn failed its schema after the bounded retries. */
  | { type: "MODEL_FAILED" };

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
      if (event.attempts >= event.maxAttempts) return { from, to: "failed", reason: "budget_attempts" };
      return { from, to: "refine" };
    case "MODEL_FAILED":
      if (from === "plan" || from === "generate" || from === "refine" || from === "inspect")
        return { from, to: "failed", reason: "model_failure" };
      break;
  }
  throw new IllegalTransition(from, `(${event.type})`, `event ${event.type} is not accepted in ${from}`);
}

/** The tape as one line: `plan → generate → … → verified`. */
export function tapeString(states: readonly string[]): string {
  return states.join(" → ");
}
