import { describe, expect, it } from "vitest";
import {
  assertTransition,
  IllegalTransition,
  isTerminal,
  STATES,
  tapeString,
  transition,
  TRANSITIONS,
  type MachineEvent,
  type State,
} from "../src/index";

const legal: [State, State][] = [
  ["plan", "generate"],
  ["plan", "failed"],
  ["generate", "execute"],
  ["generate", "failed"],
  ["execute", "inspect"],
  ["inspect", "verified"],
  ["inspect", "refine"],
  ["inspect", "failed"],
  ["refine", "execute"],
  ["refine", "failed"],
  // Added by the public-surface and guards issues (#4, #5).
  ...(["plan", "generate", "execute", "inspect", "refine", "awaiting_approval", "errored"] as const).map(
    (s) => [s, "cancelled"] as [State, State],
  ),
  ...(["plan", "generate", "execute", "inspect", "refine"] as const).map((s) => [s, "errored"] as [State, State]),
  ["execute", "failed"],
  ...(["plan", "generate", "inspect", "refine"] as const).map((s) => [s, "awaiting_approval"] as [State, State]),
  ...(["plan", "generate", "inspect", "refine", "failed"] as const).map((s) => ["awaiting_approval", s] as [State, State]),
  ...(["plan", "generate", "execute", "inspect", "refine"] as const).map((s) => ["errored", s] as [State, State]),
];
const isLegal = (a: State, b: State) => legal.some(([x, y]) => x === a && y === b);

