import { describe, expect, it } from "vitest";
import { runChecks, validateCheckSpec } from "../src/index";
import { check } from "./support";

const ctx = (value: unknown) => ({
  exitCode: 0,
  timedOut: false,
  oomKilled: false,
  stderr: "",
  artifacts: [{ name: "result.json", content: Buffer.from(JSON.stringify(value)) }],
  artifactErrors: [],
});

describe("json_schema patterns", () => {
  const evil = { type: "object", properties: { name: { type: "string", pattern: "^(a+)+$" } } };
  const evilKeys = { type: "object", patternProperties: { "^([a-z]+)*$": { type: "number" } } };

  it("refuses a pattern with nested quantifiers up front, at the schema's path", () => {
    for (const schema of [evil, evilKeys]) {
      const v = validateCheckSpec(check("json_schema", { schema }));
      expect(v.ok).toBe(false);
      if (v.ok) return;
      expect(v.issues[0]!.path).toEqual(["params", "schema"]);
      expect(v.issues[0]!.message).toMatch(/exponential time/);
    }
  });

  it("fails closed at run time without running it, even on the artifact that would make it hang", async () => {
    const started = performance.now();
    const [outcome] = runChecks([check("json_schema", { schema: evil })], ctx({ name: `${"a".repeat(40)}!` }));
    expect(outcome).toMatchObject({ passed: false });
    expect(outcome!.message).toMatch(/exponential time/);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("still runs ordinary patterns", () => {
    const schema = { type: "object", properties: { region: { type: "string", pattern: "^[A-Z][a-z]+$" } } };
    expect(runChecks([check("json_schema", { schema })], ctx({ region: "North" }))[0]).toMatchObject({ passed: true });
    expect(runChecks([check("json_schema", { schema })], ctx({ region: "north" }))[0]).toMatchObject({ passed: false });
  });
});
