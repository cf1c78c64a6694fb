// Judge agreement (issue 15): the pure aggregation over tapes and model calls.
import { describe, expect, it } from "vitest";
import { inspectionVerdicts, judgeGoal, judgeReport, type JudgeCall, type JudgeGoalInput } from "../src";

const execute = (attempt: number) => ({ from: "execute", to: "inspect", detail: { attempt } });
/** An INSPECT row as the runner writes it: the stored inspection after the veto, and whether it overruled. */
const inspect = (attempt: number, said: boolean, failed: string[], to = "refine") => ({
  from: "inspect",
  to,
  detail: {
    attempt,
    checks_passed: failed.length === 0,
    checks: [{ id: "exits_clean", passed: true }, ...["json_matches", "csv_matches"].map((id) => ({ id, passed: !failed.includes(id) }))],
    inspection: { verified: said && failed.length === 0, failing_checks: failed, diagnosis: "", fix_hint: "" },
    inspector_overruled: said && failed.length > 0,
  },
});
const call = (state: string, attempt: number, tokens: number, model = "m1"): JudgeCall => ({
  state,
  attempt,
  provider: "openai-compatible",
  model,
  tokensIn: tokens,
  tokensOut: 0,
  costUsd: tokens / 1000,
});
const turns = (attempts: number, model = "m1") => [
  call("plan", 0, 1, model),
  call("generate", 0, 1, model),
  ...Array.from({ length: attempts }, (_, i) => [call("inspect", i + 1, 10, model), ...(i + 1 < attempts ? [call("refine", i + 1, 100, model)] : [])]).flat(),
];

describe("inspectionVerdicts", () => {
  it("reads what the inspector said before the veto, and skips INSPECT rows without an answer", () => {
    const v = inspectionVerdicts([
      execute(1),
      inspect(1, true, ["json_matches"]),
      { from: "inspect", to: "failed", detail: { attempt: 2, checks: [], model_error: { code: "LS_ERR_MODEL_OUTPUT" } } },
    ]);
    expect(v).toEqual([{ attempt: 1, inspector_verified: true, checks_passed: false, failed_checks: ["json_matches"] }]);
  });
});

describe("judgeGoal", () => {
  it("a false accept: verified said over a failing check, stopped by the veto, named by check", () => {
    const g: JudgeGoalInput = {
      id: "g1",
      state: "verified",
      transitions: [execute(1), inspect(1, true, ["json_matches"]), execute(2), inspect(2, true, [], "verified")],
      calls: turns(2),
    };
    expect(judgeGoal(g)).toMatchObject({ inspections: 2, agree: 1, false_accepts: 1, false_rejects: 0, vetoed_by: ["json_matches"], false_reject_attempts: 0, false_reject_tokens: 0 });
  });

  it("a false reject costs every attempt and model turn after it (counted from the first)", () => {
    const g: JudgeGoalInput = {
      id: "g2",
      state: "verified",
      transitions: [execute(1), inspect(1, false, []), execute(2), inspect(2, false, []), execute(3), inspect(3, true, [], "verified")],
      calls: turns(3),
    };
    // refine@1 + inspect@2 + refine@2 + inspect@3 = 100 + 10 + 100 + 10; attempts 2 and 3.
    expect(judgeGoal(g)).toMatchObject({ inspections: 3, agree: 1, false_rejects: 2, false_reject_attempts: 2, false_reject_tokens: 220, false_reject_cost_usd: 0.22 });
  });

  it("agreement both ways is not a disagreement", () => {
    const g: JudgeGoalInput = { id: "g3", state: "failed", transitions: [execute(1), inspect(1, false, ["csv_matches"], "failed")], calls: turns(1) };
    expect(judgeGoal(g)).toMatchObject({ inspections: 1, agree: 1, false_accepts: 0, false_rejects: 0, vetoed_by: [] });
  });
});

describe("judgeReport", () => {
  it("aggregates per tenant, per model and per vetoing check, and lists the goals that disagreed", () => {
    const goals: JudgeGoalInput[] = [
      { id: "a", state: "verified", transitions: [execute(1), inspect(1, true, ["json_matches", "csv_matches"]), execute(2), inspect(2, true, [], "verified")], calls: turns(2) },
      { id: "b", state: "verified", transitions: [execute(1), inspect(1, false, []), execute(2), inspect(2, true, [], "verified")], calls: turns(2, "m2") },
      { id: "c", state: "failed", transitions: [execute(1), inspect(1, true, ["csv_matches"], "failed")], calls: turns(1) },
      { id: "d", state: "verified", transitions: [execute(1), inspect(1, true, [], "verified")], calls: turns(1) },
    ];
    const r = judgeReport(goals, { since: new Date("2026-01-01T00:00:00Z"), until: new Date("2026-02-01T00:00:00Z") });
    expect(r.tenant).toEqual({ goals: 4, inspections: 6, agree: 3, false_accepts: 2, false_rejects: 1, false_reject_attempts: 1, false_reject_tokens: 110, false_reject_cost_usd: 0.11 });
    expect(r.by_model).toEqual([
      expect.objectContaining({ provider: "openai-compatible", model: "m1", goals: 3, false_accepts: 2, false_rejects: 0 }),
      expect.objectContaining({ provider: "openai-compatible", model: "m2", goals: 1, false_accepts: 0, false_rejects: 1, false_reject_tokens: 110 }),
    ]);
    expect(r.by_check).toEqual([
      { id: "csv_matches", false_accepts: 2 },
      { id: "json_matches", false_accepts: 1 },
    ]);
    expect(r.goals.map((g) => g.goal_id)).toEqual(["a", "b", "c"]);
    expect(r.since).toBe("2026-01-01T00:00:00.000Z");
  });

  it("an empty window is all zeros", () => {
    const r = judgeReport([], { since: new Date(0), until: new Date(1) });
    expect(r.tenant.goals).toBe(0);
    expect(r.by_model).toEqual([]);
    expect(r.goals).toEqual([]);
  });
});
