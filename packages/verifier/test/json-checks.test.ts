// json_matches and json_assert judged on crafted artifacts, without services (issue 18: every fail-closed
// branch asserted on `passed`, both directions of every tolerance, every operator at its boundary).
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { checkerFilesOf, runChecks, visibilityOf, type VerifyContext } from "../src/index";
import { compareExact } from "../src/checks/json-assert";
import { differenceFinding } from "../src/checks/json-matches";
import { check, ctxWith, emptyCtx, file } from "./support";

function run(id: string, params: Record<string, unknown>, ctx: VerifyContext, over: Partial<CheckSpec> = {}) {
  const [outcome] = runChecks([{ ...check(id, params), ...over }], ctx);
  if (outcome === undefined) throw new Error("no outcome");
  return outcome;
}

const REPORT = { summary: { rows: 120, dropped: 0, share: 0.25, label: "clean", tags: ["a", "b"], note: null, ok: true }, big: 9007199254740993n };
/** The report as a program writes it (the big integer as its exact digits). */
const reportText = JSON.stringify(REPORT, (_k, v: unknown) => (typeof v === "bigint" ? `__big${v}` : v)).replace(/"__big(\d+)"/g, "$1");

describe("json_matches", () => {
  const matches = (params: Record<string, unknown>, doc: unknown = reportText, over: Partial<VerifyContext> = {}) => run("json_matches", params, ctxWith(doc, over));

  it("passes on an equal value, at the root and at a pointer", () => {
    const root = matches({ expected: JSON.parse(reportText.replace("9007199254740993", "1")) }, reportText.replace("9007199254740993", "1"));
    expect(root).toMatchObject({ passed: true, message: '"result.json" matches the expected value' });
    const part = matches({ pointer: "/summary/tags", expected: ["a", "b"] });
    expect(part).toMatchObject({ passed: true, message: '/summary/tags of "result.json" matches the expected value' });
  });

  it("fails on a difference, counting and locating it", () => {
    const o = matches({ pointer: "/summary", expected: { ...REPORT.summary, rows: 121, label: "dirty" } });
    expect(o.passed).toBe(false);
    expect(o.message).toBe('/summary of "result.json" differs from the expected value (2 differences): /summary/rows: differs - expected 121, found 120; /summary/label: differs - expected "dirty", found "clean"');
    expect(o.findings).toEqual([
      { where: "/summary/rows: differs", actual: "120", expected: "121", note: expect.stringContaining("differs by 1") },
      { where: "/summary/label: differs", actual: '"clean"', expected: '"dirty"' },
    ]);
  });

  it("says one difference in the singular, and names the whole value at the root", () => {
    const o = matches({ expected: 2 }, "1");
    expect(o).toMatchObject({ passed: false, message: '"result.json" differs from the expected value (1 difference): (the whole value): differs - expected 2, found 1' });
  });

  it("hides the expected value in its public message", () => {
    const o = matches({ pointer: "/summary/label", expected: "dirty" }, reportText, {});
    const hidden = run("json_matches", { pointer: "/summary/label", expected: "dirty" }, ctxWith(reportText), { hidden: true, reveal: "verdict" });
    expect(o.passed).toBe(false);
    expect(hidden.passed).toBe(false);
    expect(hidden.feedback).toBe('/summary/label of "result.json" differs from the expected value (1 difference) at: /summary/label: differs\n  - /summary/label: differs');
    expect(hidden.feedback).not.toContain("dirty");
  });

  it("lists at most five places in the public message and three in the full one", () => {
    const expected = Object.fromEntries(["a", "b", "c", "d", "e", "f"].map((k) => [k, 1]));
    const actual = Object.fromEntries(["a", "b", "c", "d", "e", "f"].map((k) => [k, 2]));
    const o = run("json_matches", { expected }, ctxWith(actual), { hidden: true, reveal: "verdict" });
    expect(o.passed).toBe(false);
    expect(o.message).toBe('"result.json" differs from the expected value (6 differences): /a: differs - expected 1, found 2; /b: differs - expected 1, found 2; /c: differs - expected 1, found 2');
    expect(o.feedback.split("\n")[0]).toBe('"result.json" differs from the expected value (6 differences) at: /a: differs; /b: differs; /c: differs; /d: differs; /e: differs');
  });

  it("bounds its findings by max_findings", () => {
    const expected = Array.from({ length: 20 }, (_, i) => i);
    const actual = Array.from({ length: 20 }, (_, i) => i + 100);
    expect(matches({ expected }, actual).findings).toHaveLength(10);
    expect(matches({ expected, max_findings: 3 }, actual).findings).toHaveLength(3);
    expect(matches({ expected, max_findings: 50 }, actual).findings).toHaveLength(20);
    expect(matches({ expected, max_findings: 0 }, actual).message).toMatch(/^invalid params: max_findings: /);
    expect(matches({ expected, max_findings: 51 }, actual).message).toMatch(/^invalid params: max_findings: /);
  });

  it("applies atol in both directions: just inside passes, just outside fails", () => {
    expect(matches({ expected: 10.0, atol: 0.5, rtol: 0 }, "10.5").passed).toBe(true);
    expect(matches({ expected: 10.0, atol: 0.5, rtol: 0 }, "9.5").passed).toBe(true);
    expect(matches({ expected: 10.0, atol: 0.5, rtol: 0 }, "10.5001").passed).toBe(false);
    expect(matches({ expected: 10.0, atol: 0.5, rtol: 0 }, "9.4999").passed).toBe(false);
  });

  it("applies rtol relative to the expected value", () => {
    expect(matches({ expected: 200, atol: 0, rtol: 0.01 }, "202").passed).toBe(true);
    expect(matches({ expected: 200, atol: 0, rtol: 0.01 }, "202.01").passed).toBe(false);
    expect(matches({ expected: 200, atol: 0, rtol: 0.01 }, "198").passed).toBe(true);
    expect(matches({ expected: 200, atol: 0, rtol: 0.01 }, "197.99").passed).toBe(false);
  });

  it("absorbs float noise by default but nothing more", () => {
    expect(matches({ expected: 0.3 }, "0.30000000000000004").passed).toBe(true);
    expect(matches({ expected: 0.3 }, "0.3001").passed).toBe(false);
  });

  it("compares integers beyond 2^53 exactly", () => {
    expect(matches({ pointer: "/big", expected_file: "big.json" }, reportText, { checkerFiles: [file("big.json", "9007199254740993")] }).passed).toBe(true);
    const off = matches({ pointer: "/big", expected_file: "big.json" }, reportText, { checkerFiles: [file("big.json", "9007199254740992")] });
    expect(off.passed).toBe(false);
  });

  it("compares arrays in order unless ignore_order", () => {
    expect(matches({ expected: [1, 2, 3] }, "[3, 2, 1]").passed).toBe(false);
    expect(matches({ expected: [1, 2, 3], ignore_order: true }, "[3, 2, 1]").passed).toBe(true);
    expect(matches({ expected: [1, 2, 2], ignore_order: true }, "[2, 1, 1]").passed).toBe(false);
  });

  it("reads the expected value from a checker file, which makes it hidden", () => {
    const spec = check("json_matches", { expected_file: "want.json" });
    expect(checkerFilesOf(spec)).toEqual(["want.json"]);
    expect(visibilityOf(spec).hidden).toBe(true);
    expect(checkerFilesOf(check("json_matches", { expected: 1 }))).toEqual([]);
    const ctx = ctxWith({ a: 1 }, { checkerFiles: [file("want.json", '{"a": 1}')] });
    expect(run("json_matches", { expected_file: "want.json" }, ctx).passed).toBe(true);
    const other = ctxWith({ a: 2 }, { checkerFiles: [file("want.json", '{"a": 1}')] });
    expect(run("json_matches", { expected_file: "want.json" }, other).passed).toBe(false);
  });

  it("fails closed on a missing or broken checker file", () => {
    const missing = run("json_matches", { expected_file: "want.json" }, ctxWith({ a: 1 }));
    expect(missing).toMatchObject({ passed: false, message: 'checker file "want.json" is not among the goal\'s checker_files' });
    const broken = run("json_matches", { expected_file: "want.json" }, ctxWith({ a: 1 }, { checkerFiles: [file("want.json", "{a: 1}")] }));
    expect(broken.passed).toBe(false);
    expect(broken.message).toMatch(/^checker file "want.json" is not valid JSON: expected a string key at line 1, column 2/);
  });

  it("fails closed on a missing artifact, a non-JSON artifact and a pointer that does not resolve", () => {
    expect(run("json_matches", { expected: 1 }, emptyCtx())).toMatchObject({ passed: false, message: 'artifact "result.json" was not returned (no artifacts were returned)' });
    expect(matches({ expected: 1 }, "one").passed).toBe(false);
    const o = matches({ pointer: "/summary/missing", expected: 1 });
    expect(o).toMatchObject({ passed: false, message: 'in "result.json", pointer "/summary/missing" does not resolve: key "missing" not found in the object at /summary' });
  });

  it("requires exactly one of expected and expected_file", () => {
    expect(matches({}).message).toBe("invalid params: expected: give exactly one of expected or expected_file");
    expect(matches({ expected: 1, expected_file: "want.json" }).message).toBe("invalid params: expected: give exactly one of expected or expected_file");
    // null is a value to expect, not an absent one.
    expect(matches({ pointer: "/summary/note", expected: null }).passed).toBe(true);
  });

  it("differenceFinding keeps only the fields a difference has", () => {
    expect(differenceFinding({ pointer: "/a", what: "is an unexpected key", actual: 1 })).toEqual({ where: "/a: is an unexpected key", actual: "1" });
    expect(differenceFinding({ pointer: "", what: "lacks an expected key", expected: { b: 2 } }, "/x")).toEqual({ where: "/x: lacks an expected key", expected: '{"b":2}' });
    expect(differenceFinding({ pointer: "", what: "differs", note: "n" })).toEqual({ where: "(the whole value): differs", note: "n" });
  });
});

