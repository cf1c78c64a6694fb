import { jsonSchema, zodSchema, type JSONSchema7, type Schema } from "ai";
import type { z } from "zod";

/**
 * The AI SDK's schema for `schema`, with the JSON schema's root `$ref` inlined.
 *
 * Our model-facing schemas carry `.meta({ id })` (for OpenAPI), so z.toJSONSchema emits
 * `{ "$ref": "#/definitions/Plan", "definitions": {...} }` with no `type` at the root. Providers want an object
 * there: Anthropic's tool `input_schema` must be `type: "object"`, and so must OpenAI's strict json_schema.
 * Validation is untouched: replies are still checked by the zod schema itself.
 */
export function providerSchema<T>(schema: z.ZodType<T>): Schema<T> {
  const base = zodSchema(schema);
  return jsonSchema<T>(async () => inlineRootRef(await base.jsonSchema), { validate: base.validate });
}

export function inlineRootRef(s: JSONSchema7): JSONSchema7 {
  const name = typeof s.$ref === "string" ? /^#\/definitions\/([^/~]+)$/.exec(s.$ref)?.[1] : undefined;
  const defs = s.definitions ?? {};
  const root = name === undefined ? undefined : defs[name];
  if (name === undefined || root === undefined || typeof root === "boolean") return s;

  const { $ref: _ref, definitions: _defs, ...rest } = s;
  const others = Object.fromEntries(Object.entries(defs).filter(([k]) => k !== name));
  // A recursive schema still points at its root definition, so that one has to stay.
  const definitions = JSON.stringify([root, others]).includes(`"#/definitions/${name}"`) ? defs : others;
  return { ...rest, ...root, ...(Object.keys(definitions).length > 0 ? { definitions } : {}) };
}
