// The verifier's core without services (issue 18): what a model is shown of a hidden check at each
// reveal level, how values and paths are named in messages, artifact lookups and their failures, and the
// runner's fail-closed handling of what a check returns.
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { checkerFilesOf, checkRegistry, defineAlias, defineCheck, feedbackFor, isArtifactPath, knownCheckIds, listChecks, planCheckRuns, publicCheck, runCheck, runChecks, validateCheckSpec, visibilityOf, type CheckDef } from "../src/index";
import { artifactName, checkerFileName, decodeUtf8, findArtifact, findCheckerFile, findInput, loadJson, parseJsonFile } from "../src/artifacts";
import { clipText, describeValue, fmtNumber, listQuoted, preview } from "../src/format";
import { dotPath, isPlainObject, jsonPointer, pointerTokens, resolvePath, resolvePointer, showPath } from "../src/json-path";
import { fullMessage, renderFinding } from "../src/reveal";
import { check, ctxWith, emptyCtx, file } from "./support";

const FINDING = { where: "row 2", input: "id=7", actual: "41", expected: "42", note: "differs by 1" };

describe("reveal", () => {
  it("renders a finding at each level", () => {
    expect(renderFinding(FINDING, "verdict")).toBe("row 2");
    expect(renderFinding(FINDING, "input")).toBe("row 2 | input: id=7 | got: 41");
    expect(renderFinding(FINDING, "full")).toBe("row 2 | input: id=7 | got: 41 | expected: 42 | differs by 1");
    expect(renderFinding({ where: "w" }, "full")).toBe("w");
  });

  it("clips each field at 300 characters and the note at 1500", () => {
    const long = "x".repeat(301);
    expect(renderFinding({ where: long, actual: "y".repeat(300) }, "input")).toBe(`${"x".repeat(300)}… | got: ${"y".repeat(300)}`);
    expect(renderFinding({ where: "w", note: "n".repeat(1501) }, "full")).toBe(`w | ${"n".repeat(1500)}…`);
    expect(renderFinding({ where: "w", note: "n".repeat(1500) }, "full")).toBe(`w | ${"n".repeat(1500)}`);
    expect(renderFinding({ where: "w", expected: "e".repeat(301) }, "full")).toBe(`w | expected: ${"e".repeat(300)}…`);
  });

  it("a visible check shows everything; a hidden one its public message, or only passed/failed", () => {
    const r = { passed: false, message: "full story 42", publicMessage: "3 cells differ", findings: [FINDING] };
    expect(feedbackFor(r, { hidden: false, reveal: "verdict" })).toBe("full story 42\n  - row 2 | input: id=7 | got: 41 | expected: 42 | differs by 1");
    expect(feedbackFor(r, { hidden: true, reveal: "verdict" })).toBe("3 cells differ\n  - row 2");
    expect(feedbackFor(r, { hidden: true, reveal: "input" })).toBe("3 cells differ\n  - row 2 | input: id=7 | got: 41");
    const { publicMessage: _, ...bare } = r;
    expect(feedbackFor({ ...bare, findings: [] }, { hidden: true, reveal: "full" })).toBe("failed");
    expect(feedbackFor({ ...bare, passed: true, findings: [] }, { hidden: true, reveal: "full" })).toBe("passed");
  });

  it("shows ten findings and counts the rest; bounds the whole text", () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ where: `row ${i}` }));
    const text = feedbackFor({ passed: false, message: "m", findings: many }, { hidden: false, reveal: "full" });
    expect(text.split("\n")).toEqual(["m", ...many.slice(0, 10).map((f) => `  - ${f.where}`), "  - … 2 more"]);
    expect(feedbackFor({ passed: false, message: "m", findings: many.slice(0, 10) }, { hidden: false, reveal: "full" }).split("\n")).toHaveLength(11);
    const big = feedbackFor({ passed: false, message: "m".repeat(5000), findings: [] }, { hidden: false, reveal: "full" });
    expect(big).toBe(`${"m".repeat(4000)}…`);
    expect(feedbackFor({ passed: false, message: "m".repeat(4000), findings: [] }, { hidden: false, reveal: "full" })).toBe("m".repeat(4000));
  });

  it("the client's message is clipped at 2000 characters", () => {
    expect(fullMessage({ passed: false, message: "a".repeat(2001), findings: [] })).toBe(`${"a".repeat(2000)}…`);
    expect(fullMessage({ passed: false, message: "a".repeat(2000), findings: [] })).toBe("a".repeat(2000));
  });
});

