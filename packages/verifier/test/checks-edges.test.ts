// The demo's checks at their edges (issue 18): every fail-closed branch asserted on `passed`, tolerances
// just inside and just outside, what a hidden check shows a model, the run-time compile failure of
// json_schema, and the exact wording a refiner acts on.
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { checkRegistry, runChecks, type VerifyContext } from "../src/index";
import { MAX_SCHEMA_BYTES, MAX_SCHEMA_NODES } from "../src/checks/json-schema";
import { asNumber, numericEntries } from "../src/checks/support";
import { check, ctxWith, DEMO_RESULT, emptyCtx } from "./support";

function run(id: string, params: Record<string, unknown>, ctx: VerifyContext, over: Partial<CheckSpec> = {}) {
  const [outcome] = runChecks([{ ...check(id, params), ...over }], ctx);
  if (outcome === undefined) throw new Error("no outcome");
  return outcome;
}
const hidden = { hidden: true, reveal: "verdict" } as const;

describe("exits_clean at its edges", () => {
  it("passes only exit 0 without timeout and OOM, each alone enough to fail", () => {
    expect(run("exits_clean", {}, emptyCtx())).toMatchObject({ passed: true, message: "the script exited with code 0", feedback: "the script exited with code 0" });
    expect(run("exits_clean", {}, emptyCtx({ oomKilled: true })).passed).toBe(false);
    expect(run("exits_clean", {}, emptyCtx({ exitCode: -1 })).passed).toBe(false);
  });

  it("shows a hidden check's pass in the same words", () => {
    expect(run("exits_clean", {}, emptyCtx(), hidden).feedback).toBe("the script exited with code 0");
  });

  it("says exactly what happened, and shows a hidden check the same words", () => {
    const o = run("exits_clean", {}, emptyCtx({ exitCode: 137, oomKilled: true, timedOut: true, stderr: "a\r\nlast one  \r\n" }), hidden);
    const text = "expected exit code 0 without timeout; found exit code 137, timed out (killed at the time limit), OOM-killed (ran out of memory); last stderr line: last one";
    expect(o).toMatchObject({ passed: false, message: text, feedback: text });
    expect(run("exits_clean", {}, emptyCtx({ exitCode: 1 })).message).toBe("expected exit code 0 without timeout; found exit code 1, did not time out, not OOM-killed; stderr is empty");
    expect(run("exits_clean", {}, emptyCtx({ exitCode: 1, stderr: "\n  \n\t\n" })).message).toMatch(/; stderr is empty$/);
  });

  it("clips a long last stderr line at 500 characters", () => {
    const line = "x".repeat(501);
    expect(run("exits_clean", {}, emptyCtx({ exitCode: 1, stderr: line })).message).toMatch(new RegExp(`last stderr line: ${"x".repeat(500)}…$`));
    expect(run("exits_clean", {}, emptyCtx({ exitCode: 1, stderr: "y".repeat(500) })).message).toMatch(new RegExp(`last stderr line: ${"y".repeat(500)}$`));
  });
});

describe("artifact_exists and json_parses, as a hidden check sees them", () => {
  it("shows the same message whether hidden or not", () => {
    const found = run("artifact_exists", {}, ctxWith("{}"), hidden);
    expect(found).toMatchObject({ passed: true, message: 'artifact "result.json" was returned (2 bytes)', feedback: 'artifact "result.json" was returned (2 bytes)' });
    const missing = run("artifact_exists", {}, emptyCtx(), hidden);
    expect(missing).toMatchObject({ passed: false, feedback: 'artifact "result.json" was not returned (no artifacts were returned)' });
    const parses = run("json_parses", {}, ctxWith([1, 2]), hidden);
    expect(parses).toMatchObject({ passed: true, message: 'artifact "result.json" is valid JSON (an array of 2 items)', feedback: 'artifact "result.json" is valid JSON (an array of 2 items)' });
    const broken = run("json_parses", {}, ctxWith("{"), hidden);
    expect(broken.passed).toBe(false);
    expect(broken.feedback).toBe(broken.message);
  });
});

