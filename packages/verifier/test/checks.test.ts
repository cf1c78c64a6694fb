import { describe, expect, it } from "vitest";
import { runChecks, type VerifyContext } from "../src/index";
import { check, ctxWith, DEMO_RESULT } from "./support";

/** Runs one check and returns its outcome. */
function run(id: string, params: Record<string, unknown>, ctx: VerifyContext) {
  const [outcome] = runChecks([check(id, params)], ctx);
  if (outcome === undefined) throw new Error("no outcome");
  return outcome;
}

describe("exits_clean", () => {
  it("passes on exit 0", () => {
    const o = run("exits_clean", {}, ctxWith(DEMO_RESULT));
    expect(o).toMatchObject({ passed: true, params: {} });
  });

  it("fails on a non-zero exit and quotes the last non-empty stderr line", () => {
    const stderr = "Traceback (most recent call last):\n  File \"analysis.py\", line 3\nKeyError: 'region'\n\n  \n";
    const o = run("exits_clean", {}, ctxWith(DEMO_RESULT, { exitCode: 1, stderr }));
    expect(o.passed).toBe(false);
    expect(o.message).toContain("exit code 1");
    expect(o.message).toContain("did not time out");
    expect(o.message).toContain("last stderr line: KeyError: 'region'");
  });

  it("fails on a timeout and says so", () => {
    const o = run("exits_clean", {}, ctxWith(DEMO_RESULT, { exitCode: 124, timedOut: true }));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/exit code 124, timed out/);
    expect(o.message).toContain("stderr is empty");
  });

  it("fails a timed-out run even if the exit code reads 0", () => {
    expect(run("exits_clean", {}, ctxWith(DEMO_RESULT, { timedOut: true })).passed).toBe(false);
  });

  it("fails an OOM kill and says so", () => {
    const o = run("exits_clean", {}, ctxWith(DEMO_RESULT, { exitCode: 137, oomKilled: true, stderr: "Killed" }));
    expect(o.passed).toBe(false);
    expect(o.message).toContain("OOM-killed");
    expect(o.message).toContain("last stderr line: Killed");
  });

  it("rejects params it does not take", () => {
    const o = run("exits_clean", { strict: true }, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/^invalid params: \(params\): Unrecognized key: "strict"/);
  });
});

describe("artifact_exists", () => {
  it("passes when result.json was returned (default name)", () => {
    const o = run("artifact_exists", {}, ctxWith(DEMO_RESULT));
    expect(o).toMatchObject({ passed: true, params: { name: "result.json" } });
  });

  it("passes for a nested name", () => {
    const ctx = ctxWith(DEMO_RESULT);
    ctx.artifacts.push({ name: "charts/by_region.png", content: Buffer.from([0x89, 0x50]) });
    expect(run("artifact_exists", { name: "charts/by_region.png" }, ctx).passed).toBe(true);
  });

  it("fails when missing and lists what was returned", () => {
    const ctx = ctxWith(DEMO_RESULT);
    ctx.artifacts[0]!.name = "results.json";
    const o = run("artifact_exists", {}, ctx);
    expect(o.passed).toBe(false);
    expect(o.message).toBe('artifact "result.json" was not returned (returned artifacts: "results.json")');
  });

  it("fails when nothing was returned, with the sandbox's general errors", () => {
    const o = run("artifact_exists", {}, ctxWith(DEMO_RESULT, { artifacts: [], artifactErrors: ["timed out after 30000 ms: no artifacts collected"] }));
    expect(o.passed).toBe(false);
    expect(o.message).toContain("no artifacts were returned");
    expect(o.message).toContain("timed out after 30000 ms: no artifacts collected");
  });

  it("fails with the sandbox's reason when the name appears in artifactErrors", () => {
    const ctx = ctxWith(DEMO_RESULT, {
      artifacts: [],
      artifactErrors: ["result.json: skipped, not a regular file (symlink)", "other.csv: skipped, too big"],
    });
    const o = run("artifact_exists", {}, ctx);
    expect(o.passed).toBe(false);
    expect(o.message).toBe('artifact "result.json" was not returned: result.json: skipped, not a regular file (symlink)');
  });

  it("rejects an empty name", () => {
    expect(run("artifact_exists", { name: "" }, ctxWith(DEMO_RESULT)).message).toMatch(/^invalid params: name: /);
  });
});

