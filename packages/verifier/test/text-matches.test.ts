// text_matches judged on crafted stdout and artifacts, without services (issue 18): every mode in both
// directions, tolerances just inside and just outside, off-by-one lines, fail-closed inputs.
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { checkerFilesOf, runChecks, type VerifyContext } from "../src/index";
import { compareText } from "../src/lib/text";
import { compilePattern, MAX_PATTERN_LENGTH } from "../src/lib/regex";
import { check, emptyCtx, file } from "./support";

function run(params: Record<string, unknown>, ctx: VerifyContext, over: Partial<CheckSpec> = {}) {
  const [outcome] = runChecks([{ ...check("text_matches", params), ...over }], ctx);
  if (outcome === undefined) throw new Error("no outcome");
  return outcome;
}
const stdout = (text: string) => emptyCtx({ stdout: text });
const tol = { atol: 1e-12, rtol: 1e-9 };
const cmp = (actual: string, expected: string, mode: Parameters<typeof compareText>[2]["mode"], over: Partial<Parameters<typeof compareText>[2]> = {}, limit?: number) =>
  compareText(actual, expected, { mode, tol, caseSensitive: true, ...over }, limit);

describe("text_matches", () => {
  it("compares stdout line by line by default, ignoring trailing whitespace and blank lines", () => {
    const o = run({ expected: "a 1\nb 2\n" }, stdout("a 1  \r\nb 2\t\n\n\n"));
    expect(o).toMatchObject({ passed: true, message: "stdout matches the expected text (lines): all 2 lines match", params: { mode: "lines" } });
    expect(run({ expected: "a 1\nb 2" }, stdout(" a 1\nb 2")).passed).toBe(false);
  });

  it("fails on a differing line, saying where and what", () => {
    const o = run({ expected: "a\nb\nc" }, stdout("a\nB\nc"));
    expect(o).toMatchObject({ passed: false, message: 'stdout differs from the expected text (lines): 1 line differs (3 lines produced); line 2: expected "b", found "B"' });
    expect(o.findings).toEqual([{ where: "line 2", actual: '"B"', expected: '"b"' }]);
  });

  it("fails on one line too few and one line too many", () => {
    const short = run({ expected: "a\nb\nc" }, stdout("a\nb"));
    expect(short).toMatchObject({ passed: false, message: 'stdout differs from the expected text (lines): 1 line differs (2 lines produced); line 3: expected "c", found (no such line)' });
    const long = run({ expected: "a\nb" }, stdout("a\nb\nc"));
    expect(long).toMatchObject({ passed: false, message: 'stdout differs from the expected text (lines): 1 line differs (3 lines produced); line 3: expected (nothing), found "c"' });
    expect(long.findings).toEqual([{ where: "line 3", actual: '"c"', note: "an extra line" }]);
    expect(run({ expected: "a" }, stdout("")).message).toBe('stdout differs from the expected text (lines): 1 line differs (0 lines produced); line 1: expected "a", found (no such line)');
    expect(run({ expected: "a\nb" }, stdout("x\ny\nz")).message).toMatch(/: 3 lines differ \(3 lines produced\); line 1: .*; line 2: .*; line 3: /);
    expect(run({ expected: "a\nb" }, stdout("x")).message).toMatch(/: 2 lines differ \(1 line produced\); /);
  });

  it("folds case when case_sensitive is false", () => {
    expect(run({ expected: "Hello\nWorld", case_sensitive: false }, stdout("hello\nWORLD")).passed).toBe(true);
    expect(run({ expected: "Hello\nWorld", case_sensitive: false }, stdout("hello\nWORD")).passed).toBe(false);
    expect(run({ expected: "Hello", mode: "exact", case_sensitive: false }, stdout("HELLO")).passed).toBe(true);
    expect(run({ expected: "a B", mode: "tokens", case_sensitive: false }, stdout("A b")).passed).toBe(true);
    expect(run({ expected: "x NA", mode: "floats", case_sensitive: false }, stdout("X na")).passed).toBe(true);
    expect(run({ expected: "b\nA", mode: "unordered_lines", case_sensitive: false }, stdout("a\nB")).passed).toBe(true);
  });

  it("exact: byte for byte, locating the first difference", () => {
    expect(run({ expected: "a\nb\n", mode: "exact" }, stdout("a\nb\n"))).toMatchObject({ passed: true, message: "stdout matches the expected text (exact): the text is identical" });
    const o = run({ expected: "a\nb\n", mode: "exact" }, stdout("a\nb \n"));
    expect(o).toMatchObject({ passed: false, message: 'stdout differs from the expected text (exact): the text differs from character 4 (line 2) on; 5 characters produced; character 4 (line 2): expected "\\n", found " \\n"' });
    expect(o.findings).toEqual([{ where: "character 4 (line 2)", actual: '" \\n"', expected: '"\\n"', note: "lengths: 5 produced, 4 expected" }]);
    expect(run({ expected: "ab", mode: "exact" }, stdout("a")).message).toContain("character 2 (line 1): expected \"b\", found \"\"");
    expect(run({ expected: "a", mode: "exact" }, stdout("ab")).message).toContain("character 2 (line 1): expected \"\", found \"b\"");
    expect(run({ expected: "x", mode: "exact" }, stdout("y")).message).toContain("from character 1 (line 1) on; 1 characters produced");
  });

  it("exact shows at most 60 characters from the difference on", () => {
    const r = cmp(`${"x".repeat(100)}`, `${"y".repeat(100)}`, "exact");
    expect(r.differences[0]!.actual).toBe(JSON.stringify("x".repeat(60)));
  });

  it("tokens: whitespace-separated, layout ignored", () => {
    expect(run({ expected: "1 2\n3", mode: "tokens" }, stdout("1\n2   3  \n"))).toMatchObject({ passed: true, message: "stdout matches the expected text (tokens): all 3 tokens match" });
    const o = run({ expected: "1 2 3", mode: "tokens" }, stdout("1 2 4"));
    expect(o).toMatchObject({ passed: false, message: 'stdout differs from the expected text (tokens): 1 token differs (3 tokens produced); token 3: expected "3", found "4"' });
    expect(run({ expected: "1.0", mode: "tokens" }, stdout("1")).passed).toBe(false);
    const missing = run({ expected: "1 2", mode: "tokens" }, stdout("1"));
    expect(missing.message).toBe('stdout differs from the expected text (tokens): 1 token differs (1 token produced); token 2: expected "2", found (no such token)');
    const extra = run({ expected: "1", mode: "tokens" }, stdout("1 2"));
    expect(extra.findings).toEqual([{ where: "token 2", actual: '"2"', note: "an extra token" }]);
    expect(run({ expected: "a b", mode: "tokens" }, stdout("c d")).message).toMatch(/: 2 tokens differ \(2 tokens produced\)/);
  });

  it("floats: numbers within atol, both directions", () => {
    const p = { expected: "x 10.0", mode: "floats", atol: 0.5, rtol: 0 };
    expect(run(p, stdout("x 10.5"))).toMatchObject({ passed: true, message: "stdout matches the expected text (floats): all 2 tokens match" });
    expect(run(p, stdout("x 9.5")).passed).toBe(true);
    const o = run(p, stdout("x 10.5001"));
    expect(o.passed).toBe(false);
    expect(o.findings).toEqual([{ where: "token 2", actual: '"10.5001"', expected: '"10.0"', note: "differs by 0.5001, more than the allowed 0.5 (atol 0.5 + rtol 0 × |expected|)" }]);
    expect(run(p, stdout("x 9.4999")).passed).toBe(false);
  });

  it("floats: rtol relative to the expected value", () => {
    const p = { expected: "200", mode: "floats", atol: 0, rtol: 0.01 };
    expect(run(p, stdout("202")).passed).toBe(true);
    expect(run(p, stdout("202.01")).passed).toBe(false);
    expect(run(p, stdout("198")).passed).toBe(true);
    expect(run(p, stdout("197.99")).passed).toBe(false);
  });

  it("floats: integers beyond 2^53 exactly, text tokens exactly, a number never equal to text", () => {
    expect(run({ expected: "9007199254740993", mode: "floats" }, stdout("9007199254740993")).passed).toBe(true);
    expect(run({ expected: "9007199254740993", mode: "floats", atol: 10 }, stdout("9007199254740992")).passed).toBe(false);
    expect(run({ expected: "total 3", mode: "floats" }, stdout("sum 3")).findings).toEqual([{ where: "token 1", actual: '"sum"', expected: '"total"', note: "text differs" }]);
    expect(run({ expected: "3", mode: "floats" }, stdout("three")).findings).toEqual([{ where: "token 1", actual: '"three"', expected: '"3"', note: "a number against text" }]);
    expect(run({ expected: "three", mode: "floats" }, stdout("3")).findings).toEqual([{ where: "token 1", actual: '"3"', expected: '"three"', note: "a number against text" }]);
    expect(run({ expected: "1 2", mode: "floats" }, stdout("1")).passed).toBe(false);
    expect(run({ expected: "1", mode: "floats" }, stdout("1 2")).passed).toBe(false);
    expect(run({ expected: "0.3", mode: "floats" }, stdout("0.30000000000000004")).passed).toBe(true);
    expect(run({ expected: "3", mode: "floats" }, stdout("3.0")).passed).toBe(true);
  });

  it("unordered_lines: the same lines as a multiset", () => {
    expect(run({ expected: "a\nb\nb", mode: "unordered_lines" }, stdout("b\na\nb\n"))).toMatchObject({ passed: true, message: "stdout matches the expected text (unordered_lines): all 3 lines match (in any order)" });
    const o = run({ expected: "a\nb\nb", mode: "unordered_lines" }, stdout("b\na\na"));
    expect(o).toMatchObject({ passed: false, message: 'stdout differs from the expected text (unordered_lines): 1 expected line missing, 1 produced line unmatched (3 lines produced); an expected line: expected "b", found (nothing); a produced line: expected (nothing), found "a"' });
    expect(o.findings).toEqual([
      { where: "an expected line", expected: '"b"', note: "no produced line matches it" },
      { where: "a produced line", actual: '"a"', note: "matches no expected line" },
    ]);
    const two = run({ expected: "a\nb\nc", mode: "unordered_lines" }, stdout("x\ny\nz\nw"));
    expect(two.message).toMatch(/: 3 expected lines missing, 4 produced lines unmatched \(4 lines produced\); /);
    expect(run({ expected: "a\nb", mode: "unordered_lines" }, stdout("a")).message).toMatch(/: 1 expected line missing, 0 produced lines unmatched/);
    expect(run({ expected: "a", mode: "unordered_lines" }, stdout("a\na")).passed).toBe(false);
  });

  it("bounds its findings by max_findings but counts every difference", () => {
    const expected = Array.from({ length: 30 }, (_, i) => `${i}`).join("\n");
    const actual = Array.from({ length: 30 }, (_, i) => `${i + 1}`).join("\n");
    expect(run({ expected }, stdout(actual)).findings).toHaveLength(10);
    const three = run({ expected, max_findings: 3 }, stdout(actual));
    expect(three.findings).toHaveLength(3);
    expect(three.message).toMatch(/30 lines differ/);
    expect(cmp(actual, expected, "lines", {}, 2)).toMatchObject({ equal: false, count: 30 });
  });

  it("reads a text artifact, and fails closed when it is missing or not UTF-8", () => {
    const ctx = emptyCtx({ artifacts: [file("answer.txt", "42\n")] });
    expect(run({ artifact: "answer.txt", expected: "42" }, ctx)).toMatchObject({ passed: true, message: 'artifact "answer.txt" matches the expected text (lines): all 1 lines match' });
    expect(run({ artifact: "answer.txt", expected: "43" }, ctx).passed).toBe(false);
    expect(run({ artifact: "other.txt", expected: "42" }, ctx)).toMatchObject({ passed: false, message: 'artifact "other.txt" was not returned (returned artifacts: "answer.txt")' });
    const bad = emptyCtx({ artifacts: [file("answer.txt", Buffer.from([0x34, 0xff]))] });
    expect(run({ artifact: "answer.txt", expected: "4" }, bad)).toMatchObject({ passed: false, message: 'artifact "answer.txt" is not valid UTF-8 (2 bytes)' });
  });

  it("refuses a clipped stdout instead of comparing part of it", () => {
    const clipped = "line 1\n…[clipped 12345 bytes]…\nline 999\n";
    const o = run({ expected: "line 1\nline 999" }, stdout(clipped));
    expect(o).toMatchObject({ passed: false, message: "stdout was clipped by the sandbox's output limit, so it cannot be compared; write long output to a file under OUTPUT_DIR" });
    // Only the sandbox's own marker counts, and only on stdout.
    expect(run({ expected: "…[clipped 1 bytes]…" }, stdout("…[clipped 1 bytes]…")).passed).toBe(true);
    expect(run({ artifact: "a.txt", expected: clipped }, emptyCtx({ artifacts: [file("a.txt", clipped)] })).passed).toBe(true);
  });

  it("reads the expected text from a checker file (hidden), failing closed when absent or not UTF-8", () => {
    const spec = check("text_matches", { expected_file: "want.txt" });
    expect(checkerFilesOf(spec)).toEqual(["want.txt"]);
    expect(checkerFilesOf(check("text_matches", { expected: "x" }))).toEqual([]);
    const ctx = emptyCtx({ stdout: "secret 42\n", checkerFiles: [file("want.txt", "secret 42")] });
    expect(run({ expected_file: "want.txt" }, ctx).passed).toBe(true);
    const wrong = run({ expected_file: "want.txt" }, emptyCtx({ stdout: "secret 41\n", checkerFiles: [file("want.txt", "secret 42")] }), { hidden: true, reveal: "verdict" });
    expect(wrong.passed).toBe(false);
    expect(wrong.feedback).toBe("stdout differs from the expected text (lines): 1 line differs (1 line produced)\n  - line 1");
    const right = run({ expected_file: "want.txt" }, ctx, { hidden: true });
    expect(right.feedback).toBe("stdout matches (lines)");
    expect(run({ expected_file: "want.txt" }, stdout("x"))).toMatchObject({ passed: false, message: 'checker file "want.txt" is not among the goal\'s checker_files' });
    const bad = emptyCtx({ stdout: "x", checkerFiles: [file("want.txt", Buffer.from([0xc3]))] });
    expect(run({ expected_file: "want.txt" }, bad)).toMatchObject({ passed: false, message: 'checker file "want.txt" is not valid UTF-8 (1 bytes)' });
  });

  it("validates its params", () => {
    expect(run({}, stdout("x")).message).toBe("invalid params: expected: give exactly one of expected or expected_file");
    expect(run({ expected: "x", expected_file: "want.txt" }, stdout("x")).message).toBe("invalid params: expected: give exactly one of expected or expected_file");
    expect(run({ expected: "x", mode: "fuzzy" }, stdout("x")).message).toMatch(/^invalid params: mode: /);
    expect(run({ expected: "x".repeat(1024 * 1024 + 1) }, stdout("x")).message).toMatch(/^invalid params: expected: /);
    expect(run({ expected: "" }, stdout("")).passed).toBe(true);
  });
});