describe("no_blank_keys at its edges", () => {
  it("says one key in the singular and counts the keys it passed", () => {
    const one = run("no_blank_keys", { path: "" }, ctxWith({ a: 1, None: 2 }));
    expect(one).toMatchObject({ passed: false, message: 'the object at the root has 1 blank or null-like key: "None" (missing values became keys; drop or fill them before grouping)' });
    expect(run("no_blank_keys", { path: "by_region" }, ctxWith(DEMO_RESULT))).toMatchObject({ passed: true, message: 'all 4 keys of the object at "by_region" are non-blank' });
    expect(run("no_blank_keys", { path: "" }, ctxWith({}))).toMatchObject({ passed: true, message: "all 0 keys of the object at the root are non-blank" });
  });

  it("is a visible check's public message as it is", () => {
    const o = run("no_blank_keys", { path: "" }, ctxWith({ nan: 1 }), hidden);
    expect(o.feedback).toBe(o.message);
  });

  it("fails closed on a missing artifact", () => {
    expect(run("no_blank_keys", { path: "" }, emptyCtx())).toMatchObject({ passed: false, message: 'artifact "result.json" was not returned (no artifacts were returned)' });
  });

  it("keys that only look like null placeholders pass", () => {
    for (const key of ["nan2", "n a n", "NULLS", "-", "0", "na"]) expect(run("no_blank_keys", { path: "" }, ctxWith({ [key]: 1 })).passed).toBe(true);
  });
});

describe("no_null_region and schema_ok (aliases)", () => {
  it("no_null_region reads by_region by default and any path given", () => {
    expect(run("no_null_region", {}, ctxWith(DEMO_RESULT))).toMatchObject({ passed: true, params: { artifact: "result.json", path: "by_region" } });
    expect(run("no_null_region", {}, ctxWith({ ...DEMO_RESULT, by_region: { nan: 1 } })).passed).toBe(false);
    expect(run("no_null_region", { path: "r" }, ctxWith({ r: { "": 1 } })).passed).toBe(false);
    expect(run("no_null_region", { path: "r" }, ctxWith({ r: { a: 1 } })).passed).toBe(true);
    expect(run("no_null_region", { path: "a..b" }, ctxWith({})).message).toMatch(/^invalid params: path: /);
  });

  it("schema_ok holds the demo's schema by default, a fresh copy each time", () => {
    const a = run("schema_ok", {}, ctxWith(DEMO_RESULT));
    expect(a.passed).toBe(true);
    (a.params.schema as Record<string, unknown>).required = [];
    const b = run("schema_ok", {}, ctxWith({ by_region: {} }));
    expect(b.passed).toBe(false);
    expect(b.message).toContain("must have required property 'total_revenue'");
    expect(b.message).toContain("/by_region must NOT have fewer than 1 properties");
    expect(run("schema_ok", {}, ctxWith({ ...DEMO_RESULT, top_region_share: 1.01 })).passed).toBe(false);
    expect(run("schema_ok", {}, ctxWith({ ...DEMO_RESULT, top_region_share: 1 })).passed).toBe(true);
    expect(run("schema_ok", {}, ctxWith({ ...DEMO_RESULT, top_region_share: -0.01 })).passed).toBe(false);
    expect(run("schema_ok", { schema: { type: "array" } }, ctxWith(DEMO_RESULT)).passed).toBe(false);
  });

  it("an alias's params go through the target's schema too", () => {
    const alias = checkRegistry.get("no_null_region")!;
    expect(alias.aliasOf).toBe("no_blank_keys");
    expect(() => alias.run({ artifact: "result.json", path: 5 }, ctxWith(DEMO_RESULT))).toThrow();
    expect(checkRegistry.get("schema_ok")!.aliasOf).toBe("json_schema");
  });
});