describe("transition table", () => {
  it.each(legal)("allows %s → %s", (from, to) => {
    expect(() => assertTransition(from, to)).not.toThrow();
  });

  const illegal = STATES.flatMap((a) => STATES.map((b) => [a, b] as [State, State])).filter(([a, b]) => !isLegal(a, b));
  it("has exactly the legal edges listed here", () => {
    expect(illegal.length + legal.length).toBe(STATES.length ** 2);
    expect(Object.values(TRANSITIONS).flat().length).toBe(legal.length);
  });
  it.each(illegal)("refuses %s → %s naming the allowed moves", (from, to) => {
    const err = (() => {
      try {
        assertTransition(from, to);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(IllegalTransition);
    expect((err as Error).message).toContain(`allowed from ${from}: ${TRANSITIONS[from].join(", ") || "none"}`);
  });

  it("terminals have no exits", () => {
    for (const t of ["verified", "failed", "cancelled"] as const) {
      expect(isTerminal(t)).toBe(true);
      expect(TRANSITIONS[t]).toEqual([]);
    }
  });

  it("a goal can only start in plan", () => {
    expect(() => assertTransition(null, "plan")).not.toThrow();
    expect(() => assertTransition(null, "generate")).toThrow(IllegalTransition);
    expect(() => assertTransition("plan", "bogus")).toThrow(IllegalTransition);
    expect(() => assertTransition("bogus", "plan")).toThrow(IllegalTransition);
  });

  it("no path reaches verified without passing inspect", () => {
    // Search the graph with inspect removed: verified must be unreachable from plan.
    const seen = new Set<State>(["plan"]);
    const todo: State[] = ["plan"];
    while (todo.length) {
      const s = todo.pop()!;
      for (const n of TRANSITIONS[s]) {
        if (n === "inspect" || seen.has(n)) continue;
        seen.add(n);
        todo.push(n);
      }
    }
    expect(seen.has("verified")).toBe(false);
    expect(seen.has("execute")).toBe(true);
    // And the only edge into verified comes from inspect.
    expect(STATES.filter((s) => TRANSITIONS[s].includes("verified"))).toEqual(["inspect"]);
  });
});

describe("transition(state, event)", () => {
  const inspected = (checksPassed: boolean, inspectorVerified: boolean, attempts = 1, maxAttempts = 5): MachineEvent => ({
    type: "INSPECTED",
    checksPassed,
    inspectorVerified,
    attempts,
    maxAttempts,
  });

  it("walks the happy path", () => {
    expect(transition("plan", { type: "PLANNED" }).to).toBe("generate");
    expect(transition("generate", { type: "CODE_READY" }).to).toBe("execute");
    expect(transition("execute", { type: "EXECUTED" }).to).toBe("inspect");
    expect(transition("inspect", inspected(true, true)).to).toBe("verified");
    expect(transition("refine", { type: "CODE_READY" }).to).toBe("execute");
  });

  it("a failed check vetoes the inspector's verified", () => {
    expect(transition("inspect", inspected(false, true)).to).toBe("refine");
    expect(transition("inspect", inspected(true, false)).to).toBe("refine");
  });

  it("the attempt budget ends in failed with its reason, but never overrides a pass", () => {
    expect(transition("inspect", inspected(false, true, 5, 5))).toEqual({ from: "inspect", to: "failed", reason: "budget_attempts" });
    expect(transition("inspect", inspected(true, true, 5, 5)).to).toBe("verified");
    expect(transition("inspect", inspected(false, false, 4, 5)).to).toBe("refine");
  });

  it("a model failure ends the goal from the state that asked", () => {
    for (const s of ["plan", "generate", "refine", "inspect"] as const)
      expect(transition(s, { type: "MODEL_FAILED" })).toEqual({ from: s, to: "failed", reason: "model_failure" });
    expect(() => transition("execute", { type: "MODEL_FAILED" })).toThrow(IllegalTransition);
    // The self-test runs in PLAN only, before any model call.
    expect(transition("plan", { type: "EVALUATOR_REJECTED" })).toEqual({ from: "plan", to: "failed", reason: "evaluator_rejected" });
    for (const s of ["generate", "execute", "inspect", "refine", "awaiting_approval", "errored", "verified"] as const) {
      expect(() => transition(s, { type: "EVALUATOR_REJECTED" })).toThrow(IllegalTransition);
    }
  });

  it("the progress guard ends a stuck goal in failed/stuck, but never overrides a pass", () => {
    expect(transition("inspect", { ...(inspected(false, false, 3, 10) as object), stuck: true } as MachineEvent)).toEqual({
      from: "inspect",
      to: "failed",
      reason: "stuck",
    });
    expect(transition("inspect", { ...(inspected(true, true, 3, 10) as object), stuck: true } as MachineEvent).to).toBe("verified");
  });

  it("an exhausted budget ends any working state in failed with its reason", () => {
    for (const s of ["plan", "generate", "execute", "inspect", "refine"] as const)
      for (const reason of ["budget_tokens", "budget_cost", "budget_wall"] as const)
        expect(transition(s, { type: "BUDGET_EXHAUSTED", reason })).toEqual({ from: s, to: "failed", reason });
    expect(() => transition("awaiting_approval", { type: "BUDGET_EXHAUSTED", reason: "budget_cost" })).toThrow(IllegalTransition);
  });

  it("approval: wait, then resume where it stopped, or fail rejected / approval_timeout", () => {
    expect(transition("refine", { type: "APPROVAL_NEEDED" }).to).toBe("awaiting_approval");
    expect(() => transition("execute", { type: "APPROVAL_NEEDED" })).toThrow(IllegalTransition);
    expect(transition("awaiting_approval", { type: "APPROVED", resume: "refine" }).to).toBe("refine");
    expect(() => transition("awaiting_approval", { type: "APPROVED", resume: "verified" })).toThrow(IllegalTransition);
    expect(transition("awaiting_approval", { type: "REJECTED" })).toEqual({ from: "awaiting_approval", to: "failed", reason: "rejected" });
    expect(transition("awaiting_approval", { type: "APPROVAL_TIMED_OUT" })).toEqual({
      from: "awaiting_approval",
      to: "failed",
      reason: "approval_timeout",
    });
  });

  it("issue 27: a give-up ends failed/declared_infeasible, or waits for the client when the goal asks and an attempt is left", () => {
    for (const from of ["inspect", "refine"] as const) {
      expect(transition(from, { type: "DECLARED_INFEASIBLE", onInfeasible: "fail", attemptsLeft: true })).toEqual({ from, to: "failed", reason: "declared_infeasible" });
      expect(transition(from, { type: "DECLARED_INFEASIBLE", onInfeasible: "ask", attemptsLeft: true })).toEqual({ from, to: "awaiting_approval" });
      // Nothing left to go on with: asking would offer a choice that does not exist.
      expect(transition(from, { type: "DECLARED_INFEASIBLE", onInfeasible: "ask", attemptsLeft: false })).toEqual({ from, to: "failed", reason: "declared_infeasible" });
    }
    for (const from of ["plan", "generate", "execute", "awaiting_approval"] as const)
      expect(() => transition(from, { type: "DECLARED_INFEASIBLE", onInfeasible: "fail", attemptsLeft: true })).toThrow(IllegalTransition);
    expect(transition("awaiting_approval", { type: "GIVE_UP_OVERRULED" })).toEqual({ from: "awaiting_approval", to: "refine" });
    expect(transition("awaiting_approval", { type: "GIVE_UP_UPHELD" })).toEqual({ from: "awaiting_approval", to: "failed", reason: "declared_infeasible" });
    expect(() => transition("refine", { type: "GIVE_UP_OVERRULED" })).toThrow(IllegalTransition);
    expect(() => transition("inspect", { type: "GIVE_UP_UPHELD" })).toThrow(IllegalTransition);
  });

  it("issue 27: no give-up, whatever the policy, state or attempts, reaches verified", () => {
    const policies = ["fail", "ask"] as const;
    const events: MachineEvent[] = [
      ...policies.flatMap((onInfeasible) => [true, false].map((attemptsLeft) => ({ type: "DECLARED_INFEASIBLE", onInfeasible, attemptsLeft }) as MachineEvent)),
      { type: "GIVE_UP_OVERRULED" },
      { type: "GIVE_UP_UPHELD" },
    ];
    const reached = new Set<State>();
    for (const e of events)
      for (const s of STATES) {
        try {
          reached.add(transition(s, e).to);
        } catch (err) {
          expect(err).toBeInstanceOf(IllegalTransition);
        }
      }
    expect([...reached].sort()).toEqual(["awaiting_approval", "failed", "refine"]);
  });

  it("cancel ends any non-terminal state; terminals stay put", () => {
    for (const s of STATES.filter((s) => !isTerminal(s))) expect(transition(s, { type: "CANCELLED" }).to).toBe("cancelled");
    for (const s of ["verified", "failed", "cancelled"] as const) expect(() => transition(s, { type: "CANCELLED" })).toThrow(IllegalTransition);
  });

  it("infrastructure failure parks a working goal in errored; a retry resumes it", () => {
    expect(transition("execute", { type: "ERRORED" }).to).toBe("errored");
    expect(() => transition("awaiting_approval", { type: "ERRORED" })).toThrow(IllegalTransition);
    expect(transition("errored", { type: "RETRIED", resume: "execute" }).to).toBe("execute");
    expect(() => transition("errored", { type: "RETRIED", resume: "verified" })).toThrow(IllegalTransition);
  });

  it("an event out of place is illegal", () => {
    expect(() => transition("plan", { type: "EXECUTED" })).toThrow(/not accepted in plan/);
    expect(() => transition("verified", { type: "PLANNED" })).toThrow(IllegalTransition);
    expect(() => transition("failed", inspected(true, true))).toThrow(IllegalTransition);
  });

  it("is pure: the same input gives the same move", () => {
    const e = inspected(false, true, 2, 3);
    expect(transition("inspect", e)).toEqual(transition("inspect", e));
  });
});

describe("tape", () => {
  it("joins states with arrows", () => {
    expect(tapeString(["plan", "generate", "execute", "inspect", "verified"])).toBe("plan → generate → execute → inspect → verified");
  });
});