describe("format", () => {
  it("fmtNumber: integers as they are, floats to 12 significant digits", () => {
    expect(fmtNumber(9007199254740993)).toBe("9007199254740992");
    expect(fmtNumber(35145.649999999994)).toBe("35145.65");
    expect(fmtNumber(0.1 + 0.2)).toBe("0.3");
    expect(fmtNumber(1e21)).toBe("1e+21");
    expect(fmtNumber(Number.NaN)).toBe("NaN");
    expect(fmtNumber(-Infinity)).toBe("-Infinity");
    expect(fmtNumber(1.23456789012345)).toBe("1.23456789012");
  });

  it("preview: JSON-ish and bounded", () => {
    expect(preview(0.1 + 0.2)).toBe("0.3");
    expect(preview(undefined)).toBe("undefined");
    expect(preview("a")).toBe('"a"');
    expect(preview({ a: [1, 2n ** 70n] })).toBe('{"a":[1,1180591620717411303424]}');
    expect(preview("x".repeat(100))).toBe(`"${"x".repeat(79)}…`);
    expect(preview("x".repeat(78))).toBe(`"${"x".repeat(78)}"`);
    expect(preview("abcdef", 3)).toBe('"ab…');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => preview(cyclic)).not.toThrow();
  });

  it("describeValue names what a value is", () => {
    expect(describeValue(null)).toBe("null");
    expect(describeValue([1])).toBe("an array of 1 item");
    expect(describeValue([])).toBe("an array of 0 items");
    expect(describeValue("s")).toBe('a string ("s")');
    expect(describeValue(2.5)).toBe("a number (2.5)");
    expect(describeValue(Number.NaN)).toBe("a non-finite number (NaN)");
    expect(describeValue(12n)).toBe("a number (12)");
    expect(describeValue(false)).toBe("a boolean (false)");
    expect(describeValue({ a: 1 })).toBe("an object with 1 key");
    expect(describeValue({ a: 1, b: 2 })).toBe("an object with 2 keys");
    expect(describeValue(undefined)).toBe("undefined");
  });

  it("listQuoted and clipText cut at their bounds", () => {
    expect(listQuoted(["a", "b"])).toBe('"a", "b"');
    expect(listQuoted(["a", "b", "c"], 2)).toBe('"a", "b" and 1 more');
    expect(listQuoted(Array.from({ length: 10 }, (_, i) => `${i}`))).not.toContain("more");
    expect(listQuoted(Array.from({ length: 11 }, (_, i) => `${i}`))).toMatch(/"9" and 1 more$/);
    expect(clipText("abc", 2)).toBe("ab…");
    expect(clipText("ab", 2)).toBe("ab");
    expect(clipText("y".repeat(301))).toBe(`${"y".repeat(300)}…`);
  });
});