describe("json_assert", () => {
  const assert = (pointer: string, op: string, value?: unknown, doc: unknown = reportText, extra: Record<string, unknown> = {}) =>
    run("json_assert", { pointer, op, ...(value === undefined ? {} : { value }), ...extra }, ctxWith(doc));

  it("eq and ne, deep and within tolerance", () => {
    expect(assert("/summary/tags", "eq", ["a", "b"])).toMatchObject({ passed: true, message: '/summary/tags of "result.json" equals ["a","b"]' });
    const o = assert("/summary/tags", "eq", ["a"]);
    expect(o).toMatchObject({ passed: false, message: '/summary/tags of "result.json" is an array of 2 items; expected ["a"]' });
    expect(o.findings).toEqual([{ where: "/summary/tags", actual: '["a","b"]', expected: 'expected ["a"]' }]);
    // Binary-exact values (0.25, 0.375, 0.125), so that "just inside" is not decided by float noise.
    expect(assert("/summary/share", "eq", 0.375, reportText, { atol: 0.125, rtol: 0 }).passed).toBe(true);
    expect(assert("/summary/share", "eq", 0.3751, reportText, { atol: 0.125, rtol: 0 }).passed).toBe(false);
    expect(assert("/summary/share", "ne", 0.375, reportText, { atol: 0.125, rtol: 0 }).passed).toBe(false);
    expect(assert("/summary/rows", "ne", 120)).toMatchObject({ passed: false, message: '/summary/rows of "result.json" is a number (120); expected anything but 120' });
    expect(assert("/summary/rows", "ne", 121)).toMatchObject({ passed: true, message: '/summary/rows of "result.json" differs from 121' });
  });

  it("names the whole document for the empty pointer", () => {
    expect(assert("", "type", "object")).toMatchObject({ passed: true, message: '(the whole document) of "result.json" is of type object' });
    expect(assert("", "type", "array").findings).toEqual([{ where: "(the whole document)", actual: expect.any(String), expected: "expected type array" }]);
  });

  it.each([
    ["lt", 120, false],
    ["lt", 121, true],
    ["le", 120, true],
    ["le", 119, false],
    ["gt", 120, false],
    ["gt", 119, true],
    ["ge", 120, true],
    ["ge", 121, false],
  ] as const)("%s %d on 120: %s", (op, value, passed) => {
    const o = assert("/summary/rows", op, value);
    expect(o.passed).toBe(passed);
    expect(o.message).toBe(passed ? `/summary/rows of "result.json" ${op} ${value}` : `/summary/rows of "result.json" is a number (120); expected ${op} ${value}`);
  });

  it("compares integers beyond 2^53 exactly against the bound", () => {
    expect(assert("/big", "gt", 9007199254740992).passed).toBe(true);
    expect(assert("/big", "le", 9007199254740992).passed).toBe(false);
    expect(assert("/big", "lt", 9007199254740994).passed).toBe(true);
    expect(assert("/big", "ge", 9007199254740994).passed).toBe(false);
    expect(compareExact(9007199254740993n, 9007199254740992)).toBe(1);
    expect(compareExact(9007199254740992n, 9007199254740992)).toBe(0);
    expect(compareExact(9007199254740991n, 9007199254740992)).toBe(-1);
    expect(compareExact(10n ** 20n, 1.5)).toBe(1);
    expect(compareExact(1n, 1.5)).toBe(-1);
    expect(compareExact(2n, 1.5)).toBe(1);
    expect(compareExact(-2n, -1.5)).toBe(-1);
    expect(compareExact(-1n, -1.5)).toBe(1);
    expect(compareExact(1, 2)).toBe(-1);
    expect(compareExact(2, 1)).toBe(1);
    expect(compareExact(2, 2)).toBe(0);
  });

  it("refuses order operators on what is not a finite number", () => {
    for (const op of ["lt", "le", "gt", "ge"]) {
      const o = run("json_assert", { pointer: "/summary/label", op, value: 1 }, ctxWith(reportText), { hidden: true });
      expect(o.passed).toBe(false);
      expect(o.message).toBe(`/summary/label of "result.json" is a string ("clean"); expected a finite number ${op} 1`);
      expect(o.feedback.split("\n")[0]).toBe('/summary/label of "result.json" is a string ("clean"); it is not a finite number');
    }
    expect(assert("/summary/label", "lt", "9").message).toMatch(/^invalid params: value: /);
    expect(assert("/summary/rows", "lt").message).toBe('invalid params: value: required for op "lt"');
  });

  it("between is inclusive at both ends", () => {
    expect(assert("/summary/share", "between", [0.25, 1])).toMatchObject({ passed: true, message: '/summary/share of "result.json" is in [0.25, 1]' });
    expect(assert("/summary/share", "between", [0, 0.25]).passed).toBe(true);
    expect(assert("/summary/share", "between", [0.2501, 1])).toMatchObject({ passed: false, message: '/summary/share of "result.json" is a number (0.25); expected a number in [0.2501, 1]' });
    expect(assert("/summary/share", "between", [0, 0.2499]).passed).toBe(false);
    expect(assert("/summary/label", "between", [0, 1])).toMatchObject({ passed: false, message: '/summary/label of "result.json" is a string ("clean"); expected a finite number in [0, 1]' });
    expect(assert("/big", "between", [0, 9007199254740992]).passed).toBe(false);
    expect(assert("/summary/share", "between", [1, 0]).message).toBe("invalid params: value: [min, max] with min <= max");
    expect(assert("/summary/share", "between", [0.5, 0.5]).passed).toBe(false);
  });

  it("in: one of a list, numbers within tolerance", () => {
    expect(assert("/summary/label", "in", ["dirty", "clean"])).toMatchObject({ passed: true, message: '/summary/label of "result.json" is one of ["dirty","clean"]' });
    expect(assert("/summary/label", "in", ["dirty"])).toMatchObject({ passed: false, message: '/summary/label of "result.json" is a string ("clean"); expected one of ["dirty"]' });
    expect(assert("/summary/share", "in", [0.3, 0.2500000001]).passed).toBe(true);
    expect(assert("/summary/share", "in", [0.3, 0.2501]).passed).toBe(false);
    expect(assert("/summary/label", "in", []).message).toMatch(/^invalid params: value: /);
  });

  it("len of arrays, strings (in code points) and objects, exact or a range", () => {
    expect(assert("/summary/tags", "len", 2)).toMatchObject({ passed: true, message: '/summary/tags of "result.json" has length 2' });
    expect(assert("/summary/tags", "len", 3)).toMatchObject({ passed: false, message: '/summary/tags of "result.json" is an array of 2 items; has length 2, expected 3' });
    expect(assert("/summary/tags", "len", [3, 5])).toMatchObject({ passed: false, message: '/summary/tags of "result.json" is an array of 2 items; has length 2, expected [3, 5]' });
    expect(assert("/summary/tags", "len", [2, 5]).passed).toBe(true);
    expect(assert("/summary/tags", "len", [0, 2]).passed).toBe(true);
    expect(assert("/summary/tags", "len", [0, 1]).passed).toBe(false);
    expect(assert("/s", "len", 2, { s: "😀é" }).passed).toBe(true);
    expect(assert("/summary", "len", 7).passed).toBe(true);
    expect(assert("/summary", "len", 6).passed).toBe(false);
    const none = run("json_assert", { pointer: "/summary/rows", op: "len", value: 3 }, ctxWith(reportText), { hidden: true });
    expect(none).toMatchObject({ passed: false, message: '/summary/rows of "result.json" is a number (120); expected an array, string or object with length 3' });
    expect(none.feedback.split("\n")[0]).toBe('/summary/rows of "result.json" is a number (120); it has no length');
    expect(assert("/summary/note", "len", 0).passed).toBe(false);
    expect(assert("/summary/tags", "len", [3, 2]).message).toMatch(/^invalid params: value/);
    expect(assert("/summary/tags", "len", -1).message).toMatch(/^invalid params: value/);
  });

  it("the len failure's public message says the length but not the bound", () => {
    const o = run("json_assert", { pointer: "/summary/tags", op: "len", value: 3 }, ctxWith(reportText), { hidden: true });
    expect(o.feedback.split("\n")[0]).toBe('/summary/tags of "result.json" is an array of 2 items; it has length 2, which fails the len assertion');
  });

  it("type, with integer for whole numbers (bigints included)", () => {
    expect(assert("/summary/rows", "type", "integer").passed).toBe(true);
    expect(assert("/summary/rows", "type", "number").passed).toBe(true);
    expect(assert("/big", "type", "integer").passed).toBe(true);
    expect(assert("/summary/share", "type", "integer")).toMatchObject({ passed: false, message: '/summary/share of "result.json" is a number (0.25); expected type integer' });
    expect(assert("/summary/label", "type", "integer").passed).toBe(false);
    expect(assert("/summary/note", "type", "null").passed).toBe(true);
    expect(assert("/summary/ok", "type", "boolean").passed).toBe(true);
    expect(assert("/summary/ok", "type", "string").passed).toBe(false);
    expect(assert("/summary/tags", "type", "object").passed).toBe(false);
    expect(assert("/summary/tags", "type", "list").message).toMatch(/^invalid params: value: /);
  });

  it("regex on strings only, RE2", () => {
    expect(assert("/summary/label", "regex", "^cl")).toMatchObject({ passed: true, message: '/summary/label of "result.json" matches "^cl"' });
    expect(assert("/summary/label", "regex", "^dirty$")).toMatchObject({ passed: false, message: '/summary/label of "result.json" is a string ("clean"); expected a match of "^dirty$"' });
    const notString = run("json_assert", { pointer: "/summary/rows", op: "regex", value: "1" }, ctxWith(reportText), { hidden: true });
    expect(notString).toMatchObject({ passed: false, message: '/summary/rows of "result.json" is a number (120); expected a string matching "1"' });
    expect(notString.feedback.split("\n")[0]).toBe('/summary/rows of "result.json" is a number (120); it is not a string');
    expect(assert("/summary/label", "regex", "(a)\\1").message).toMatch(/^invalid params: value: /);
  });

  it("exists and its negation", () => {
    expect(assert("/summary/rows", "exists")).toMatchObject({ passed: true, message: '/summary/rows of "result.json" exists' });
    expect(assert("/summary/rows", "exists", true).passed).toBe(true);
    expect(assert("/summary/gone", "exists", false)).toMatchObject({ passed: true, message: '/summary/gone of "result.json" does not exist' });
    const absent = run("json_assert", { pointer: "/summary/gone", op: "exists" }, ctxWith(reportText), { hidden: true });
    expect(absent).toMatchObject({ passed: false, message: '/summary/gone of "result.json" does not exist: pointer "/summary/gone" does not resolve: key "gone" not found in the object at /summary' });
    expect(absent.feedback).toBe('/summary/gone of "result.json": exists is false');
    const present = run("json_assert", { pointer: "/summary/rows", op: "exists", value: false }, ctxWith(reportText), { hidden: true });
    expect(present).toMatchObject({ passed: false, message: '/summary/rows of "result.json" exists but should not' });
    expect(present.feedback).toBe('/summary/rows of "result.json": exists is true');
    expect(assert("/summary/rows", "exists", "yes").message).toMatch(/^invalid params: value: /);
  });

  it("fails closed on a pointer that does not resolve, for every other operator", () => {
    for (const [op, value] of [["eq", 1], ["ne", 1], ["lt", 1], ["type", "null"], ["len", 0], ["in", [null]]] as const) {
      const o = assert("/summary/gone", op, value);
      expect(o).toMatchObject({ passed: false, message: 'in "result.json", pointer "/summary/gone" does not resolve: key "gone" not found in the object at /summary' });
    }
  });

  it("fails closed on a missing or non-JSON artifact", () => {
    expect(run("json_assert", { pointer: "/a", op: "exists", value: false }, emptyCtx())).toMatchObject({ passed: false, message: 'artifact "result.json" was not returned (no artifacts were returned)' });
    expect(assert("/a", "exists", false, "{").passed).toBe(false);
  });

  it("validates its params when submitted", () => {
    expect(assert("summary", "eq", 1).message).toMatch(/^invalid params: pointer: must be a JSON Pointer/);
    expect(assert("/a", "matches", 1).message).toMatch(/^invalid params: op: /);
    expect(run("json_assert", { op: "eq", value: 1 }, ctxWith(reportText)).message).toMatch(/^invalid params: pointer: /);
    expect(assert("/summary/rows", "eq").message).toBe('invalid params: value: required for op "eq"');
    expect(assert("/summary/rows", "gt", Number.NaN).message).toMatch(/^invalid params: value: /);
  });
});

