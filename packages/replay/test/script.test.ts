// A goal's recorded model turns as a scripted-model script (issue 15).
import { describe, expect, it } from "vitest";
import { exportGoal, fileForBody, HIDDEN_MARKER, restoreHidden, scriptFromCalls, type GoalRecord, type RecordedCall } from "../src";

const PLAN = { objective: "o", approach: ["a"], output_contract: "c", checks: [] };
// Parsed answers carry files (issue 14: default [], a workspace attempt's further files).
const code = (source: string) => ({ filename: "analysis.py", language: "python", source, notes: "", files: [] });
const verdict = (verified: boolean) => ({ verified, failing_checks: [], diagnosis: String(verified), fix_hint: "" });
let t = 0;
const call = (state: string, attempt: number, response: unknown, error: string | null = null): RecordedCall => ({
  state,
  attempt,
  provider: "openai-compatible",
  model: "m",
  response,
  error,
  createdAt: new Date(1_000_000 + t++),
});

describe("scriptFromCalls", () => {
  it("plan, generate, then inspect[i] and refine[i] from attempt i + 1, the latest answer of a retried step winning", () => {
    const { script, gaps } = scriptFromCalls(
      [
        call("plan", 0, PLAN),
        call("generate", 0, code("v1")),
        call("inspect", 1, verdict(false)),
        call("refine", 1, code("stale")),
        call("refine", 1, null, "unavailable: 503"),
        call("refine", 1, code("v2")),
        call("inspect", 2, verdict(true)),
      ],
      { objective: "o", attempts: 2 },
    );
    expect(gaps).toEqual([]);
    expect(script).toEqual({ plan: PLAN, generate: code("v1"), inspect: [verdict(false), verdict(true)], refine: [code("v2")] });
  });

  it("a turn without a recorded answer gets a placeholder and is named", () => {
    const { script, gaps } = scriptFromCalls([call("plan", 0, PLAN), call("generate", 0, code("v1")), call("inspect", 1, null, "schema")], { objective: "o", attempts: 1 });
    expect(gaps).toEqual(["inspect[0]"]);
    expect(script.inspect).toEqual([expect.objectContaining({ verified: false })]);
    const none = scriptFromCalls([], { objective: "the goal", attempts: 0 });
    expect(none.gaps).toEqual(["plan", "generate", "inspect[0]"]);
    expect(none.script.plan.objective).toBe("the goal");
  });
});