describe("reconciles_total at its edges", () => {
  const params = { values_path: "v", total_path: "t" };
  it("tolerance in both directions: just inside passes, just outside fails", () => {
    // Binary-exact values, so the edge is the tolerance's and not float noise's.
    expect(run("reconciles_total", { ...params, tolerance: 0.5 }, ctxWith({ v: { a: 1, b: 2 }, t: 3.5 })).passed).toBe(true);
    expect(run("reconciles_total", { ...params, tolerance: 0.5 }, ctxWith({ v: { a: 1, b: 2 }, t: 2.5 })).passed).toBe(true);
    expect(run("reconciles_total", { ...params, tolerance: 0.5 }, ctxWith({ v: { a: 1, b: 2 }, t: 3.5625 })).passed).toBe(false);
    expect(run("reconciles_total", { ...params, tolerance: 0.5 }, ctxWith({ v: { a: 1, b: 2 }, t: 2.4375 })).passed).toBe(false);
  });

  it("a difference of exactly the tolerance plus the rounding allowance passes", () => {
    // One value: the allowance is 2 ulps of 1 (2^-51), and (1 - 2^-51) + 2^-51 is exactly 1, the difference.
    const tolerance = 1 - 2 ** -51;
    expect(run("reconciles_total", { ...params, tolerance }, ctxWith({ v: { a: 1 }, t: 0 })).passed).toBe(true);
    expect(run("reconciles_total", { ...params, tolerance: 1 - 2 ** -50 }, ctxWith({ v: { a: 1 }, t: 0 })).passed).toBe(false);
  });

  it("a total far below or far above the sum fails (the difference is absolute)", () => {
    expect(run("reconciles_total", params, ctxWith({ v: { a: 1, b: 2 }, t: 1000 })).passed).toBe(false);
    expect(run("reconciles_total", params, ctxWith({ v: { a: 1, b: 2 }, t: -1000 })).passed).toBe(false);
    expect(run("reconciles_total", params, ctxWith({ v: { a: -1, b: -2 }, t: -3 })).passed).toBe(true);
  });

  it("float noise is absorbed only at the scale of the numbers summed", () => {
    // (1e12 + 0.1) + 0.2 is 1e12 + 0.2999 in binary: a difference of one ulp at that scale, within the
    // allowance (a few ulps of the magnitudes summed); a difference of 0.01 is not rounding any more.
    expect(run("reconciles_total", { ...params, tolerance: 0 }, ctxWith({ v: { a: 1e12 + 0.1, b: 0.2 }, t: 1e12 + 0.3 })).passed).toBe(true);
    expect(run("reconciles_total", { ...params, tolerance: 0 }, ctxWith({ v: { a: 1e12 + 0.1, b: 0.2 }, t: 1e12 + 0.31 })).passed).toBe(false);
    expect(run("reconciles_total", { ...params, tolerance: 0 }, ctxWith({ v: { a: 0.5, b: 0.25 }, t: 0.75 + 2e-15 })).passed).toBe(false);
    expect(run("reconciles_total", { ...params, tolerance: 0 }, ctxWith({ v: { a: 1e-20 }, t: 2e-20 })).passed).toBe(true);
    expect(run("reconciles_total", { ...params, tolerance: 0 }, ctxWith({ v: { a: 1e-20 }, t: 1e-15 })).passed).toBe(false);
  });

  it("names the paths and counts the values in its message, in the singular for one", () => {
    expect(run("reconciles_total", params, ctxWith({ v: { a: 3 }, t: 3 })).message).toBe('sum of v (1 value: "a") is 3, t is 3, difference 0 is within tolerance 0.01');
    const many = Object.fromEntries(["a", "b", "c", "d", "e", "f"].map((k) => [k, 1]));
    expect(run("reconciles_total", params, ctxWith({ v: many, t: 7 })).message).toBe('sum of v (6 values: "a", "b", "c", "d", "e" and 1 more) is 6, t is 7, difference 1 exceeds tolerance 0.01');
    expect(run("reconciles_total", { values_path: "", total_path: "t" }, ctxWith({ a: 1, t: 2 })).message).toBe('sum of the root (2 values: "a", "t") is 3, t is 2, difference 1 exceeds tolerance 0.01');
  });

  it("fails closed on a values path that is not an object, and a missing total", () => {
    expect(run("reconciles_total", params, ctxWith({ v: [1, 2], t: 3 }))).toMatchObject({ passed: false, message: 'in "result.json", the value at "v" is an array of 2 items, expected an object' });
    expect(run("reconciles_total", params, ctxWith({ v: { a: 1 } }))).toMatchObject({ passed: false, message: 'in "result.json", path "t" does not resolve: key "t" not found in the object at the root' });
    expect(run("reconciles_total", params, ctxWith({ v: { a: 1 }, t: null })).message).toBe('the total at "t" is null, expected a finite number');
    expect(run("reconciles_total", params, emptyCtx()).passed).toBe(false);
  });

  it("is shown to a hidden check as it is", () => {
    const o = run("reconciles_total", params, ctxWith({ v: { a: 1 }, t: 3 }), hidden);
    expect(o.feedback).toBe(o.message);
  });
});