describe("json_parses", () => {
  it("passes on valid JSON", () => {
    expect(run("json_parses", {}, ctxWith(DEMO_RESULT))).toMatchObject({ passed: true, params: { artifact: "result.json" } });
  });

  it("fails on non-JSON with the parse error", () => {
    const o = run("json_parses", {}, ctxWith("North,10749.9\nSouth,8552.5\n"));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/^artifact "result.json" is not valid JSON: /);
  });

  it("explains Python's NaN output", () => {
    const o = run("json_parses", {}, ctxWith('{"top_region_share": NaN}'));
    expect(o.passed).toBe(false);
    expect(o.message).toContain("NaN or Infinity");
  });

  it("fails on an empty file", () => {
    const o = run("json_parses", {}, ctxWith(""));
    expect(o).toMatchObject({ passed: false, message: 'artifact "result.json" is empty (0 bytes), expected JSON' });
  });

  it("fails on invalid UTF-8", () => {
    const ctx = ctxWith(DEMO_RESULT, { artifacts: [{ name: "result.json", content: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]) }] });
    expect(run("json_parses", {}, ctx)).toMatchObject({ passed: false, message: 'artifact "result.json" is not valid UTF-8 (4 bytes)' });
  });

  it("fails on a missing artifact", () => {
    const o = run("json_parses", { artifact: "summary.json" }, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(false);
    expect(o.message).toContain('artifact "summary.json" was not returned');
  });
});

describe("json_schema", () => {
  const schema = { type: "object", required: ["total_revenue"], properties: { total_revenue: { type: "number" } } };

  it("passes when the artifact matches", () => {
    expect(run("json_schema", { schema }, ctxWith(DEMO_RESULT)).passed).toBe(true);
  });

  it("lists every error with its instance path", () => {
    const strict = {
      type: "object",
      required: ["total_revenue", "currency"],
      additionalProperties: false,
      properties: { total_revenue: { type: "number" }, by_region: { type: "object", additionalProperties: { type: "number" } } },
    };
    const bad = { ...DEMO_RESULT, total_revenue: "35145.65", by_region: { North: "10749.9" } };
    const o = run("json_schema", { schema: strict }, ctxWith(bad));
    expect(o.passed).toBe(false);
    expect(o.message).toContain("/total_revenue must be number");
    expect(o.message).toContain("/by_region/North must be number");
    expect(o.message).toContain("(root) must have required property 'currency'");
    expect(o.message).toContain('(root) must NOT have additional properties ("top_region")');
    expect(o.message).toMatch(/\(5 errors\)/);
  });

  it("shows the first five errors and counts the rest", () => {
    const many = { type: "object", required: ["a", "b", "c", "d", "e", "f", "g"] };
    const o = run("json_schema", { schema: many }, ctxWith({}));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/\(7 errors\):.*'e'; and 2 more$/);
    expect(o.message).not.toContain("'f'");
  });

  it("fails closed on an uncompilable schema, with the compile error", () => {
    const o = run("json_schema", { schema: { type: "objekt" } }, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/^invalid params: schema: the JSON Schema does not compile: /);
  });

  it("rejects unknown keywords so a typo cannot weaken the check", () => {
    const o = run("json_schema", { schema: { type: "object", requird: ["x"] } }, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(false);
    expect(o.message).toContain('unknown keyword: "requird"');
  });

  it("ignores formats and accepts a 2020-12 schema", () => {
    const s2020 = {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: { top_region: { type: "string", format: "date" } },
      required: ["top_region"],
    };
    expect(run("json_schema", { schema: s2020 }, ctxWith(DEMO_RESULT)).passed).toBe(true);
    const s07 = { ...s2020, $schema: "http://json-schema.org/draft-07/schema#" };
    expect(run("json_schema", { schema: s07 }, ctxWith(DEMO_RESULT)).passed).toBe(true);
  });

  it("fails closed on a dialect it does not know", () => {
    const o = run("json_schema", { schema: { $schema: "http://json-schema.org/draft-04/schema#", type: "object" } }, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/^invalid params: schema: the JSON Schema does not compile: /);
  });

  it("fails when the artifact is not JSON, after the schema compiled", () => {
    const o = run("json_schema", { schema }, ctxWith("not json"));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/is not valid JSON/);
  });

  it("requires a schema object", () => {
    expect(run("json_schema", {}, ctxWith(DEMO_RESULT)).message).toBe("invalid params: schema: required");
    expect(run("json_schema", { schema: [] }, ctxWith(DEMO_RESULT)).message).toBe("invalid params: schema: must be a JSON Schema object");
    expect(run("json_schema", { schema: "object" }, ctxWith(DEMO_RESULT)).passed).toBe(false);
  });
});

