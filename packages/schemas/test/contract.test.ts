// The published contract is the enforced one (issue 18): every named schema, as zod converts it for
// requests (input) and for responses (output), is exactly the component the committed OpenAPI document
// publishes under its name, limits, enums, defaults, required fields and strictness included. A limit that
// changes in code without the document (npm run openapi) fails here, and so does one that changes unseen.
// Issue 28 (3): the document publishes only the components its operations reference, and request schemas
// say their defaults in words ("Default: 5.") instead of the `default` keyword, which makes
// openapi-typescript's default options require the field. So: each component the document has is exactly
// its zod conversion (defaults in words for requests), each component it leaves out is one nothing
// references, and no component goes unchecked except the few named below, which are not in this package.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as schemas from "../src/index";

type Json = Record<string, unknown>;
const doc = JSON.parse(readFileSync(new URL("../../../openapi/openapi.json", import.meta.url), "utf8")) as Json & { components: { schemas: Record<string, unknown> } };
const exported = Object.entries(schemas).filter((e): e is [string, z.ZodType] => e[1] instanceof z.ZodType);

/** Components the document publishes that no schema of this package defines: the API's own routes' and the webhook envelope. */
const DEFINED_ELSEWHERE = [
  "ApiKeyInfo",
  "DeadLetter",
  "DeadLetterList",
  "ExpiredWebhookSecret",
  "IssuedApiKey",
  "NewApiKeyInput",
  "RotateApiKeyInput",
  "RotatedApiKey",
  "WebhookSecretInfo",
  "WebhookEvent",
  "ThinGoal",
];

/** A request schema as the document words it: each `default` keyword moved to the end of its description. */
function defaultsInWords(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(defaultsInWords);
  if (!schema || typeof schema !== "object") return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (k === "default" || k === "enum" || k === "const" || k === "examples") out[k] = v;
    else if (k === "properties" || k === "patternProperties" || k === "$defs") out[k] = Object.fromEntries(Object.entries(v as Json).map(([p, s]) => [p, defaultsInWords(s)]));
    else out[k] = defaultsInWords(v);
  }
  if ("default" in out) {
    const words = `Default: ${JSON.stringify(out.default)}.`;
    out.description = typeof out.description === "string" && out.description !== "" ? `${out.description} ${words}` : words;
    delete out.default;
  }
  return out;
}

/** The components a schema defines, as the document names them (request shapes carry an "Input" suffix). */
function components(s: z.ZodType, io: "input" | "output"): [string, unknown][] {
  const js = z.toJSONSchema(s, { io, unrepresentable: "any" }) as { $defs?: Record<string, unknown> };
  const suffix = io === "input" ? "Input" : "";
  return Object.entries(js.$defs ?? {}).map(([k, v]) => {
    const json = JSON.parse(JSON.stringify(v).replace(/"#\/\$defs\/([A-Za-z0-9_]+)"/g, (_, ref: string) => `"#/components/schemas/${ref}${suffix}"`)) as unknown;
    return [`${k}${suffix}`, io === "input" ? defaultsInWords(json) : json];
  });
}

const refsIn = (value: unknown): string[] => [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!);

describe("the schemas as published", () => {
  it("every component the document publishes is exactly its named schema, input and output", () => {
    let compared = 0;
    const checked = new Set<string>();
    for (const [name, s] of exported) {
      for (const io of ["input", "output"] as const) {
        for (const [id, json] of components(s, io)) {
          if (!(id in doc.components.schemas)) continue; // referenced by nothing: the test below proves it
          expect(json, `${name} (${io}): ${id}`).toEqual(doc.components.schemas[id]);
          checked.add(id);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(150);
    const unchecked = Object.keys(doc.components.schemas).filter((id) => !checked.has(id));
    expect(unchecked.sort(), "a component no schema of this package checks: compare it here or name it in DEFINED_ELSEWHERE").toEqual([...DEFINED_ELSEWHERE].sort());
  });

  it("leaves out only what nothing references: every reference resolves, and every component is reached from an operation", () => {
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(0);
    expect(refs.filter((r) => !(r in doc.components.schemas))).toEqual([]);
    const reached = new Set<string>();
    const todo = refsIn([doc.paths, doc.webhooks]);
    while (todo.length) {
      const id = todo.pop()!;
      if (reached.has(id)) continue;
      reached.add(id);
      todo.push(...refsIn(doc.components.schemas[id]));
    }
    expect(Object.keys(doc.components.schemas).filter((id) => !reached.has(id))).toEqual([]);
  });

  it("request schemas state their defaults in words and never require a defaulted field", () => {
    const create = doc.components.schemas.CreateGoalInput as { required: string[]; properties: Record<string, Json> };
    expect(create.required).toEqual(["objective"]);
    expect(create.properties.max_attempts!.default).toBeUndefined();
    expect(create.properties.max_attempts!.description).toBe("Executions before the goal ends failed. Default: 5.");
    expect(create.properties.language!.description).toMatch(/ Default: "python"\.$/);
    expect(JSON.stringify(doc.components.schemas.CheckSpecInput)).toContain('Default: \\"deterministic\\".');
  });
});