describe("top_is_argmax at its edges", () => {
  const params = { key_path: "k", object_path: "o" };
  it("passes the strict maximum and names it", () => {
    expect(run("top_is_argmax", params, ctxWith({ k: "b", o: { a: 1, b: 2 } }))).toMatchObject({ passed: true, message: '"k" is "b", the maximum of "o" (2)' });
    expect(run("top_is_argmax", params, ctxWith({ k: "a", o: { a: -5 } })).passed).toBe(true);
    expect(run("top_is_argmax", params, ctxWith({ k: "a", o: { a: -5, b: -6 } })).passed).toBe(true);
    expect(run("top_is_argmax", params, ctxWith({ k: "b", o: { a: -5, b: -6 } })).passed).toBe(false);
  });

  it("a key one below the maximum fails, with both numbers", () => {
    const o = run("top_is_argmax", params, ctxWith({ k: "a", o: { a: 1.5, b: 1.5000001 } }));
    expect(o).toMatchObject({ passed: false, message: '"k" is "a" (1.5), but the maximum is "b" (1.5000001)' });
  });

  it("lists the keys when the named key is absent", () => {
    const o = run("top_is_argmax", params, ctxWith({ k: "z", o: { a: 1, b: 2 } }));
    expect(o).toMatchObject({ passed: false, message: '"k" is "z", which is not a key of "o" (keys: "a", "b"); the maximum is "b" (2)' });
  });

  it("fails closed on a missing key path, a missing object, a non-object and an empty object", () => {
    expect(run("top_is_argmax", params, ctxWith({ o: { a: 1 } }))).toMatchObject({ passed: false, message: 'in "result.json", path "k" does not resolve: key "k" not found in the object at the root' });
    expect(run("top_is_argmax", params, ctxWith({ k: "a" }))).toMatchObject({ passed: false, message: 'in "result.json", path "o" does not resolve: key "o" not found in the object at the root' });
    expect(run("top_is_argmax", params, ctxWith({ k: "a", o: 5 })).passed).toBe(false);
    expect(run("top_is_argmax", params, ctxWith({ k: "a", o: {} }))).toMatchObject({ passed: false, message: 'the object at "o" is empty, so "a" cannot be its maximum' });
    for (const k of [null, true, ["a"], { a: 1 }]) expect(run("top_is_argmax", params, ctxWith({ k, o: { a: 1 } })).passed).toBe(false);
  });

  it("is shown to a hidden check as it is", () => {
    const o = run("top_is_argmax", params, ctxWith({ k: "a", o: { a: 1, b: 2 } }), hidden);
    expect(o.feedback).toBe(o.message);
  });
});