describe("artifacts", () => {
  it("isArtifactPath: relative, at most 8 plain segments of 128 characters, 512 in all", () => {
    for (const p of ["result.json", "a/b.csv", "a-b_c.d", Array(8).fill("d").join("/"), "x".repeat(128)]) expect(isArtifactPath(p), p).toBe(true);
    for (const p of ["", "/abs", "a//b", "a/./b", "..", ".", "a/../b", "a b", "a\\b", Array(9).fill("d").join("/"), "x".repeat(129), "é.csv"]) expect(isArtifactPath(p), p).toBe(false);
    const long = Array(5).fill("y".repeat(102)).join("/");
    expect(long.length).toBe(514);
    expect(isArtifactPath(long)).toBe(false);
    expect(isArtifactPath(Array(4).fill("y".repeat(127)).join("/"))).toBe(true);
  });

  it("param schemas say what is wrong", () => {
    expect(artifactName.safeParse(undefined).error?.issues[0]?.message).toBe("required");
    expect(artifactName.safeParse("../x").error?.issues[0]?.message).toBe('a relative path under the output directory, e.g. "clean.csv" or "reports/summary.json"');
    expect(artifactName.safeParse(5).error?.issues[0]?.message).not.toBe("required");
    expect(checkerFileName.safeParse(undefined).error?.issues[0]?.message).toBe("required");
    expect(checkerFileName.safeParse("-x").error?.issues[0]?.message).toBe("the name of one of the goal's checker_files");
    expect(checkerFileName.safeParse("a/b").success).toBe(false);
    expect(checkerFileName.safeParse("x".repeat(128)).success).toBe(true);
    expect(checkerFileName.safeParse("x".repeat(129)).success).toBe(false);
  });

  it("missing artifacts say why: the sandbox's reason, what came back, collection errors", () => {
    expect(findArtifact({ artifacts: [], artifactErrors: ["a.csv: too big", "a.csv.bak: x", "b: y"] }, "a.csv")).toEqual({ ok: false, message: 'artifact "a.csv" was not returned: a.csv: too big' });
    expect(findArtifact({ artifacts: [], artifactErrors: ["a.csv: too big", "a.csv: twice"] }, "a.csv")).toEqual({ ok: false, message: 'artifact "a.csv" was not returned: a.csv: too big; a.csv: twice' });
    expect(findArtifact({ artifacts: [file("b", "")], artifactErrors: ["e1", "e2", "e3", "e4"] }, "a")).toEqual({ ok: false, message: 'artifact "a" was not returned (returned artifacts: "b"; collection errors: e1; e2; e3)' });
    expect(findArtifact({ artifacts: [file("a", "x")], artifactErrors: [] }, "a")).toEqual({ ok: true, value: Buffer.from("x") });
  });

  it("checker files and inputs by name", () => {
    expect(findCheckerFile({ checkerFiles: [] }, "c")).toEqual({ ok: false, message: 'checker file "c" is not among the goal\'s checker_files' });
    expect(findCheckerFile({ checkerFiles: [file("c", "1")] }, "c")).toEqual({ ok: true, value: Buffer.from("1") });
    expect(findInput({ inputs: [] }, "i")).toEqual({ ok: false, message: 'input "i" is not among the goal\'s inputs (none)' });
    expect(findInput({ inputs: [file("a", ""), file("b", "")] }, "i")).toEqual({ ok: false, message: 'input "i" is not among the goal\'s inputs ("a", "b")' });
    expect(findInput({ inputs: [file("i", "2")] }, "i")).toEqual({ ok: true, value: Buffer.from("2") });
  });

  it("decodes UTF-8 strictly and parses JSON exactly", () => {
    expect(decodeUtf8("x", Buffer.from("é"))).toEqual({ ok: true, value: "é" });
    expect(decodeUtf8("x", Buffer.from([0xc3]))).toEqual({ ok: false, message: "x is not valid UTF-8 (1 bytes)" });
    expect(parseJsonFile("f", Buffer.from(" \n"))).toEqual({ ok: false, message: "f is empty (2 bytes), expected JSON" });
    expect(parseJsonFile("f", Buffer.from("{}x"))).toEqual({ ok: false, message: "f is not valid JSON: unexpected data after the JSON value at line 1, column 3" });
    expect(parseJsonFile("f", Buffer.from("9007199254740993"))).toEqual({ ok: true, value: 9007199254740993n });
  });

  it("loadJson: exact by default, plain numbers on request, the same refusals either way", () => {
    const ctx = ctxWith("\uFEFF[9007199254740993]");
    expect(loadJson(ctx, "result.json")).toEqual({ ok: true, value: [9007199254740993n] });
    expect(loadJson(ctx, "result.json", { exact: true })).toEqual({ ok: true, value: [9007199254740993n] });
    expect(loadJson(ctx, "result.json", { exact: false })).toEqual({ ok: true, value: [9007199254740992] });
    expect(loadJson(ctxWith('{"a": 1, "a": 2}'), "result.json", { exact: false }).ok).toBe(false);
    expect(loadJson(emptyCtx(), "result.json", { exact: false }).ok).toBe(false);
    // "required" names a missing value only; a value of the wrong type keeps zod's own message.
    for (const schema of [checkerFileName, dotPath]) {
      expect(schema.safeParse(undefined).error?.issues[0]?.message).toBe("required");
      expect(schema.safeParse(5).error?.issues[0]?.message).toMatch(/^Invalid input: expected string/);
    }
    // The depth limit, both ways: 256 levels read, 257 refused by the exact reader before JSON.parse runs.
    const nested = (n: number) => ctxWith("[".repeat(n) + "]".repeat(n));
    expect(loadJson(nested(256), "result.json", { exact: false }).ok).toBe(true);
    expect(loadJson(nested(257), "result.json", { exact: false })).toEqual({ ok: false, message: 'artifact "result.json" is not valid JSON: nested deeper than 256 levels at line 1, column 257' });
  });
});

