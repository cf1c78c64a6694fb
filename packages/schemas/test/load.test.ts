// A schema that throws while its module loads (a pick or omit of a key its shape lost, a union option
// without its discriminator) fails every file that imports it before any test runs, which a mutation run
// reads as "no test failed" (issue 18). This file imports the package inside a test, so that such a change
// fails a test.
import { expect, it } from "vitest";

it("the schema package loads, with every schema it exports", async () => {
  const schemas = await import("../src/index");
  expect(Object.keys(schemas).length).toBeGreaterThan(50);
  expect(schemas.goalSummary.shape.id).toBeDefined();
  expect(schemas.modelSpec.safeParse({ provider: "anthropic" }).success).toBe(true);
});