describe("no_blank_keys", () => {
  it("passes on clean keys", () => {
    const o = run("no_blank_keys", { path: "by_region" }, ctxWith(DEMO_RESULT));
    expect(o).toMatchObject({ passed: true, params: { artifact: "result.json", path: "by_region" } });
  });

  it.each(["", "  ", "nan", "NaN", "None", "null", "NaT", "<NA>", "undefined", " nan "])("fails on the key %j", (key) => {
    const result = { ...DEMO_RESULT, by_region: { ...DEMO_RESULT.by_region, [key]: 1 } };
    const o = run("no_blank_keys", { path: "by_region" }, ctxWith(result));
    expect(o.passed).toBe(false);
    expect(o.message).toContain(JSON.stringify(key));
  });

  it("names every offending key", () => {
    const o = run("no_blank_keys", { path: "" }, ctxWith({ North: 1, nan: 2, "": 3, Nancy: 4 }));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/^the object at the root has 2 blank or null-like keys: "nan", ""/);
    expect(o.message).not.toContain("Nancy");
  });

  it("fails when the value at path is not an object", () => {
    const o = run("no_blank_keys", { path: "total_revenue" }, ctxWith(DEMO_RESULT));
    expect(o).toMatchObject({ passed: false, message: 'in "result.json", the value at "total_revenue" is a number (35145.65), expected an object' });
    expect(run("no_blank_keys", { path: "" }, ctxWith([1, 2])).message).toContain("an array of 2 items, expected an object");
  });

  it("fails when the path does not resolve, naming it", () => {
    const o = run("no_blank_keys", { path: "by_country" }, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(false);
    expect(o.message).toBe('in "result.json", path "by_country" does not resolve: key "by_country" not found in the object at the root');
  });

  it("requires path", () => {
    expect(run("no_blank_keys", {}, ctxWith(DEMO_RESULT)).message).toBe("invalid params: path: required");
  });
});

describe("reconciles_total", () => {
  const params = { values_path: "by_region", total_path: "total_revenue" };

  it("passes within tolerance, showing the effective params", () => {
    const o = run("reconciles_total", params, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(true);
    expect(o.params).toEqual({ artifact: "result.json", ...params, tolerance: 0.01 });
    expect(o.message).toContain("is 35145.65, total_revenue is 35145.65");
  });

  it("fails beyond tolerance with sum, total and difference", () => {
    const result = { ...DEMO_RESULT, by_region: { ...DEMO_RESULT.by_region, West: 8675.5 } };
    const o = run("reconciles_total", params, ctxWith(result));
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/is 35190\.15, total_revenue is 35145\.65, difference 44\.5 exceeds tolerance 0\.01$/);
  });

  it("honours a custom tolerance", () => {
    const result = { ...DEMO_RESULT, total_revenue: 35145.6 };
    expect(run("reconciles_total", params, ctxWith(result)).passed).toBe(false);
    expect(run("reconciles_total", { ...params, tolerance: 0.1 }, ctxWith(result)).passed).toBe(true);
  });

  it("treats tolerance 0 as exact decimal equality despite float rounding", () => {
    // 0.1 + 0.2 !== 0.3 in binary floating point.
    const o = run("reconciles_total", { values_path: "v", total_path: "t", tolerance: 0 }, ctxWith({ v: { a: 0.1, b: 0.2 }, t: 0.3 }));
    expect(o.passed).toBe(true);
  });

  it("fails on a numeric string total, saying it is a string", () => {
    const o = run("reconciles_total", params, ctxWith({ ...DEMO_RESULT, total_revenue: "35145.65" }));
    expect(o.passed).toBe(false);
    expect(o.message).toContain('the total at "total_revenue" is a string ("35145.65"), not a number');
  });

  it("fails on numeric string values, naming them", () => {
    const result = { ...DEMO_RESULT, by_region: { ...DEMO_RESULT.by_region, North: "10749.90" } };
    const o = run("reconciles_total", params, ctxWith(result));
    expect(o.passed).toBe(false);
    expect(o.message).toContain('"North" is a string ("10749.90"), not a number');
  });

  it("fails on null and non-finite values", () => {
    const nullValue = run("reconciles_total", params, ctxWith({ ...DEMO_RESULT, by_region: { North: null } }));
    expect(nullValue.message).toContain('"North" is null, expected a finite number');
    // JSON.parse reads 1e999 as Infinity; the verifier's reader refuses it.
    const infinite = run("reconciles_total", params, ctxWith('{"by_region": {"North": 1e999}, "total_revenue": 1}'));
    expect(infinite.passed).toBe(false);
    expect(infinite.message).toContain("number 1e999 is out of range");
  });

  it("fails on an empty breakdown instead of passing vacuously", () => {
    const o = run("reconciles_total", params, ctxWith({ by_region: {}, total_revenue: 0 }));
    expect(o).toMatchObject({ passed: false, message: 'the object at "by_region" is empty: nothing to reconcile' });
  });

  it("fails when a path does not resolve", () => {
    const o = run("reconciles_total", { ...params, total_path: "totals.revenue" }, ctxWith(DEMO_RESULT));
    expect(o.passed).toBe(false);
    expect(o.message).toContain('path "totals.revenue" does not resolve');
  });

  it("rejects bad params", () => {
    expect(run("reconciles_total", { ...params, tolerance: -1 }, ctxWith(DEMO_RESULT)).message).toMatch(/^invalid params: tolerance: /);
    expect(run("reconciles_total", { ...params, tolerance: "0.01" }, ctxWith(DEMO_RESULT)).message).toMatch(/^invalid params: tolerance: /);
    expect(run("reconciles_total", { values_path: "by_region" }, ctxWith(DEMO_RESULT)).message).toBe("invalid params: total_path: required");
  });
});

