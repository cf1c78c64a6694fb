import { checkSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { listChecks, validateCheckSpec } from "../src/index";
import { check } from "./support";

describe("validateCheckSpec", () => {
  it("accepts known checks with valid params", () => {
    expect(validateCheckSpec(check("exits_clean"))).toEqual({ ok: true });
    expect(validateCheckSpec(check("schema_ok"))).toEqual({ ok: true });
    expect(validateCheckSpec(check("reconciles_total", { values_path: "by_region", total_path: "total_revenue", tolerance: 0.5 }))).toEqual({ ok: true });
  });

  it("accepts a spec parsed from client input with defaults", () => {
    const spec = checkSpec.parse({ id: "no_null_region" });
    expect(validateCheckSpec(spec)).toEqual({ ok: true });
  });

  it("puts an unknown id at [\"id\"]", () => {
    const v = validateCheckSpec(check("totally_fine"));
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.issues).toHaveLength(1);
    expect(v.issues[0]!.path).toEqual(["id"]);
    expect(v.issues[0]!.message).toContain('unknown check id "totally_fine"');
  });

  it("puts param issues under [\"params\", ...]", () => {
    const v = validateCheckSpec(check("reconciles_total", { values_path: 3, tolerance: -1, extra: true }));
    expect(v.ok).toBe(false);
    if (v.ok) return;
    expect(v.issues.map((i) => i.path)).toEqual(
      expect.arrayContaining([["params", "values_path"], ["params", "total_path"], ["params", "tolerance"], ["params"]]),
    );
    expect(v.issues.find((i) => i.path[1] === "total_path")!.message).toBe("required");
    expect(v.issues.find((i) => i.path.length === 1)!.message).toContain('"extra"');
  });

  it("reports nested params paths", () => {
    const v = validateCheckSpec(check("json_schema", { schema: [] }));
    expect(v).toEqual({ ok: false, issues: [{ path: ["params", "schema"], message: "must be a JSON Schema object" }] });
  });

  it("rejects a JSON Schema that does not compile, for json_schema and schema_ok alike", () => {
    for (const id of ["json_schema", "schema_ok"]) {
      const v = validateCheckSpec(check(id, { schema: { type: "objekt" } }));
      expect(v.ok).toBe(false);
      if (v.ok) return;
      expect(v.issues).toHaveLength(1);
      expect(v.issues[0]!.path).toEqual(["params", "schema"]);
      expect(v.issues[0]!.message).toMatch(/^the JSON Schema does not compile: /);
    }
  });

  it("always accepts judgement checks", () => {
    expect(validateCheckSpec({ id: "anything at all", params: { whatever: [1] }, kind: "judgement", description: "" })).toEqual({ ok: true });
  });
});

describe("listChecks", () => {
  it("lists every check with a description, and aliases with their target", () => {
    const list = listChecks();
    expect(list.map((c) => c.id)).toEqual([
      "exits_clean",
      "artifact_exists",
      "csv_matches",
      "csv_repair",
      "csv_schema",
      "row_count",
      "json_parses",
      "json_schema",
      "json_matches",
      "json_assert",
      "text_matches",
      "cases",
      "test_suite",
      "command",
      "no_blank_keys",
      "reconciles_total",
      "top_is_argmax",
      "schema_ok",
      "no_null_region",
    ]);
    for (const c of list) expect(c.description.length).toBeGreaterThan(10);
    expect(list.find((c) => c.id === "schema_ok")!.aliasOf).toBe("json_schema");
    expect(list.find((c) => c.id === "no_null_region")!.aliasOf).toBe("no_blank_keys");
    expect(list.find((c) => c.id === "json_schema")).not.toHaveProperty("aliasOf");
  });

  it("every listed alias points at a listed non-alias check", () => {
    const list = listChecks();
    for (const c of list.filter((x) => x.aliasOf !== undefined)) {
      expect(list.find((x) => x.id === c.aliasOf)?.aliasOf).toBeUndefined();
    }
  });
});