describe("json-path", () => {
  it("showPath and isPlainObject", () => {
    expect(showPath("")).toBe("the root");
    expect(showPath("a.b")).toBe('"a.b"');
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject("x")).toBe(false);
  });

  it("dot paths: array indexes at the edge of the array, messages naming the root", () => {
    expect(resolvePath([1, 2], "1")).toEqual({ ok: true, value: 2 });
    expect(resolvePath([1, 2], "2")).toEqual({ ok: false, message: 'path "2" does not resolve: index 2 is out of range for the array at the root (length 2)' });
    expect(resolvePath([1], "0x")).toEqual({ ok: false, message: 'path "0x" does not resolve: "0x" is not an index into the array at the root' });
    expect(resolvePath([1], "x0").ok).toBe(false);
    expect(resolvePath(5, "a")).toEqual({ ok: false, message: 'path "a" does not resolve: the value at the root is a number (5), not an object or array' });
    expect(resolvePath(null, "a").ok).toBe(false);
    expect(resolvePath({ a: [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]] }, "a.0.10")).toEqual({ ok: true, value: 10 });
  });

  it("JSON Pointers: escapes, indexes, where they stop", () => {
    const doc = { "a/b": { "m~n": [0, { x: 1 }] } };
    expect(pointerTokens("")).toEqual([]);
    expect(pointerTokens("/a~1b/m~0n/1")).toEqual(["a/b", "m~n", "1"]);
    expect(pointerTokens("/~01")).toEqual(["~1"]);
    expect(resolvePointer(doc, "/a~1b/m~0n/1/x")).toEqual({ ok: true, value: 1 });
    expect(resolvePointer(doc, "")).toEqual({ ok: true, value: doc });
    expect(resolvePointer(doc, "/a~1b/m~0n/2")).toEqual({ ok: false, message: 'pointer "/a~1b/m~0n/2" does not resolve: index 2 is out of range for the array at /a~1b/m~0n (length 2)' });
    expect(resolvePointer(doc, "/zz")).toEqual({ ok: false, message: 'pointer "/zz" does not resolve: key "zz" not found in the object at the root' });
    expect(resolvePointer({ "": 3 }, "/")).toEqual({ ok: true, value: 3 });
  });

  it("jsonPointer params: RFC 6901 syntax, bounded", () => {
    for (const p of ["", "/", "/a", "/a~0b/~1", "/0"]) expect(jsonPointer.safeParse(p).success, p).toBe(true);
    for (const p of ["a", "/a~2", "/a~", "~0"]) expect(jsonPointer.safeParse(p).success, p).toBe(false);
    expect(jsonPointer.safeParse(`/${"a".repeat(999)}`).success).toBe(true);
    expect(jsonPointer.safeParse(`/${"a".repeat(1000)}`).success).toBe(false);
    expect(jsonPointer.safeParse("a").error?.issues[0]?.message).toBe('must be a JSON Pointer: "" for the whole document, or "/key/0/..." (escape "/" as ~1 and "~" as ~0)');
  });
});

/** A check that returns whatever it is given, to test how the runner treats a check's result. */
function rawCheck(result: unknown, extra: Partial<CheckDef> = {}): CheckDef {
  return { description: "raw", params: z.strictObject({}), example: {}, publicParams: [], run: () => result as never, ...extra };
}
function withCheck<T>(id: string, def: CheckDef, fn: () => T): T {
  const map = checkRegistry as Map<string, CheckDef>;
  map.set(id, def);
  try {
    return fn();
  } finally {
    map.delete(id);
  }
}

