// Best-of-N's pick (apps/runner/src/states/candidates.ts): a pure function of the candidates' verdicts.
import { describe, expect, it } from "vitest";
import { chooseCandidate } from "../src/states/candidates";

const c = (failing: string[], source: string) => ({ failing, code: { filename: "a.py", language: "python" as const, source, notes: "", files: [] } });

describe("chooseCandidate", () => {
  it("takes a candidate that passes every check over any that fails one, wherever it stands", () => {
    expect(chooseCandidate([c(["x"], "a"), c(["x", "y"], "b"), c([], "a much longer program")])).toBe(2);
  });
  it("without a passing one, takes the one that fails fewest checks", () => {
    expect(chooseCandidate([c(["x", "y", "z"], "a"), c(["y"], "bbbbbbbb"), c(["x", "y"], "c")])).toBe(1);
  });
  it("breaks ties by the shorter program, then by order (the same pick on every replay)", () => {
    expect(chooseCandidate([c([], "longer"), c([], "short")])).toBe(1);
    expect(chooseCandidate([c(["x"], "same"), c(["y"], "same")])).toBe(0);
    expect(chooseCandidate([c([], "one")])).toBe(0);
  });
  it("counts a candidate's further files in its size", () => {
    const withFiles = { failing: [], code: { filename: "a.py", language: "python" as const, source: "a", notes: "", files: [{ path: "b.py", content: "x".repeat(100) }] } };
    expect(chooseCandidate([withFiles, c([], "ab")])).toBe(1);
  });
});