describe("json_schema at its edges", () => {
  it("fails closed when the schema does not compile at run time (parse bypassed)", () => {
    const def = checkRegistry.get("json_schema")!;
    const r = def.run({ artifact: "result.json", schema: { type: "objekt" } }, ctxWith(DEMO_RESULT));
    expect(r.passed).toBe(false);
    expect(r.message).toMatch(/^the JSON Schema does not compile: /);
    expect(r.publicMessage).toBe("the JSON Schema does not compile");
  });

  it("says one error in the singular and shows the artifact's name", () => {
    const o = run("json_schema", { artifact: "r.json", schema: { type: "array" } }, ctxWith("{}", { artifacts: [{ name: "r.json", content: Buffer.from("{}") }] }));
    expect(o).toMatchObject({ passed: false, message: 'artifact "r.json" does not match the JSON Schema (1 error): (root) must be array' });
    const ok = run("json_schema", { artifact: "r.json", schema: { type: "object" } }, ctxWith("{}", { artifacts: [{ name: "r.json", content: Buffer.from("{}") }] }), hidden);
    expect(ok).toMatchObject({ passed: true, message: 'artifact "r.json" matches the JSON Schema', feedback: 'artifact "r.json" matches the JSON Schema' });
  });

  it("shows exactly five errors without a count of more", () => {
    const o = run("json_schema", { schema: { type: "object", required: ["a", "b", "c", "d", "e"] } }, ctxWith({}));
    expect(o.message).toMatch(/\(5 errors\): .*'e'$/);
  });

  it("hides enum and const values from a hidden check but shows them to the client", () => {
    const schema = { type: "object", properties: { region: { enum: ["North", "South"] }, currency: { const: "EUR" } } };
    const o = run("json_schema", { schema }, ctxWith({ region: "Nord", currency: "USD" }), hidden);
    expect(o.passed).toBe(false);
    expect(o.message).toBe('artifact "result.json" does not match the JSON Schema (2 errors): /region must be equal to one of the allowed values (["North","South"]); /currency must be equal to constant ("EUR")');
    expect(o.feedback).toBe('artifact "result.json" does not match the JSON Schema (2 errors): /region is not the one of the allowed values; /currency is not the expected value');
    const visible = run("json_schema", { schema: { type: "object", additionalProperties: false } }, ctxWith({ x: 1 }), hidden);
    expect(visible.feedback).toBe('artifact "result.json" does not match the JSON Schema (1 error): (root) must NOT have additional properties ("x")');
    expect(run("json_schema", { schema: { type: "integer", minimum: 3 } }, ctxWith("2"), hidden).feedback).toBe('artifact "result.json" does not match the JSON Schema (1 error): (root) must be >= 3');
  });

  it("picks the draft by $schema: 2019-09 keywords compile there and not in draft-07", () => {
    const s2019 = { $schema: "https://json-schema.org/draft/2019-09/schema", type: "object", dependentRequired: { a: ["b"] } };
    expect(run("json_schema", { schema: s2019 }, ctxWith({ a: 1, b: 2 })).passed).toBe(true);
    expect(run("json_schema", { schema: s2019 }, ctxWith({ a: 1 })).passed).toBe(false);
    const s2020 = { $schema: "https://json-schema.org/draft/2020-12/schema", type: "array", prefixItems: [{ type: "number" }] };
    expect(run("json_schema", { schema: s2020 }, ctxWith(["x"])).passed).toBe(false);
    expect(run("json_schema", { schema: s2020 }, ctxWith([1])).passed).toBe(true);
    const { $schema: _, ...plain } = s2019;
    expect(run("json_schema", { schema: plain }, ctxWith({ a: 1 })).message).toMatch(/^invalid params: schema: the JSON Schema does not compile: .*dependentRequired/);
    expect(run("json_schema", { schema: { ...plain, $schema: 7 } }, ctxWith({ a: 1 })).passed).toBe(false);
  });

  it("takes schemas holding null values", () => {
    expect(run("json_schema", { schema: { enum: [null, 1] } }, ctxWith("null")).passed).toBe(true);
    expect(run("json_schema", { schema: { const: null } }, ctxWith("0")).passed).toBe(false);
  });

  it("runs patterns through RE2, case flags included", () => {
    expect(run("json_schema", { schema: { type: "string", pattern: "^N" } }, ctxWith('"North"')).passed).toBe(true);
    expect(run("json_schema", { schema: { type: "string", pattern: "^N" } }, ctxWith('"north"')).passed).toBe(false);
    expect(run("json_schema", { schema: { type: "string", pattern: "(?=x)" } }, ctxWith('"x"')).message).toMatch(/^invalid params: schema: the JSON Schema does not compile: .*not a valid RE2/);
  });

  it("refuses a schema just past its size bounds, and takes one at them", () => {
    const bytes = (n: number) => ({ description: "x".repeat(n - JSON.stringify({ description: "" }).length) });
    expect(Buffer.byteLength(JSON.stringify(bytes(MAX_SCHEMA_BYTES)))).toBe(MAX_SCHEMA_BYTES);
    expect(run("json_schema", { schema: bytes(MAX_SCHEMA_BYTES) }, ctxWith("1")).passed).toBe(true);
    const big = run("json_schema", { schema: bytes(MAX_SCHEMA_BYTES + 1) }, ctxWith("1"));
    expect(big.message).toBe(`invalid params: schema: the JSON Schema is too large (${MAX_SCHEMA_BYTES + 1} bytes, 2 values; at most ${MAX_SCHEMA_BYTES} bytes and ${MAX_SCHEMA_NODES} values): compare large expected data with json_matches or csv_matches`);
    // The schema object itself is one value, each enum entry another, plus the enum array.
    const nodes = (n: number) => ({ enum: Array.from({ length: n - 2 }, (_, i) => i) });
    expect(run("json_schema", { schema: nodes(MAX_SCHEMA_NODES) }, ctxWith("1")).passed).toBe(true);
    expect(run("json_schema", { schema: nodes(MAX_SCHEMA_NODES + 1) }, ctxWith("1")).message).toMatch(/^invalid params: schema: the JSON Schema is too large \(\d+ bytes, 5001 values; /);
  });

  it("reads numbers beyond 2^53 as plain numbers for validation, and refuses deep nesting", () => {
    expect(run("json_schema", { schema: { type: "integer" } }, ctxWith("9007199254740993")).passed).toBe(true);
    const deep = `${"[".repeat(300)}${"]".repeat(300)}`;
    expect(run("json_schema", { schema: { type: "array" } }, ctxWith(deep)).passed).toBe(false);
  });
});

describe("support", () => {
  it("asNumber: finite numbers only, numeric strings explained", () => {
    expect(asNumber(3)).toEqual({ ok: true, value: 3 });
    expect(asNumber(Number.NaN)).toEqual({ ok: false, message: "a non-finite number (NaN), expected a finite number" });
    expect(asNumber(Infinity).ok).toBe(false);
    expect(asNumber("3")).toEqual({ ok: false, message: 'a string ("3"), not a number: write it as a JSON number, without quotes' });
    expect(asNumber("  ")).toEqual({ ok: false, message: 'a string ("  "), expected a finite number' });
    expect(asNumber("abc")).toEqual({ ok: false, message: 'a string ("abc"), expected a finite number' });
    expect(asNumber("Infinity")).toEqual({ ok: false, message: 'a string ("Infinity"), expected a finite number' });
  });

  it("numericEntries: names the first five bad values and counts the rest", () => {
    const obj = Object.fromEntries(["a", "b", "c", "d", "e", "f", "g"].map((k) => [k, null]));
    const r = numericEntries({ ...obj, h: 1 }, "x");
    expect(r).toEqual({ ok: false, message: 'every value of the object at "x" must be a number: "a" is null, expected a finite number; "b" is null, expected a finite number; "c" is null, expected a finite number; "d" is null, expected a finite number; "e" is null, expected a finite number; and 2 more' });
    const five = numericEntries(Object.fromEntries(["a", "b", "c", "d", "e"].map((k) => [k, null])), "");
    expect(five.ok === false && five.message.endsWith("expected a finite number")).toBe(true);
    expect(numericEntries({ a: 1, b: 2 }, "")).toEqual({ ok: true, value: [["a", 1], ["b", 2]] });
  });
});