describe("runCheck: what a check returns", () => {
  it("anything but a literal true fails", () => {
    for (const passed of ["true", 1, {}, null, undefined]) {
      const o = withCheck("raw_check", rawCheck({ passed, message: "m" }), () => runCheck(check("raw_check"), emptyCtx()));
      expect(o.passed, String(passed)).toBe(false);
    }
    expect(withCheck("raw_check", rawCheck({ passed: true, message: "m" }), () => runCheck(check("raw_check"), emptyCtx())).passed).toBe(true);
  });

  it("findings that are not an array count as none; at most 50 are kept", () => {
    const o = withCheck("raw_check", rawCheck({ passed: false, message: "m", findings: "lots" }), () => runCheck(check("raw_check"), emptyCtx()));
    expect(o.findings).toEqual([]);
    const many = Array.from({ length: 60 }, (_, i) => ({ where: `w${i}` }));
    const kept = withCheck("raw_check", rawCheck({ passed: false, message: "m", findings: many }), () => runCheck(check("raw_check"), emptyCtx()));
    expect(kept.findings).toHaveLength(50);
    expect(kept.findings![49]).toEqual({ where: "w49" });
  });

  it("makes messages and findings storable (no NUL, no lone surrogates)", () => {
    const o = withCheck("raw_check", rawCheck({ passed: false, message: "a\u0000b", findings: [{ where: "x\u0000", actual: "\ud800", line: 3 }] }), () => runCheck(check("raw_check"), emptyCtx()));
    expect(o.message).not.toContain("\u0000");
    expect(o.findings![0]!.where).not.toContain("\u0000");
    expect(o.findings![0]!.actual).not.toBe("\ud800");
    expect((o.findings![0] as unknown as { line: number }).line).toBe(3);
  });

  it("a hidden check's message falls back to passed/failed, or to the message when it is public", () => {
    const secret = withCheck("raw_check", rawCheck({ passed: false, message: "expected 42" }), () => runCheck({ ...check("raw_check"), hidden: true }, emptyCtx()));
    expect(secret).toMatchObject({ message: "expected 42", feedback: "failed", hidden: true });
    const open = withCheck("raw_check", rawCheck({ passed: false, message: "exit 1" }, { publicMessages: true }), () => runCheck({ ...check("raw_check"), hidden: true }, emptyCtx()));
    expect(open.feedback).toBe("exit 1");
  });

  it("a crash says so, and a hidden check does not quote the error", () => {
    const boom = rawCheck(null, { run: () => { throw new TypeError("secret 42"); } });
    const o = withCheck("raw_check", boom, () => runCheck({ ...check("raw_check"), hidden: true }, emptyCtx()));
    expect(o).toMatchObject({ passed: false, message: "check threw: TypeError: secret 42", feedback: "the check could not be evaluated (it crashed); it counts as failed" });
  });

  it("hands a check its own runs when given, the context's otherwise", () => {
    let seen: unknown;
    const spy = rawCheck(null, { run: (_p, ctx) => { seen = ctx.runs; return { passed: true, message: "ok" }; } });
    const mine = [{ ...emptyCtx(), exitCode: 3 }];
    withCheck("raw_check", spy, () => runCheck(check("raw_check"), emptyCtx({ runs: [] }), mine));
    expect(seen).toBe(mine);
    const ctxRuns = [{ ...emptyCtx(), exitCode: 4 }];
    withCheck("raw_check", spy, () => runCheck(check("raw_check"), emptyCtx({ runs: ctxRuns })));
    expect(seen).toBe(ctxRuns);
    withCheck("raw_check", spy, () => runChecks([check("raw_check")], emptyCtx({ runs: ctxRuns })));
    expect(seen).toEqual([]);
  });
});

