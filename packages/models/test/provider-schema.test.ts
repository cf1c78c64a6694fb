import { describe, expect, it } from "vitest";
import { z } from "zod";
import { inspection } from "@loopsmith/schemas";
import { inlineRootRef, providerSchema } from "../src/index";

describe("providerSchema", () => {
  it("puts the object at the root instead of a $ref, and still validates with zod", async () => {
    const s = providerSchema(inspection);
    const json = await s.jsonSchema;
    expect(json).toMatchObject({ type: "object", additionalProperties: false, required: ["verified", "failing_checks", "diagnosis", "fix_hint"] });
    expect(json).not.toHaveProperty("$ref");
    expect(json).not.toHaveProperty("definitions");
    const bad = await s.validate?.({ verified: "yes" });
    expect(bad?.success).toBe(false);
  });

  it("keeps the root definition when a recursive schema still refers to it", () => {
    const tree = {
      $ref: "#/definitions/Node",
      definitions: { Node: { type: "object" as const, properties: { children: { type: "array" as const, items: { $ref: "#/definitions/Node" } } } } },
    };
    const out = inlineRootRef(tree);
    expect(out.type).toBe("object");
    expect(out.definitions).toEqual(tree.definitions);
  });

  it("leaves a schema without a root $ref alone", async () => {
    const plain = await providerSchema(z.object({ a: z.string() })).jsonSchema;
    expect(plain).toMatchObject({ type: "object", properties: { a: { type: "string" } } });
  });
});