describe("text_matches: what mutation testing found untested (issue 18)", () => {
  it("strips every kind of trailing whitespace from a line, vertical tab included", () => {
    expect(run({ expected: "a\nb" }, stdout("a\u000b\nb\f")).passed).toBe(true);
    expect(run({ expected: "a\nb" }, stdout("a\u000bx\nb")).passed).toBe(false);
  });

  it("folds case to lower case, so ß is not ss", () => {
    expect(run({ expected: "straße", case_sensitive: false }, stdout("STRASSE")).passed).toBe(false);
    expect(run({ expected: "STRASSE", case_sensitive: false }, stdout("strasse")).passed).toBe(true);
  });

  it("names a missing line or token in the finding's note", () => {
    expect(run({ expected: "a\nb" }, stdout("a")).findings).toStrictEqual([{ where: "line 2", actual: "(no such line)", expected: '"b"', note: "a line is missing" }]);
    expect(run({ expected: "1 2", mode: "tokens" }, stdout("1")).findings).toStrictEqual([{ where: "token 2", actual: "(no such token)", expected: '"2"', note: "a token is missing" }]);
    expect(run({ expected: "1", mode: "tokens" }, stdout("1 2")).findings).toStrictEqual([{ where: "token 2", actual: '"2"', note: "an extra token" }]);
  });

  it("puts only the keys a difference has in its finding", () => {
    expect(run({ expected: "a\nb" }, stdout("a\nc")).findings).toStrictEqual([{ where: "line 2", actual: '"c"', expected: '"b"' }]);
    expect(run({ expected: "a" }, stdout("a\nc")).findings).toStrictEqual([{ where: "line 2", actual: '"c"', note: "an extra line" }]);
    expect(run({ expected: "a\nb", mode: "unordered_lines" }, stdout("a")).findings).toStrictEqual([{ where: "an expected line", expected: '"b"', note: "no produced line matches it" }]);
  });

  it("quotes the first three differences in its message, not more", () => {
    const o = run({ expected: "a\nb\nc\nd" }, stdout("w\nx\ny\nz"));
    expect(o.message).toContain("line 3: ");
    expect(o.message).not.toContain("line 4");
    expect(o.findings).toHaveLength(4);
  });
});

