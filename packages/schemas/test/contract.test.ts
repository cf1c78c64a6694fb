// The published contract is the enforced one (issue 18): every named schema, as zod converts it for
// requests (input) and for responses (output), is exactly the component the committed OpenAPI document
// publishes under its name, limits, enums, defaults, required fields and strictness included. A limit that
// changes in code without the document (npm run openapi) fails here, and so does one that changes unseen.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as schemas from "../src/index";

const doc = JSON.parse(readFileSync(new URL("../../../openapi/openapi.json", import.meta.url), "utf8")) as { components: { schemas: Record<string, unknown> } };
const exported = Object.entries(schemas).filter((e): e is [string, z.ZodType] => e[1] instanceof z.ZodType);

/** The components a schema defines, as the document names them (request shapes carry an "Input" suffix). */
function components(s: z.ZodType, io: "input" | "output"): [string, unknown][] {
  const js = z.toJSONSchema(s, { io, unrepresentable: "any" }) as { $defs?: Record<string, unknown> };
  const suffix = io === "input" ? "Input" : "";
  return Object.entries(js.$defs ?? {}).map(([k, v]) => [
    `${k}${suffix}`,
    JSON.parse(JSON.stringify(v).replace(/"#\/\$defs\/([A-Za-z0-9_]+)"/g, (_, ref: string) => `"#/components/schemas/${ref}${suffix}"`)) as unknown,
  ]);
}

describe("the schemas as published", () => {
  it("every named schema, input and output, is exactly its component in the committed OpenAPI document", () => {
    let compared = 0;
    for (const [name, s] of exported) {
      for (const io of ["input", "output"] as const) {
        for (const [id, json] of components(s, io)) {
          expect(doc.components.schemas[id], `${name} (${io}): ${id} is not in the document`).toBeDefined();
          expect(json, `${name} (${io}): ${id}`).toEqual(doc.components.schemas[id]);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(150);
  });
});