describe("exportGoal", () => {
  it("rebuilds a POST body (no webhook, the scripted model) and keeps the original's outcome", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    const doc = exportGoal(
      {
        id: "3f1c2a60-1111-4222-8333-444455556666",
        objective: "o",
        success: null,
        checks: [{ id: "exits_clean", params: {}, kind: "deterministic", description: "", hidden: false, reveal: "input" }],
        deliverable: "result.json",
        feedback: "full",
        selfTest: null,
        maxAttempts: 3,
        budgets: { max_attempts: 3, execution_timeout_seconds: 30, max_tokens: 1000, max_cost_usd: 1, max_wall_seconds: 60, approval_threshold_usd: null },
        model: { provider: "openai-compatible", model: "m" },
        state: "verified",
        verified: true,
        failureReason: null,
        attempts: 1,
        loopsmithVersion: "git:abc",
        createdAt: at,
        finishedAt: new Date(at.getTime() + 1500),
        inputs: [{ name: "a.csv", content: Buffer.from("x,y\n") }],
        checkerFiles: [{ name: "bin", content: Buffer.from([0xff, 0x00]) }],
        transitions: [{ seq: 0, fromState: null, toState: "plan", at, detail: {} }],
        modelCalls: [call("plan", 0, PLAN), call("generate", 0, code("v1")), call("inspect", 1, verdict(true))],
      },
      at,
    );
    expect(doc.body).toMatchObject({
      objective: "o",
      inputs: [{ name: "a.csv", text: "x,y\n" }],
      checker_files: [{ name: "bin", content_base64: "/wA=" }],
      max_attempts: 3,
      execution_timeout_seconds: 30,
      budget: { max_tokens: 1000, max_cost_usd: 1, max_wall_seconds: 60 },
      model: { provider: "scripted" },
    });
    expect(doc.body).not.toHaveProperty("webhook");
    expect(doc.body).not.toHaveProperty("approval_threshold_usd");
    expect(doc.original).toMatchObject({ state: "verified", tape: "plan", provider: "openai-compatible", model: "m", wall_time_ms: 1500 });
  });

  // issue 27: the tape is the owner's view, where a hidden check's message names its expected values.
  it("moves hidden checks' messages and self-test problems naming hidden checks out of the tape, into hidden_messages", () => {
    const at = new Date("2026-01-01T00:00:00Z");
    const secret = "expected \"S3CRET\", found \"guess\"";
    const goal: GoalRecord = {
      id: "3f1c2a60-1111-4222-8333-444455556666",
      objective: "o",
      success: null,
      checks: [
        { id: "json_matches", params: { expected: "S3CRET" }, kind: "deterministic", description: "", hidden: true, reveal: "input" },
        { id: "exits_clean", params: {}, kind: "deterministic", description: "", hidden: false, reveal: "input" },
      ],
      deliverable: "result.json",
      feedback: "full",
      selfTest: null,
      maxAttempts: 1,
      budgets: { max_attempts: 1, execution_timeout_seconds: 30, max_tokens: 1000, max_cost_usd: 1, max_wall_seconds: 60, approval_threshold_usd: null },
      model: { provider: "openai-compatible", model: "m" },
      state: "failed",
      verified: false,
      failureReason: "budget_attempts",
      attempts: 1,
      loopsmithVersion: null,
      createdAt: at,
      finishedAt: at,
      inputs: [],
      checkerFiles: [],
      transitions: [
        { seq: 0, fromState: null, toState: "plan", at, detail: {} },
        {
          seq: 1,
          fromState: "plan",
          toState: "generate",
          at,
          detail: {
            self_test: {
              ok: true,
              message: `good fixture "a" failed json_matches: ${secret}`,
              probes: [
                { probe: "good fixture \"a\"", failing_checks: ["json_matches"], problem: `failed json_matches: json_matches: ${secret}` },
                { probe: "an empty run", failing_checks: ["exits_clean"], problem: "visible only" },
              ],
            },
          },
        },
        {
          seq: 2,
          fromState: "inspect",
          toState: "failed",
          at,
          detail: {
            checks: [
              { id: "exits_clean", passed: true, message: "the script exited with code 0" },
              { id: "json_matches", passed: false, hidden: true, message: `/answer: ${secret}` },
            ],
            inspection: { verified: false },
          },
        },
      ],
      modelCalls: [],
    };
    const before = JSON.stringify(goal.transitions);
    const doc = exportGoal(goal, at);
    expect(JSON.stringify(goal.transitions), "the record itself is left alone").toBe(before);
    const { hidden_messages, ...outcome } = doc.original;
    expect(JSON.stringify(outcome)).not.toContain("S3CRET");
    expect(hidden_messages).toEqual([
      { pointer: "/transitions/1/detail/self_test/probes/0/problem", text: `failed json_matches: json_matches: ${secret}` },
      { pointer: "/transitions/1/detail/self_test/message", text: `good fixture "a" failed json_matches: ${secret}` },
      { pointer: "/transitions/2/detail/checks/1/message", text: `/answer: ${secret}` },
    ]);
    const checks = doc.original.transitions[2]!.detail.checks as { message: string }[];
    expect(checks.map((c) => c.message)).toEqual(["the script exited with code 0", HIDDEN_MARKER]);
    expect((doc.original.transitions[1]!.detail.self_test as { probes: { problem: string }[] }).probes[1]!.problem).toBe("visible only");
    // Put back, the owner's tape is whole again.
    expect(restoreHidden(doc.original).transitions.map((t) => t.detail)).toEqual(goal.transitions.map((t) => t.detail));
  });

  it("fileForBody keeps UTF-8 as text and anything else as base64", () => {
    expect(fileForBody({ name: "a", content: Buffer.from("héllo") })).toEqual({ name: "a", text: "héllo" });
    expect(fileForBody({ name: "b", content: Buffer.from([0xc3]) })).toEqual({ name: "b", content_base64: "ww==" });
  });
});