describe("compilePattern", () => {
  it("compiles RE2 patterns, optionally case-insensitive, unanchored", () => {
    const p = compilePattern("b+");
    expect(p.ok && p.pattern.test("abbc")).toBe(true);
    expect(p.ok && p.pattern.test("ac")).toBe(false);
    expect(p.ok && p.pattern.source).toBe("b+");
    const i = compilePattern("^abc$", "i");
    expect(i.ok && i.pattern.test("ABC")).toBe(true);
    const s = compilePattern("^abc$");
    expect(s.ok && s.pattern.test("ABC")).toBe(false);
    const other = compilePattern("^abc$", "g");
    expect(other.ok && other.pattern.test("ABC")).toBe(false);
  });

  it("refuses patterns that are too long or not RE2", () => {
    expect(compilePattern("a".repeat(MAX_PATTERN_LENGTH)).ok).toBe(true);
    expect(compilePattern("a".repeat(MAX_PATTERN_LENGTH + 1))).toEqual({ ok: false, message: "pattern is 1001 characters, more than 1000" });
    const back = compilePattern("(a)\\1");
    expect(back.ok).toBe(false);
    expect(!back.ok && back.message).toMatch(/^pattern "\(a\)\\\\1" is not a valid RE2 regular expression \(.+\); RE2 has no backreferences or lookaround$/);
  });
});
