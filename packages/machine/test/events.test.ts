// Every event sent to every state: the states that accept it give exactly the move listed here; every
// other state refuses it with IllegalTransition naming the event, the state and the code. Written as a
// table of its own (not derived from the code under test), so that accepting an event in one more state
// (RETRIED in awaiting_approval would skip the approval; APPROVED in errored would resume without an
// operator) fails here.
import { describe, expect, it } from "vitest";
import { assertTransition, IllegalTransition, isState, STATES, transition, type MachineEvent, type Move, type State } from "../src/index";

const WORKING: State[] = ["plan", "generate", "execute", "inspect", "refine"];
const MODEL: State[] = ["plan", "generate", "inspect", "refine"];
const NON_TERMINAL: State[] = [...WORKING, "awaiting_approval", "errored"];

// For each event, the states that accept it and the move they make (resume targets are chosen legal in
// both awaiting_approval and errored, so that a wrongly accepting state would not be caught by the table).
const ACCEPTS: { event: MachineEvent; moves: Partial<Record<State, Omit<Move, "from">>> }[] = [
  { event: { type: "PLANNED" }, moves: { plan: { to: "generate" } } },
  { event: { type: "CODE_READY" }, moves: { generate: { to: "execute" }, refine: { to: "execute" } } },
  { event: { type: "EXECUTED" }, moves: { execute: { to: "inspect" } } },
  { event: { type: "INSPECTED", checksPassed: true, inspectorVerified: true, attempts: 1, maxAttempts: 3 }, moves: { inspect: { to: "verified" } } },
  { event: { type: "INSPECTED", checksPassed: false, inspectorVerified: true, attempts: 1, maxAttempts: 3 }, moves: { inspect: { to: "refine" } } },
  // issue 27: a give-up, with each policy, and the client's two answers to an asked one.
  { event: { type: "DECLARED_INFEASIBLE", onInfeasible: "fail", attemptsLeft: true }, moves: { inspect: { to: "failed", reason: "declared_infeasible" }, refine: { to: "failed", reason: "declared_infeasible" } } },
  { event: { type: "DECLARED_INFEASIBLE", onInfeasible: "ask", attemptsLeft: true }, moves: { inspect: { to: "awaiting_approval" }, refine: { to: "awaiting_approval" } } },
  { event: { type: "DECLARED_INFEASIBLE", onInfeasible: "ask", attemptsLeft: false }, moves: { inspect: { to: "failed", reason: "declared_infeasible" }, refine: { to: "failed", reason: "declared_infeasible" } } },
  { event: { type: "GIVE_UP_OVERRULED" }, moves: { awaiting_approval: { to: "refine" } } },
  { event: { type: "GIVE_UP_UPHELD" }, moves: { awaiting_approval: { to: "failed", reason: "declared_infeasible" } } },
  { event: { type: "MODEL_FAILED" }, moves: Object.fromEntries(MODEL.map((s) => [s, { to: "failed", reason: "model_failure" }])) },
  { event: { type: "EVALUATOR_REJECTED" }, moves: { plan: { to: "failed", reason: "evaluator_rejected" } } },
  { event: { type: "BUDGET_EXHAUSTED", reason: "budget_cost" }, moves: Object.fromEntries(WORKING.map((s) => [s, { to: "failed", reason: "budget_cost" }])) },
  { event: { type: "APPROVAL_NEEDED" }, moves: Object.fromEntries(MODEL.map((s) => [s, { to: "awaiting_approval" }])) },
  { event: { type: "APPROVED", resume: "inspect" }, moves: { awaiting_approval: { to: "inspect" } } },
  { event: { type: "REJECTED" }, moves: { awaiting_approval: { to: "failed", reason: "rejected" } } },
  { event: { type: "APPROVAL_TIMED_OUT" }, moves: { awaiting_approval: { to: "failed", reason: "approval_timeout" } } },
  { event: { type: "CANCELLED" }, moves: Object.fromEntries(NON_TERMINAL.map((s) => [s, { to: "cancelled" }])) },
  { event: { type: "ERRORED" }, moves: Object.fromEntries(WORKING.map((s) => [s, { to: "errored" }])) },
  { event: { type: "RETRIED", resume: "inspect" }, moves: { errored: { to: "inspect" } } },
];

function refusal(fn: () => unknown): IllegalTransition {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(IllegalTransition);
    return e as IllegalTransition;
  }
  throw new Error("expected IllegalTransition");
}

describe("every event in every state", () => {
  it("covers every event type", () => {
    const types = new Set(ACCEPTS.map((a) => a.event.type));
    expect(types.size).toBe(17);
  });

  for (const { event, moves } of ACCEPTS) {
    for (const state of STATES) {
      const expected = moves[state];
      const label = `${event.type}${event.type === "INSPECTED" ? `(checks ${String(event.checksPassed)})` : ""}${event.type === "DECLARED_INFEASIBLE" ? `(${event.onInfeasible}, attempts left ${String(event.attemptsLeft)})` : ""} in ${state}`;
      if (expected) {
        it(`${label} moves to ${expected.to}`, () => {
          expect(transition(state, event)).toEqual({ from: state, ...expected });
        });
      } else {
        it(`${label} is refused, naming the event and the state`, () => {
          const err = refusal(() => transition(state, event));
          expect(err.code).toBe("LS_ERR_ILLEGAL_TRANSITION");
          expect(err.name).toBe("IllegalTransition");
          expect(err.from).toBe(state);
          expect(err.to).toBe(`(${event.type})`);
          const allowed = expectedAllowed(state);
          expect(err.message).toBe(
            `illegal transition ${state} → (${event.type}) (event ${event.type} is not accepted in ${state}); allowed from ${state}: ${allowed}`,
          );
        });
      }
    }
  }
});

function expectedAllowed(s: State): string {
  const table: Record<State, string> = {
    plan: "generate, failed, cancelled, awaiting_approval, errored",
    generate: "execute, failed, cancelled, awaiting_approval, errored",
    execute: "inspect, failed, cancelled, errored",
    inspect: "verified, refine, failed, cancelled, awaiting_approval, errored",
    refine: "execute, failed, cancelled, awaiting_approval, errored",
    awaiting_approval: "plan, generate, inspect, refine, failed, cancelled",
    errored: "plan, generate, execute, inspect, refine, cancelled",
    verified: "none",
    failed: "none",
    cancelled: "none",
  };
  return table[s];
}

describe("assertTransition and isState", () => {
  it("a goal's first state must be plan, and the refusal says so exactly", () => {
    expect(() => assertTransition(null, "plan")).not.toThrow();
    const err = refusal(() => assertTransition(null, "generate"));
    expect(err.from).toBeNull();
    expect(err.message).toBe("illegal transition (start) → generate (a goal starts in plan); allowed from (start): none");
  });

  it("an unknown from or to state is refused without a reason clause", () => {
    const unknownFrom = refusal(() => assertTransition("nowhere", "plan"));
    expect(unknownFrom.message).toBe("illegal transition nowhere → plan; allowed from nowhere: none");
    const unknownTo = refusal(() => assertTransition("plan", "elsewhere"));
    expect(unknownTo.message).toBe("illegal transition plan → elsewhere; allowed from plan: generate, failed, cancelled, awaiting_approval, errored");
  });

  it("isState knows exactly the states", () => {
    for (const s of STATES) expect(isState(s)).toBe(true);
    for (const s of ["", "Plan", "done", 42, null, undefined, {}, ["plan"]]) expect(isState(s)).toBe(false);
  });
});
