import { Ajv, type ErrorObject, type Options } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import { z } from "zod";
import { artifactParam, loadJson } from "../artifacts";
import { defineCheck } from "../define";
import { preview } from "../format";
import { compilePattern } from "../lib/regex";

const MAX_ERRORS_SHOWN = 5;

/**
 * Schemas come from clients and planners, and ajv runs their `pattern`s. Through RE2 (linear time), no
 * pattern can stall a check with catastrophic backtracking (^(a|a)*$ included); RE2 refuses
 * backreferences and lookaround, and such a schema does not compile.
 */
const re2RegExp = Object.assign(
  (pattern: string, flags: string) => {
    const caseless = flags.includes("i");
    // Stryker disable next-line StringLiteral: unreachable; ajv passes only "u" here (a JSON Schema pattern has no flags)
    const c = compilePattern(pattern, caseless ? "i" : "");
    if (!c.ok) throw new Error(c.message);
    return { test: (s: string) => c.pattern.test(s) };
  },
  { code: "new RegExp" },
);

/** Submit-time bounds: compiling a multi-megabyte schema would block whoever compiles it for seconds. */
export const MAX_SCHEMA_BYTES = 64 * 1024;
export const MAX_SCHEMA_NODES = 5000;

function schemaSize(schema: unknown): { bytes: number; nodes: number } {
  let nodes = 0;
  const stack = [schema];
  while (stack.length > 0) {
    const v = stack.pop();
    nodes++;
    if (v !== null && typeof v === "object") for (const child of Object.values(v)) stack.push(child);
  }
  // Stryker disable next-line StringLiteral: unreachable; a record always stringifies
  return { bytes: Buffer.byteLength(JSON.stringify(schema) ?? ""), nodes };
}

const ajvOptions: Options = {
  code: { regExp: re2RegExp as unknown as NonNullable<Options["code"]>["regExp"] },
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
  // Stryker disable next-line StringLiteral: equivalent; any text without a draft's date picks draft-07
  let dialect = "";
  if (typeof schema.$schema === "string") dialect = schema.$schema;
  if (dialect.includes("2020-12")) return new Ajv2020(ajvOptions);
  if (dialect.includes("2019-09")) return new Ajv2019(ajvOptions);
  return new Ajv(ajvOptions);
}

// Params are parsed (which compiles, to validate the schema) and then run (which needs the validator):
// a small cache keyed by the schema's text compiles each schema once.
const compiled = new Map<string, ReturnType<Ajv["compile"]>>();
const CACHE_MAX = 32;

/** Compiles or throws with ajv's reason. */
function compile(schema: Record<string, unknown>) {
  const key = JSON.stringify(schema);
  const hit = compiled.get(key);
  // Stryker disable next-line ConditionalExpression: equivalent; without the cache hit the schema compiles again, to the same validator
  if (hit) return hit;
  const validate = ajvFor(schema).compile(schema);
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent; the bound changes only how much the cache holds, never what a validator answers
  if (compiled.size >= CACHE_MAX) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, validate);
  return validate;
}

/**
 * A JSON Schema object that compiles. Compiling during param validation lets the API reject a broken
 * schema up front; the check compiles again at run time and fails closed should that ever differ.
 */
export const jsonSchemaParam = z
  .record(z.string(), z.unknown(), { error: (iss) => (iss.input === undefined ? "required" : "must be a JSON Schema object") })
  .superRefine((schema, ctx) => {
    // Stryker disable next-line StringLiteral: equivalent; an issue's code is never shown, its path and message are
    const refuse = (message: string) => ctx.addIssue({ code: "custom", message });
    const size = schemaSize(schema);
    if (size.bytes > MAX_SCHEMA_BYTES || size.nodes > MAX_SCHEMA_NODES) {
      refuse(`the JSON Schema is too large (${size.bytes} bytes, ${size.nodes} values; at most ${MAX_SCHEMA_BYTES} bytes and ${MAX_SCHEMA_NODES} values): compare large expected data with json_matches or csv_matches`);
      return;
    }
    try {
      compile(schema);
    } catch (e) {
      refuse(`the JSON Schema does not compile: ${(e as Error).message}`);
    }
  });

/** One error; with `material`, the schema's own values (enum, const) that a hidden check must not show. */
function describeError(e: ErrorObject, material: boolean): string {
  const at = e.instancePath === "" ? "(root)" : e.instancePath;
  let detail = "";
  if (e.keyword === "additionalProperties") detail = ` (${JSON.stringify(e.params.additionalProperty)})`;
  else if (material && e.keyword === "enum") detail = ` (${preview(e.params.allowedValues)})`;
  else if (material && e.keyword === "const") detail = ` (${preview(e.params.allowedValue)})`;
  const message = material || !["const", "enum"].includes(e.keyword) ? (e.message ?? e.keyword) : `is not the ${e.keyword === "const" ? "expected value" : "one of the allowed values"}`;
  return `${at} ${message}${detail}`;
}

export const jsonSchema = defineCheck({
  description:
    'The JSON artifact validates against a JSON Schema (draft-07, or 2019-09/2020-12 by $schema; formats ignored, unknown keywords rejected). Params: artifact (default "result.json"), schema (required).',
  params: z.strictObject({
    artifact: artifactParam,
    schema: jsonSchemaParam,
  }),
  example: { artifact: "result.json", schema: { type: "object", required: ["total"], properties: { total: { type: "number", minimum: 0 } } } },
  publicParams: ["artifact"],
  run({ artifact, schema }, ctx) {
    let validate;
    try {
      validate = compile(schema);
    } catch (e) {
      return { passed: false, message: `the JSON Schema does not compile: ${(e as Error).message}`, publicMessage: "the JSON Schema does not compile" };
    }
    const doc = loadJson(ctx, artifact, { exact: false });
    if (!doc.ok) return { passed: false, message: doc.message, publicMessage: doc.message };
    if (validate(doc.value)) return { passed: true, message: `artifact "${artifact}" matches the JSON Schema`, publicMessage: `artifact "${artifact}" matches the JSON Schema` };
    // Stryker disable next-line ArrayDeclaration: unreachable; ajv sets errors whenever validation fails
    const errors = validate.errors ?? [];
    const more = errors.length > MAX_ERRORS_SHOWN ? `; and ${errors.length - MAX_ERRORS_SHOWN} more` : "";
    const head = `artifact "${artifact}" does not match the JSON Schema (${errors.length} error${errors.length === 1 ? "" : "s"})`;
    const shown = (material: boolean) => errors.slice(0, MAX_ERRORS_SHOWN).map((e) => describeError(e, material)).join("; ");
    return { passed: false, message: `${head}: ${shown(true)}${more}`, publicMessage: `${head}: ${shown(false)}${more}` };
  },
});
