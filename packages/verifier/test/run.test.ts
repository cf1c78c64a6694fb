import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { DEMO_RESULT_SCHEMA, runChecks, type VerifyContext } from "../src/index";
import { check, ctxWith, DEMO_RESULT } from "./support";

/** The acceptance checks the demo plan uses. */
const DEMO_CHECKS: CheckSpec[] = [
  check("exits_clean"),
  check("schema_ok"),
  check("no_null_region"),
  check("reconciles_total", { values_path: "by_region", total_path: "total_revenue" }),
  check("top_is_argmax", { key_path: "top_region", object_path: "by_region" }),
];

describe("runChecks: fail closed", () => {
  it("fails an unknown id and lists the known ones", () => {
    const [o] = runChecks([check("looks_right", { x: 1 })], ctxWith(DEMO_RESULT));
    expect(o).toMatchObject({ id: "looks_right", params: { x: 1 }, passed: false });
    expect(o!.message).toMatch(/^unknown check id "looks_right"; known deterministic checks: exits_clean, artifact_exists, /);
    expect(o!.message).toContain("no_null_region");
  });

  it.each(["constructor", "__proto__", "toString", "hasOwnProperty"])("treats the prototype name %s as unknown", (id) => {
    const [o] = runChecks([check(id)], ctxWith(DEMO_RESULT));
    expect(o!.passed).toBe(false);
    expect(o!.message).toMatch(/^unknown check id/);
  });

  it("turns a throw inside a check into a failure", () => {
    const ctx = ctxWith(DEMO_RESULT);
    ctx.artifacts = [
      {
        name: "result.json",
        get content(): Buffer {
          throw new Error("disk vanished");
        },
      },
    ];
    const outcomes = runChecks([check("json_parses"), check("exits_clean")], ctx);
    expect(outcomes[0]).toEqual({
      id: "json_parses",
      params: { artifact: "result.json" },
      passed: false,
      message: "check threw: Error: disk vanished",
      feedback: "check threw: Error: disk vanished",
      hidden: false,
      findings: [],
    });
    // One throwing check does not stop the rest.
    expect(outcomes[1]!.passed).toBe(true);
  });

  it("turns a throw of a non-Error into a failure too", () => {
    const ctx = {
      ...ctxWith(DEMO_RESULT),
      get stderr(): string {
        throw "stderr unavailable";
      },
      exitCode: 1,
    } as VerifyContext;
    const [o] = runChecks([check("exits_clean")], ctx);
    expect(o).toMatchObject({ passed: false, message: "check threw: stderr unavailable" });
  });

  it("fails every artifact check when the artifact is missing", () => {
    const ctx = ctxWith(DEMO_RESULT, { artifacts: [] });
    const outcomes = runChecks(DEMO_CHECKS, ctx);
    expect(outcomes.map((o) => [o.id, o.passed])).toEqual([
      ["exits_clean", true],
      ["schema_ok", false],
      ["no_null_region", false],
      ["reconciles_total", false],
      ["top_is_argmax", false],
    ]);
    for (const o of outcomes.slice(1)) expect(o.message).toContain('artifact "result.json" was not returned');
  });

  it("fails every artifact check when the artifact is not JSON", () => {
    const outcomes = runChecks(DEMO_CHECKS.slice(1), ctxWith("region,revenue\nNorth,10749.9\n"));
    for (const o of outcomes) {
      expect(o.passed).toBe(false);
      expect(o.message).toMatch(/is not valid JSON/);
    }
  });

  it("fails on invalid params with the param path, keeping the raw params", () => {
    const [o] = runChecks([check("reconciles_total", { values_path: "by_region", total_path: "total_revenue", tolerance: "tiny" })], ctxWith(DEMO_RESULT));
    expect(o!.passed).toBe(false);
    expect(o!.params).toEqual({ values_path: "by_region", total_path: "total_revenue", tolerance: "tiny" });
    expect(o!.message).toMatch(/^invalid params: tolerance: /);
  });

  it("rejects misspelt params rather than silently using defaults", () => {
    const [o] = runChecks([check("reconciles_total", { values_path: "by_region", total_path: "total_revenue", tolerence: 100 })], ctxWith(DEMO_RESULT));
    expect(o).toMatchObject({ passed: false, message: 'invalid params: (params): Unrecognized key: "tolerence"' });
  });

  it("rejects malformed dot paths", () => {
    const [o] = runChecks([check("no_blank_keys", { path: "by_region." })], ctxWith(DEMO_RESULT));
    expect(o!.message).toMatch(/^invalid params: path: must be "" \(the root\) or dot-separated non-empty keys/);
  });

  it("fails closed on an uncompilable schema", () => {
    const [o] = runChecks([check("json_schema", { schema: { type: 42 } })], ctxWith(DEMO_RESULT));
    expect(o!.passed).toBe(false);
    expect(o!.message).toMatch(/^invalid params: schema: the JSON Schema does not compile: /);
  });
});

