import { Ajv, type ErrorObject, type Options } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import safeRegex from "safe-regex2";
import { z } from "zod";
import { artifactParam, loadJson } from "../artifacts";
import { defineCheck } from "../define";
import { preview } from "../format";

const MAX_ERRORS_SHOWN = 5;

/**
 * Schemas come from clients and planners, and ajv runs their `pattern`s with the JavaScript engine on the
 * runner's event loop: a pattern with nested quantifiers, say ^(a+)+$, could stall it for hours on a
 * crafted artifact. Such patterns are refused when the schema compiles (star height above 1).
 */
const guardedRegExp = Object.assign(
  (pattern: string, flags: string) => {
    if (!safeRegex(pattern)) {
      throw new Error(`pattern ${JSON.stringify(pattern)} could take exponential time to match (nested quantifiers); rewrite it`);
    }
    return new RegExp(pattern, flags);
  },
  { code: "new RegExp" },
);

const ajvOptions: Options = {
  code: { regExp: guardedRegExp },
  allErrors: true,
  // Formats are not needed; ignoring them keeps "format" from failing compilation as an unknown format.
  validateFormats: false,
  // Unknown keywords still fail compilation (a typo like "requird" must not silently weaken the check);
  // the type/tuple lints only warn about style, so they stay off rather than logging to the console.
  strictSchema: true,
  strictTypes: false,
  strictTuples: false,
  logger: false,
};

/** Each Ajv class knows one draft's meta-schema; pick by `$schema` so models can write either. */
function ajvFor(schema: Record<string, unknown>) {
  const dialect = typeof schema.$schema === "string" ? schema.$schema : "";
  if (dialect.includes("2020-12")) return new Ajv2020(ajvOptions);
  if (dialect.includes("2019-09")) return new Ajv2019(ajvOptions);
  return new Ajv(ajvOptions);
}

/** Compiles or throws with ajv's reason. */
function compile(schema: Record<string, unknown>) {
  return ajvFor(schema).compile(schema);
}

/**
 * A JSON Schema object that compiles. Compiling during param validation lets the API reject a broken
 * schema up front; the check compiles again at run time and fails closed should that ever differ.
 */
export const jsonSchemaParam = z
  .record(z.string(), z.unknown(), { error: (iss) => (iss.input === undefined ? "required" : "must be a JSON Schema object") })
  .superRefine((schema, ctx) => {
    try {
      compile(schema);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: `the JSON Schema does not compile: ${(e as Error).message}` });
    }
  });

function describeError(e: ErrorObject): string {
  const at = e.instancePath === "" ? "(root)" : e.instancePath;
  let detail = "";
  if (e.keyword === "additionalProperties") detail = ` (${JSON.stringify(e.params.additionalProperty)})`;
  else if (e.keyword === "enum") detail = ` (${preview(e.params.allowedValues)})`;
  else if (e.keyword === "const") detail = ` (${preview(e.params.allowedValue)})`;
  return `${at} ${e.message ?? e.keyword}${detail}`;
}

export const jsonSchema = defineCheck({
  description:
    'The JSON artifact validates against a JSON Schema (draft-07, or 2019-09/2020-12 by $schema; formats ignored, unknown keywords rejected). Params: artifact (default "result.json"), schema (required).',
  params: z.strictObject({
    artifact: artifactParam,
    schema: jsonSchemaParam,
  }),
  run({ artifact, schema }, ctx) {
    let validate;
    try {
      validate = compile(schema);
    } catch (e) {
      return { passed: false, message: `the JSON Schema does not compile: ${(e as Error).message}` };
    }
    const doc = loadJson(ctx, artifact);
    if (!doc.ok) return { passed: false, message: doc.message };
    if (validate(doc.value)) return { passed: true, message: `artifact "${artifact}" matches the JSON Schema` };
    const errors = validate.errors ?? [];
    const shown = errors.slice(0, MAX_ERRORS_SHOWN).map(describeError);
    const more = errors.length > MAX_ERRORS_SHOWN ? `; and ${errors.length - MAX_ERRORS_SHOWN} more` : "";
    return {
      passed: false,
      message: `artifact "${artifact}" does not match the JSON Schema (${errors.length} error${errors.length === 1 ? "" : "s"}): ${shown.join("; ")}${more}`,
    };
  },
});