describe("top_is_argmax", () => {
  const params = { key_path: "top_region", object_path: "by_region" };

  it("passes when the key holds the maximum", () => {
    expect(run("top_is_argmax", params, ctxWith(DEMO_RESULT)).passed).toBe(true);
  });

  it("fails when another key holds the maximum", () => {
    const o = run("top_is_argmax", params, ctxWith({ ...DEMO_RESULT, top_region: "West" }));
    expect(o).toMatchObject({ passed: false, message: '"top_region" is "West" (8631), but the maximum is "North" (10749.9)' });
  });

  it("passes for any key of a tie", () => {
    const tied = { ...DEMO_RESULT, by_region: { ...DEMO_RESULT.by_region, South: 10749.9 } };
    expect(run("top_is_argmax", params, ctxWith({ ...tied, top_region: "South" })).passed).toBe(true);
    expect(run("top_is_argmax", params, ctxWith({ ...tied, top_region: "North" })).passed).toBe(true);
    expect(run("top_is_argmax", params, ctxWith({ ...tied, top_region: "East" })).message).toContain('shared by "North", "South"');
  });

  it("fails when the key is not in the object", () => {
    const o = run("top_is_argmax", params, ctxWith({ ...DEMO_RESULT, top_region: "north" }));
    expect(o.passed).toBe(false);
    expect(o.message).toContain('"north", which is not a key of "by_region"');
  });

  it("does not find keys through the prototype", () => {
    const o = run("top_is_argmax", params, ctxWith({ ...DEMO_RESULT, top_region: "constructor" }));
    expect(o.passed).toBe(false);
  });

  it("fails when the key is not a string", () => {
    const o = run("top_is_argmax", params, ctxWith({ ...DEMO_RESULT, top_region: 0 }));
    expect(o.message).toContain('the value at "top_region" is a number (0), expected a string');
  });

  it("fails when a value is not a number", () => {
    const result = { ...DEMO_RESULT, by_region: { ...DEMO_RESULT.by_region, East: "99999" } };
    const o = run("top_is_argmax", params, ctxWith(result));
    expect(o.passed).toBe(false);
    expect(o.message).toContain('"East" is a string ("99999"), not a number');
  });

  it("fails on an empty object", () => {
    expect(run("top_is_argmax", params, ctxWith({ by_region: {}, top_region: "North" })).passed).toBe(false);
  });

  it("follows array indexes in paths", () => {
    const result = { regions: [{ name: "North", revenue: { North: 2, South: 1 } }] };
    expect(run("top_is_argmax", { key_path: "regions.0.name", object_path: "regions.0.revenue" }, ctxWith(result)).passed).toBe(true);
    const o = run("top_is_argmax", { key_path: "regions.1.name", object_path: "regions.0.revenue" }, ctxWith(result));
    expect(o.message).toContain("index 1 is out of range for the array at \"regions\" (length 1)");
  });
});