describe("json checks: what mutation testing found untested (issue 18)", () => {
  const assert = (params: Record<string, unknown>, doc: string, over: Partial<CheckSpec> = {}) => run("json_assert", params, ctxWith(doc), over);
  const matches = (params: Record<string, unknown>, doc: string, over: Partial<CheckSpec> = {}) => run("json_matches", params, ctxWith(doc), over);

  it("json_matches quotes only what a difference has: no expected for an extra key, no found for a missing one", () => {
    const extra = matches({ expected: { a: 1 } }, '{"a":1,"b":2}');
    expect(extra.message).toBe('"result.json" differs from the expected value (1 difference): /b: is an unexpected key, found 2');
    expect(extra.findings).toStrictEqual([{ where: "/b: is an unexpected key", actual: "2" }]);
    const missing = matches({ expected: { a: 1, b: 2 } }, '{"a":1}');
    expect(missing.message).toBe('"result.json" differs from the expected value (1 difference): (the whole value): lacks an expected key - expected {"b":2}');
    expect(missing.findings).toStrictEqual([{ where: "(the whole value): lacks an expected key", expected: '{"b":2}' }]);
  });

  it("json_matches tells a hidden check's pass in its public message too", () => {
    expect(matches({ expected: { a: 1 } }, '{"a":1}', { hidden: true }).feedback).toBe('"result.json" matches the expected value');
  });

  it("json_assert accepts a one-point range in between and len", () => {
    expect(assert({ pointer: "/a", op: "between", value: [1, 1] }, '{"a":1}').passed).toBe(true);
    expect(assert({ pointer: "/a", op: "between", value: [1, 1] }, '{"a":1.5}').passed).toBe(false);
    expect(assert({ pointer: "/a", op: "len", value: [2, 2] }, '{"a":[1,2]}').passed).toBe(true);
    expect(assert({ pointer: "/a", op: "len", value: [2, 2] }, '{"a":[1]}').passed).toBe(false);
    expect(assert({ pointer: "/a", op: "between", value: [2, 1] }, '{"a":1}').message).toMatch(/^invalid params: value: \[min, max\] with min <= max/);
  });

  it("json_assert refuses a pattern RE2 cannot compile when the goal is read, saying why", () => {
    expect(assert({ pointer: "/a", op: "regex", value: "(a)\\1" }, '{"a":"aa"}').message).toMatch(/^invalid params: value: pattern "\(a\)\\\\1" is not a valid RE2 regular expression/);
  });

  it("json_assert's eq and in compare arrays in order", () => {
    expect(assert({ pointer: "/a", op: "eq", value: [1, 2] }, '{"a":[2,1]}').passed).toBe(false);
    expect(assert({ pointer: "/a", op: "eq", value: [1, 2] }, '{"a":[1,2]}').passed).toBe(true);
    expect(assert({ pointer: "/a", op: "in", value: [[1, 2]] }, '{"a":[2,1]}').passed).toBe(false);
    expect(assert({ pointer: "/a", op: "in", value: [[1, 2]] }, '{"a":[1,2]}').passed).toBe(true);
  });

  it("json_assert's type integer is only for integers: an integer is not a string or a boolean", () => {
    for (const type of ["string", "boolean", "array", "object", "null"]) expect(assert({ pointer: "/a", op: "type", value: type }, '{"a":5}').passed, type).toBe(false);
    expect(assert({ pointer: "/a", op: "type", value: "integer" }, '{"a":5}').passed).toBe(true);
    expect(assert({ pointer: "/a", op: "type", value: "number" }, '{"a":5}').passed).toBe(true);
    expect(assert({ pointer: "/a", op: "type", value: "integer" }, '{"a":9007199254740993}').passed).toBe(true);
    expect(assert({ pointer: "/a", op: "type", value: "integer" }, '{"a":"5"}').passed).toBe(false);
  });

  it("json_assert's public message names the operator, or why the value cannot be compared", () => {
    expect(assert({ pointer: "/a", op: "eq", value: 2 }, '{"a":1}', { hidden: true }).feedback).toBe('/a of "result.json" is a number (1); it fails eq\n  - /a | got: 1');
    expect(assert({ pointer: "/a", op: "between", value: [0, 1] }, '{"a":"x"}', { hidden: true }).feedback).toMatch(/^\/a of "result.json" is a string \("x"\); it is not a finite number\n/);
    expect(assert({ pointer: "/a", op: "lt", value: 1 }, '{"a":"x"}', { hidden: true }).feedback).toMatch(/; it is not a finite number\n/);
  });

  it("json_assert's exists says why a value is missing, and nothing more when it is there", () => {
    expect(assert({ pointer: "/b", op: "exists" }, '{"a":1}').message).toMatch(/^\/b of "result.json" does not exist: .+/);
    expect(assert({ pointer: "/a", op: "exists", value: false }, '{"a":1}').message).toBe('/a of "result.json" exists but should not');
  });
});

describe("json_assert exists, hidden", () => {
  it("tells only whether the value exists", () => {
    const a = (params: Record<string, unknown>, doc: string) => run("json_assert", params, ctxWith(doc), { hidden: true });
    expect(a({ pointer: "/b", op: "exists" }, '{"a":1}').feedback).toBe('/b of "result.json": exists is false');
    expect(a({ pointer: "/a", op: "exists", value: false }, '{"a":1}').feedback).toBe('/a of "result.json": exists is true');
  });
});
