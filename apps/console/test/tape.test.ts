// The console's reading of who decided each move on a goal's tape, on rows shaped as the runner and the
// API write them.
import { describe, expect, it } from "vitest";
import { decidedBy } from "../src/tape";

const checks = (passed: boolean[]) => passed.map((p, i) => ({ id: `c${i}`, passed: p, message: "" }));

describe("decidedBy", () => {
  it.each([
    [{ from: null, to: "plan" }, "the client (submitted)"],
    [{ from: "plan", to: "generate" }, "the planner"],
    [{ from: "generate", to: "execute" }, "the model (wrote a program)"],
    [{ from: "refine", to: "execute" }, "the model (wrote a program)"],
    [{ from: "plan", to: "generate", detail: { pinned_from: "g1" } }, "the schedule's pin (its plan, no planner)"],
    [{ from: "generate", to: "execute", detail: { pinned_from: "g1", code: {} } }, "the schedule's pin (its program, no model)"],
    [{ from: "execute", to: "inspect" }, "the sandbox (the program ran)"],
    [{ from: "inspect", to: "refine", detail: { checks: checks([true, false, false]) } }, "the checks (2 of 3 failed)"],
    [{ from: "inspect", to: "verified", detail: { checks: checks([true, true]) } }, "the checks (all 2 passed)"],
    [{ from: "inspect", to: "failed", detail: { reason: "budget_attempts", checks: checks([false]) } }, "the attempts budget"],
    [{ from: "generate", to: "failed", detail: { reason: "budget_cost" } }, "the cost budget"],
    [{ from: "inspect", to: "failed", detail: { reason: "stuck" } }, "the progress guard (stuck)"],
    [{ from: "plan", to: "failed", detail: { reason: "evaluator_rejected" } }, "the checks' self-test (evaluator_rejected)"],
    [{ from: "inspect", to: "failed", detail: { reason: "declared_infeasible", infeasible: { declared_by: "inspector" } } }, "a model's give-up (declared_infeasible)"],
    [{ from: "inspect", to: "awaiting_approval", detail: { infeasible: { reason: "x" } } }, "a model's give-up (asks the client)"],
    [{ from: "generate", to: "awaiting_approval", detail: { turn: "generate", approval_threshold_usd: 1 } }, "the spending threshold (asks the client)"],
    [{ from: "awaiting_approval", to: "generate", detail: { by: "client" } }, "the client (approved)"],
    [{ from: "awaiting_approval", to: "failed", detail: { by: "client" } }, "the client (rejected)"],
    [{ from: "awaiting_approval", to: "failed", detail: { reason: "approval_timeout" } }, "the approval timeout"],
    [{ from: "execute", to: "cancelled", detail: { by: "client" } }, "the client (cancelled)"],
    [{ from: "plan", to: "errored", detail: { error: "x" } }, "the infrastructure (its retries ran out)"],
    [{ from: "errored", to: "plan", detail: { by: "operator" } }, "an operator (retried)"],
  ])("%j: %s", (row, want) => {
    expect(decidedBy(row)).toBe(want);
  });
});