describe("runChecks: order, kinds and params", () => {
  it("skips judgement checks and keeps the order of the rest", () => {
    const checks: CheckSpec[] = [
      check("exits_clean"),
      { id: "chart_is_readable", params: {}, kind: "judgement", description: "The chart has labelled axes." },
      { id: "no_such_check", params: {}, kind: "judgement", description: "Judgement ids are not the verifier's to know." },
      check("json_parses"),
    ];
    expect(runChecks(checks, ctxWith(DEMO_RESULT)).map((o) => o.id)).toEqual(["exits_clean", "json_parses"]);
  });

  it("returns nothing for no checks", () => {
    expect(runChecks([], ctxWith(DEMO_RESULT))).toEqual([]);
  });

  it("reports the effective params with defaults filled in", () => {
    const [a, b] = runChecks([check("artifact_exists"), check("reconciles_total", { values_path: "by_region", total_path: "total_revenue" })], ctxWith(DEMO_RESULT));
    expect(a!.params).toEqual({ name: "result.json" });
    expect(b!.params).toEqual({ artifact: "result.json", values_path: "by_region", total_path: "total_revenue", tolerance: 0.01 });
  });

  it("does not mutate the caller's params", () => {
    const spec = check("reconciles_total", { values_path: "by_region", total_path: "total_revenue" });
    runChecks([spec], ctxWith(DEMO_RESULT));
    expect(spec.params).toEqual({ values_path: "by_region", total_path: "total_revenue" });
  });
});

describe("aliases on the demo", () => {
  it("all demo checks pass on the correct result", () => {
    const outcomes = runChecks(DEMO_CHECKS, ctxWith(DEMO_RESULT));
    for (const o of outcomes) expect(o, o.message).toMatchObject({ passed: true });
  });

  it("keeps the alias id and shows the effective params", () => {
    const [schemaOk, noNull] = runChecks([check("schema_ok"), check("no_null_region")], ctxWith(DEMO_RESULT));
    expect(schemaOk).toMatchObject({ id: "schema_ok", params: { artifact: "result.json", schema: DEMO_RESULT_SCHEMA } });
    expect(noNull).toMatchObject({ id: "no_null_region", params: { artifact: "result.json", path: "by_region" } });
  });

  it("hands out a fresh copy of the default schema each time", () => {
    const [first] = runChecks([check("schema_ok")], ctxWith(DEMO_RESULT));
    (first!.params.schema as { type: string }).type = "array";
    const [second] = runChecks([check("schema_ok")], ctxWith(DEMO_RESULT));
    expect(second!.passed).toBe(true);
    expect(DEMO_RESULT_SCHEMA.type).toBe("object");
  });

  it.each(["nan", ""])("no_null_region fails on a %j region key", (key) => {
    const result = { ...DEMO_RESULT, by_region: { ...DEMO_RESULT.by_region, [key]: 0 } };
    const outcomes = runChecks(DEMO_CHECKS, ctxWith(result));
    const noNull = outcomes.find((o) => o.id === "no_null_region")!;
    expect(noNull.passed).toBe(false);
    expect(noNull.message).toContain(`the object at "by_region" has 1 blank or null-like key: ${JSON.stringify(key)}`);
    // The region adds 0, so the other checks still pass: the alias is what catches it.
    expect(outcomes.filter((o) => !o.passed).map((o) => o.id)).toEqual(["no_null_region"]);
  });

  it("reconciles_total fails on a total that does not add up", () => {
    const result = { ...DEMO_RESULT, by_region: { ...DEMO_RESULT.by_region, West: 8675.5 } };
    const outcomes = runChecks(DEMO_CHECKS, ctxWith(result));
    const reconcile = outcomes.find((o) => o.id === "reconciles_total")!;
    expect(reconcile.passed).toBe(false);
    expect(reconcile.message).toContain("is 35190.15, total_revenue is 35145.65, difference 44.5 exceeds tolerance 0.01");
    expect(outcomes.filter((o) => !o.passed).map((o) => o.id)).toEqual(["reconciles_total"]);
  });

  it("schema_ok fails on a numeric string, a share over 1, and an empty by_region", () => {
    const [o] = runChecks([check("schema_ok")], ctxWith({ ...DEMO_RESULT, total_revenue: "35145.65", top_region_share: 30.59, by_region: {} }));
    expect(o!.passed).toBe(false);
    expect(o!.message).toContain("/total_revenue must be number");
    expect(o!.message).toContain("/top_region_share must be <= 1");
    expect(o!.message).toContain("/by_region must NOT have fewer than 1 properties");
  });

  it("schema_ok fails on a missing field", () => {
    const { top_region: _dropped, ...rest } = DEMO_RESULT;
    const [o] = runChecks([check("schema_ok")], ctxWith(rest));
    expect(o!.message).toContain("(root) must have required property 'top_region'");
  });

  it("aliases accept overrides", () => {
    const ctx = ctxWith(DEMO_RESULT);
    ctx.artifacts.push({ name: "summary.json", content: Buffer.from(JSON.stringify({ regions: { "<NA>": 1 } })) });
    const [schemaOk, noNull] = runChecks(
      [check("schema_ok", { artifact: "summary.json", schema: { type: "object", required: ["regions"] } }), check("no_null_region", { artifact: "summary.json", path: "regions" })],
      ctx,
    );
    expect(schemaOk).toMatchObject({ passed: true, params: { artifact: "summary.json", schema: { type: "object", required: ["regions"] } } });
    expect(noNull).toMatchObject({ passed: false, params: { artifact: "summary.json", path: "regions" } });
    expect(noNull!.message).toContain('"<NA>"');
  });

  it("aliases reject params their target does not take", () => {
    const [o] = runChecks([check("no_null_region", { tolerance: 1 })], ctxWith(DEMO_RESULT));
    expect(o).toMatchObject({ passed: false, message: 'invalid params: (params): Unrecognized key: "tolerance"' });
  });
});
