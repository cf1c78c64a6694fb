// Replay comparison (issue 15): what counts as a change, and how it is named.
import { describe, expect, it } from "vitest";
import { compareRuns, describeComparison, HIDDEN_MARKER, type RunSide } from "../src";

const run = (opts: { passed?: boolean[]; state?: string; image?: string; exit?: number; at?: string } = {}): RunSide => {
  const passed = opts.passed ?? [true, true];
  return {
    state: opts.state ?? "verified",
    failure_reason: null,
    transitions: [
      { from: null, to: "plan", detail: { at: opts.at } },
      { from: "plan", to: "generate", detail: { checks: ["exits_clean", "csv_matches"], self_test: { ms: opts.at } } },
      { from: "generate", to: "execute", detail: { code: { source: "print(1)" } } },
      {
        from: "execute",
        to: "inspect",
        detail: { attempt: 1, exit_code: opts.exit ?? 0, timed_out: false, oom_killed: false, duration_ms: Math.random() * 1000, image_id: opts.image ?? "sha256:a", artifacts: [{ name: "clean.csv", sha256: "x" }] },
      },
      {
        from: "inspect",
        to: opts.state ?? "verified",
        detail: {
          attempt: 1,
          checks_passed: passed.every(Boolean),
          checks: [
            { id: "exits_clean", passed: passed[0], message: "ok" },
            { id: "csv_matches", passed: passed[1], message: passed[1] ? "matches" : "row 5 revenue: expected 12.34, found 12.35" },
          ],
          inspection: { verified: true },
          inspector_overruled: !passed.every(Boolean),
        },
      },
    ],
  };
};

describe("compareRuns", () => {
  it("ignores timestamps, durations and the image id (a note, not a change)", () => {
    const c = compareRuns(run({ at: "2026-01-01" }), run({ at: "2027-01-01", image: "sha256:b" }));
    expect(c.same).toBe(true);
    expect(c.notes).toEqual(["sandbox image: sha256:a → sha256:b"]);
  });

  it("names a check whose result changed, with the replay's message", () => {
    const c = compareRuns(run(), run({ passed: [true, false], state: "failed" }));
    expect(c.same).toBe(false);
    expect(c.state).toEqual({ original: "verified", replayed: "failed" });
    expect(c.tape).toEqual({ original: "plan → generate → execute → inspect → verified", replayed: "plan → generate → execute → inspect → failed" });
    expect(c.checks).toEqual([{ attempt: 1, index: 1, id: "csv_matches", original: true, replayed: false, original_message: "matches", replayed_message: "row 5 revenue: expected 12.34, found 12.35" }]);
    const text = describeComparison(c).join("\n");
    expect(text).toContain("check csv_matches (attempt 1, #1): pass → FAIL: row 5 revenue");
  });

  it("names a changed run outcome (exit code) on its step", () => {
    const c = compareRuns(run(), run({ exit: 1 }));
    expect(c.same).toBe(false);
    expect(c.transitions).toEqual([{ index: 3, step: "execute → inspect", field: "exit_code", original: 0, replayed: 1 }]);
  });

  it("reads an export's hidden messages back in place of their markers (issue 27)", () => {
    const original = run({ passed: [true, false], state: "failed" });
    const checks = original.transitions[4]!.detail.checks as { message: string }[];
    const secret = checks[1]!.message;
    checks[1]!.message = HIDDEN_MARKER;
    original.hidden_messages = [{ pointer: "/transitions/4/detail/checks/1/message", text: secret }];
    const c = compareRuns(original, run());
    expect(c.checks).toEqual([expect.objectContaining({ id: "csv_matches", original: false, replayed: true, original_message: secret })]);
    expect(checks[1]!.message, "the export itself is left alone").toBe(HIDDEN_MARKER);
  });

  it("a check that ran in only one of the two runs is a change", () => {
    const longer = run();
    longer.transitions.push({ from: "inspect", to: "refine", detail: { attempt: 2, checks: [{ id: "exits_clean", passed: true }] } });
    const c = compareRuns(run(), longer);
    expect(c.checks).toEqual([expect.objectContaining({ attempt: 2, id: "exits_clean", original: null, replayed: true })]);
    expect(describeComparison(c).join("\n")).toContain("not run → pass");
  });
});
