import { z } from "zod";
import { artifactParam } from "../artifacts";
import { defineAlias } from "../define";
import { dotPath } from "../json-path";
import { jsonSchema, jsonSchemaParam } from "./json-schema";
import { noBlankKeys } from "./no-blank-keys";

// Shortcuts with defaults that fit the demo goal: sales.csv summarised into result.json as
// {"by_region": {"North": 10749.9, ...}, "total_revenue": 35145.65, "top_region": "North", "top_region_share": 0.3059}.

export const DEMO_RESULT_SCHEMA = {
  type: "object",
  required: ["by_region", "total_revenue", "top_region", "top_region_share"],
  properties: {
    by_region: { type: "object", minProperties: 1, additionalProperties: { type: "number" } },
    total_revenue: { type: "number" },
    top_region: { type: "string" },
    top_region_share: { type: "number", minimum: 0, maximum: 1 },
  },
} as const satisfies Record<string, unknown>;

export const schemaOk = defineAlias(
  "json_schema",
  jsonSchema,
  "json_schema with the demo's result schema by default: by_region (non-empty object of numbers), total_revenue (number), top_region (string), top_region_share (number in [0, 1]). Params: artifact (default \"result.json\"), schema (default: that schema).",
  z.strictObject({
    artifact: artifactParam,
    // A fresh copy each time: the effective params are handed to callers, who must not share (or mutate) the default.
    schema: jsonSchemaParam.default(() => structuredClone(DEMO_RESULT_SCHEMA) as Record<string, unknown>),
  }),
  {},
);

export const noNullRegion = defineAlias(
  "no_blank_keys",
  noBlankKeys,
  'no_blank_keys with path "by_region" by default: no region is blank or a null placeholder such as "nan" or "None". Params: artifact (default "result.json"), path (default "by_region").',
  z.strictObject({ artifact: artifactParam, path: dotPath.default("by_region") }),
  {},
);
