// issue 16.5: client patterns run through RE2 (linear time), so no pattern can stall a check.
import { describe, expect, it } from "vitest";
import { runChecks, validateCheckSpec } from "../src/index";
import { check, ctxWith } from "./support";

describe("json_schema patterns (RE2)", () => {
  const evil = { type: "object", properties: { name: { type: "string", pattern: "^(a+)+$" } } };
  const alternation = { type: "object", properties: { name: { type: "string", pattern: "^(a|a)*$" } } };
  const evilKeys = { type: "object", patternProperties: { "^([a-z]+)*$": { type: "number" } } };

  it("runs patterns that backtrack exponentially in JavaScript in linear time, with the right answer", () => {
    for (const schema of [evil, alternation, evilKeys]) expect(validateCheckSpec(check("json_schema", { schema })).ok).toBe(true);
    const started = performance.now();
    const attack = `${"a".repeat(50_000)}!`;
    const [o1] = runChecks([check("json_schema", { schema: evil })], ctxWith({ name: attack }));
    const [o2] = runChecks([check("json_schema", { schema: alternation })], ctxWith({ name: attack }));
    const [o3] = runChecks([check("json_schema", { schema: alternation })], ctxWith({ name: "a".repeat(50_000) }));
    expect(o1).toMatchObject({ passed: false });
    expect(o2).toMatchObject({ passed: false });
    expect(o3).toMatchObject({ passed: true });
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("refuses patterns RE2 cannot run (backreferences, lookaround) up front, at the schema's path", () => {
    for (const pattern of ["^(a)\\1$", "^(?=a)a$"]) {
      const v = validateCheckSpec(check("json_schema", { schema: { type: "string", pattern } }));
      expect(v.ok).toBe(false);
      if (v.ok) return;
      expect(v.issues[0]!.path).toEqual(["params", "schema"]);
      expect(v.issues[0]!.message).toMatch(/RE2/);
    }
  });

  it("still runs ordinary patterns", () => {
    const schema = { type: "object", properties: { region: { type: "string", pattern: "^[A-Z][a-z]+$" } } };
    expect(runChecks([check("json_schema", { schema })], ctxWith({ region: "North" }))[0]).toMatchObject({ passed: true });
    expect(runChecks([check("json_schema", { schema })], ctxWith({ region: "north" }))[0]).toMatchObject({ passed: false });
  });

  it("refuses a schema past the size caps at submit time", () => {
    const huge = { type: "object", properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, { const: i }])) };
    const v = validateCheckSpec(check("json_schema", { schema: huge }));
    expect(v.ok).toBe(false);
    if (!v.ok) expect(v.issues[0]!.message).toMatch(/too large/);
  });
});