describe("visibility, public params and planned runs", () => {
  const cases = check("cases", { function: "f", cases_file: "c.json" });
  it("a check that reads checker files is hidden unless the client says otherwise; reveal defaults to input", () => {
    expect(visibilityOf(cases)).toEqual({ hidden: true, reveal: "input" });
    expect(visibilityOf({ ...cases, hidden: false, reveal: "full" })).toEqual({ hidden: false, reveal: "full" });
    expect(visibilityOf(check("exits_clean"))).toEqual({ hidden: false, reveal: "input" });
    expect(visibilityOf({ ...check("exits_clean"), hidden: true })).toEqual({ hidden: true, reveal: "input" });
    expect(checkerFilesOf(check("no_such"))).toEqual([]);
    expect(checkerFilesOf(check("cases", { cases_file: 5 }))).toEqual([]);
    expect(checkerFilesOf(check("exits_clean"))).toEqual([]);
  });

  it("publicCheck keeps only public params of a hidden check, its effective ones", () => {
    expect(publicCheck(cases)).toEqual({ id: "cases", kind: "deterministic", description: "", hidden: true, params: { mode: "call", module: "solution", function: "f", timeout_seconds: 10, atol: 1e-12, rtol: 1e-9, ignore_order: false, sequence_types: "exact", stdout_mode: "lines", repeat: 1, rerun_failed: false } });
    const visible = check("json_matches", { expected: 5 });
    expect(publicCheck(visible)).toEqual({ id: "json_matches", kind: "deterministic", description: "", hidden: false, params: { expected: 5 } });
    expect(publicCheck({ ...check("no_such", { secret: 1 }), hidden: true }).params).toEqual({});
  });

  it("planCheckRuns: none for judgement checks, unknown ids, bad params, checks without runs, or a plan that throws", () => {
    const ctx = { program: { filename: "a.py", source: "" }, checkerFiles: [], inputs: [] };
    const inline = check("cases", { function: "f", cases: [{ args: [], expected: 1 }] });
    expect(planCheckRuns(inline, ctx)).toHaveLength(1);
    expect(planCheckRuns({ ...inline, kind: "judgement" } as CheckSpec, ctx)).toEqual([]);
    expect(planCheckRuns(check("no_such"), ctx)).toEqual([]);
    expect(planCheckRuns(check("cases", {}), ctx)).toEqual([]);
    expect(planCheckRuns(check("exits_clean"), ctx)).toEqual([]);
    const throwing = rawCheck(null, { sandbox: () => { throw new Error("x"); } });
    expect(withCheck("raw_check", throwing, () => planCheckRuns(check("raw_check"), ctx))).toEqual([]);
  });
});

describe("defineCheck and defineAlias", () => {
  it("passes publicMessages, checker files and sandbox plans through, and only when given", () => {
    const def = defineCheck({ description: "d", params: z.strictObject({ f: z.string() }), example: { f: "x" }, publicMessages: true, checkerFiles: (p) => [p.f], sandbox: () => [], run: () => ({ passed: true, message: "m" }) });
    expect(def.publicMessages).toBe(true);
    expect(def.checkerFiles!({ f: "c" })).toEqual(["c"]);
    expect(def.sandbox!({ f: "c" }, { program: { filename: "", source: "" }, checkerFiles: [], inputs: [] })).toEqual([]);
    expect(def.publicParams).toEqual([]);
    const bare = defineCheck({ description: "d", params: z.strictObject({}), example: {}, run: () => ({ passed: true, message: "m" }) });
    expect("publicMessages" in bare).toBe(false);
    expect("checkerFiles" in bare).toBe(false);
    expect("sandbox" in bare).toBe(false);
    const alias = defineAlias("t", def, "a", z.strictObject({ f: z.string().default("y") }), {});
    expect(alias).toMatchObject({ aliasOf: "t", publicMessages: true, description: "a" });
    expect("publicMessages" in defineAlias("t", bare, "a", z.strictObject({}), {})).toBe(false);
  });
});

describe("validateCheckSpec: checker files and judgement checks", () => {
  it("refuses a check naming checker files the goal does not carry, singular and plural", () => {
    const one = check("json_matches", { expected_file: "want.json" });
    expect(validateCheckSpec(one, { checkerFiles: ["want.json"] })).toEqual({ ok: true });
    expect(validateCheckSpec(one)).toEqual({ ok: false, issues: [{ path: ["params"], message: 'names checker file "want.json" that the goal\'s checker_files do not contain (none given)' }] });
    expect(validateCheckSpec(one, { checkerFiles: ["a.json", "b.json"] })).toEqual({ ok: false, issues: [{ path: ["params"], message: 'names checker file "want.json" that the goal\'s checker_files do not contain ("a.json", "b.json")' }] });
    const two = check("test_suite", { tests: ["test_a.py", "test_b.py"] });
    expect(validateCheckSpec(two, { checkerFiles: ["test_b.py"] })).toEqual({ ok: false, issues: [{ path: ["params"], message: 'names checker file "test_a.py" that the goal\'s checker_files do not contain ("test_b.py")' }] });
    expect(validateCheckSpec(two, { checkerFiles: [] }).ok).toBe(false);
    const none = validateCheckSpec(two, { checkerFiles: ["x.py"] });
    expect(none.ok === false && none.issues[0]!.message).toBe('names checker files "test_a.py", "test_b.py" that the goal\'s checker_files do not contain ("x.py")');
  });

  it("a judgement check is always valid, unless it is hidden", () => {
    const judgement = { id: "anything", params: { x: 1 }, kind: "judgement", description: "d" } as CheckSpec;
    expect(validateCheckSpec(judgement)).toEqual({ ok: true });
    expect(validateCheckSpec({ ...judgement, hidden: true })).toEqual({ ok: false, issues: [{ path: ["hidden"], message: "a judgement check is read by the inspector model, so it cannot be hidden" }] });
    expect(validateCheckSpec({ ...judgement, hidden: false })).toEqual({ ok: true });
  });

  it("puts param issues under params with their paths", () => {
    expect(validateCheckSpec(check("reconciles_total", { values_path: "a", total_path: "b", tolerance: -1 }))).toEqual({ ok: false, issues: [{ path: ["params", "tolerance"], message: expect.any(String) }] });
    expect(validateCheckSpec(check("nope"))).toEqual({ ok: false, issues: [{ path: ["id"], message: expect.stringMatching(/^unknown check id "nope"; known deterministic checks: exits_clean, /) }] });
  });
});

describe("the catalogue", () => {
  it("lists every check once, with its JSON Schema, and says which run code", () => {
    const list = listChecks();
    expect(list).toBe(listChecks());
    expect(list.map((c) => c.id)).toEqual(knownCheckIds());
    const byId = new Map(list.map((c) => [c.id, c]));
    expect(byId.get("cases")).toMatchObject({ runsCode: true, publicParams: expect.arrayContaining(["mode", "function"]) });
    expect(byId.get("test_suite")!.runsCode).toBe(true);
    expect(byId.get("exits_clean")).toMatchObject({ runsCode: false, params: { type: "object" }, example: {} });
    expect(byId.get("schema_ok")!.aliasOf).toBe("json_schema");
    expect("aliasOf" in byId.get("json_schema")!).toBe(false);
    expect(byId.get("reconciles_total")!.params).toMatchObject({ properties: { tolerance: { default: 0.01 } } });
  });

  it("is a Map, so prototype names are not checks", () => {
    expect(checkRegistry.get("constructor")).toBeUndefined();
    expect(checkRegistry.size).toBe(19);
  });
});

describe("verifier-core survivors (issue 18)", () => {
  it("an artifact path of exactly 512 characters is allowed, 513 is not", () => {
    const at = (last: number) => ["a".repeat(128), "b".repeat(128), "c".repeat(128), "d".repeat(last)].join("/");
    expect(at(125).length).toBe(512);
    expect(isArtifactPath(at(125))).toBe(true);
    expect(isArtifactPath(at(126))).toBe(false);
  });

  it("names what was returned, or that nothing was, and adds collection errors only when there are some", () => {
    expect(findArtifact({ artifacts: [], artifactErrors: [] }, "a")).toEqual({ ok: false, message: 'artifact "a" was not returned (no artifacts were returned)' });
    expect(findArtifact({ artifacts: [file("b", "")], artifactErrors: [] }, "a")).toEqual({ ok: false, message: 'artifact "a" was not returned (returned artifacts: "b")' });
  });

  it("finds a checker file by its own name only", () => {
    expect(findCheckerFile({ checkerFiles: [file("other", "1")] }, "c").ok).toBe(false);
  });

  it("parseJsonFile and loadJson say which file failed and why", () => {
    expect(parseJsonFile("f", Buffer.from([0xc3]))).toEqual({ ok: false, message: "f is not valid UTF-8 (1 bytes)" });
    const broken = loadJson(ctxWith("{"), "result.json", { exact: false });
    expect(broken.ok === false && broken.message).toMatch(/^artifact "result.json" is not valid JSON: /);
  });

  it("reads a document nested to the depth limit with plain numbers too", () => {
    const deep = `${"[".repeat(256)}${"]".repeat(256)}`;
    expect(loadJson(ctxWith(deep), "result.json").ok).toBe(true);
    expect(loadJson(ctxWith(deep), "result.json", { exact: false }).ok).toBe(true);
  });

  it("joins nested param paths with dots and several issues with semicolons", () => {
    const [nested] = runChecks([check("cases", { function: "f", cases: [{ args: [] }] })], emptyCtx());
    expect(nested!.message).toBe("invalid params: cases.0.expected: required in call mode (null is a value)");
    const [two] = runChecks([check("reconciles_total", {})], emptyCtx());
    expect(two!.message).toBe("invalid params: values_path: required; total_path: required");
  });
});
