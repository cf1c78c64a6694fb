import { z } from "zod";
import { artifactParam, loadJson } from "../artifacts";
import { defineCheck } from "../define";
import { describeValue, preview } from "../format";
import { jsonPointer, resolvePointer } from "../json-path";
import { toleranceParams } from "../lib/numbers";
import { compilePattern } from "../lib/regex";
import { compareJson, kindOf } from "../lib/values";
import type { CheckResult } from "../types";

const OPS = ["eq", "ne", "lt", "le", "gt", "ge", "between", "in", "len", "exists", "type", "regex"] as const;
const TYPES = ["null", "boolean", "number", "integer", "string", "array", "object"] as const;
const finite = z.number().refine(Number.isFinite, "must be a finite number");
const count = z.int().min(0);

// One schema per operator, so that `value` is checked against what the operator needs when the goal is
// submitted, not when the check first runs.
const byOp = {
  eq: z.unknown(),
  ne: z.unknown(),
  lt: finite,
  le: finite,
  gt: finite,
  ge: finite,
  between: z.tuple([finite, finite]).refine(([lo, hi]) => lo <= hi, "[min, max] with min <= max"),
  in: z.array(z.unknown()).min(1),
  len: z.union([count, z.tuple([count, count]).refine(([lo, hi]) => lo <= hi, "[min, max] with min <= max")]),
  exists: z.boolean().default(true),
  type: z.enum(TYPES),
  regex: z.string().superRefine((s, ctx) => {
    const c = compilePattern(s);
    // Stryker disable next-line StringLiteral: equivalent, an issue's code is never shown, only its path and message
    if (!c.ok) ctx.addIssue({ code: "custom", message: c.message });
  }),
} satisfies Record<(typeof OPS)[number], z.ZodType>;

const params = z
  .strictObject({
    artifact: artifactParam,
    pointer: jsonPointer,
    op: z.enum(OPS).describe("eq, ne (deep, numbers within tolerance), lt, le, gt, ge, between [min, max] (numbers), in (one of a list), len (array/string/object length: n or [min, max]), exists (true/false), type (null, boolean, number, integer, string, array, object), regex (RE2, on a string; anchor with ^...$)"),
    value: z.unknown().optional().describe("The operand; see op. Not needed for exists."),
    ...toleranceParams,
  })
  .superRefine((p, ctx) => {
    if (p.value === undefined && p.op !== "exists") {
      // Stryker disable next-line StringLiteral: equivalent, an issue's code is never shown, only its path and message
      ctx.addIssue({ code: "custom", path: ["value"], message: `required for op "${p.op}"` });
      return;
    }
    const r = byOp[p.op].safeParse(p.value);
    // Stryker disable next-line StringLiteral: equivalent, an issue's code is never shown, only its path and message
    if (!r.success) for (const i of r.error.issues) ctx.addIssue({ code: "custom", path: ["value", ...i.path.map(String)], message: i.message });
  })
  .transform((p) => ({ ...p, value: byOp[p.op].parse(p.value) }));

function num(v: unknown): number | bigint | null {
  if (Number.isFinite(v)) return v as number;
  if (typeof v === "bigint") return v;
  return null;
}

/**
 * The sign of a - b, exactly: an integer beyond 2^53 is never rounded to a double to be compared
 * (JavaScript compares a bigint with a number by their exact values).
 */
export function compareExact(a: number | bigint, b: number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export const jsonAssert = defineCheck({
  description:
    "One assertion about the value at a JSON Pointer of a JSON artifact: eq/ne (deep, numbers within atol/rtol), lt/le/gt/ge/between (numbers), in (one of), len, exists, type, regex (RE2). Fails closed on a missing value, a wrong type, NaN.",
  params,
  example: { artifact: "report.json", pointer: "/summary/rows_dropped", op: "eq", value: 0 },
  publicParams: ["artifact", "pointer", "op", "atol", "rtol"],
  run(p, ctx): CheckResult {
    const doc = loadJson(ctx, p.artifact);
    if (!doc.ok) return { passed: false, message: doc.message };
    const at = `${p.pointer || "(the whole document)"} of "${p.artifact}"`;
    const got = resolvePointer(doc.value, p.pointer);
    if (p.op === "exists") {
      const want = p.value as boolean;
      if (got.ok === want) return { passed: true, message: `${at} ${want ? "exists" : "does not exist"}` };
      if (!got.ok) return { passed: false, message: `${at} does not exist: ${got.message}`, publicMessage: `${at}: exists is false` };
      return { passed: false, message: `${at} exists but should not`, publicMessage: `${at}: exists is true` };
    }
    if (!got.ok) return { passed: false, message: `in "${p.artifact}", ${got.message}` };
    const actual = got.value;
    const tol = { atol: p.atol, rtol: p.rtol };
    const pass = (what: string) => ({ passed: true, message: `${at} ${what}` });
    const failed = (what: string, publicWhat = `fails ${p.op}`): CheckResult => ({
      passed: false,
      message: `${at} is ${describeValue(actual)}; ${what}`,
      publicMessage: `${at} is ${describeValue(actual)}; it ${publicWhat}`,
      findings: [{ where: p.pointer || "(the whole document)", actual: preview(actual), expected: what }],
    });
    const value = p.value as unknown;
    switch (p.op) {
      case "eq":
      case "ne": {
        const equal = compareJson(actual, value, { tol, ignoreOrder: false }, 0).equal;
        if (equal === (p.op === "eq")) return pass(p.op === "eq" ? `equals ${preview(value)}` : `differs from ${preview(value)}`);
        return failed(p.op === "eq" ? `expected ${preview(value)}` : `expected anything but ${preview(value)}`);
      }
      case "lt":
      case "le":
      case "gt":
      case "ge": {
        const n = num(actual);
        if (n === null) return failed(`expected a finite number ${p.op} ${preview(value)}`, "is not a finite number");
        const v = value as number;
        const c = compareExact(n, v);
        const ok = p.op === "lt" ? c < 0 : p.op === "le" ? c <= 0 : p.op === "gt" ? c > 0 : c >= 0;
        return ok ? pass(`${p.op} ${preview(v)}`) : failed(`expected ${p.op} ${preview(v)}`);
      }
      case "between": {
        const n = num(actual);
        const [lo, hi] = value as [number, number];
        if (n === null) return failed(`expected a finite number in [${lo}, ${hi}]`, "is not a finite number");
        return compareExact(n, lo) >= 0 && compareExact(n, hi) <= 0 ? pass(`is in [${lo}, ${hi}]`) : failed(`expected a number in [${lo}, ${hi}]`);
      }
      case "in": {
        const options = value as unknown[];
        const hit = options.some((o) => compareJson(actual, o, { tol, ignoreOrder: false }, 0).equal);
        return hit ? pass(`is one of ${preview(options)}`) : failed(`expected one of ${preview(options)}`);
      }
      case "len": {
        const length = Array.isArray(actual) ? actual.length : typeof actual === "string" ? [...actual].length : kindOf(actual) === "object" ? Object.keys(actual as object).length : null;
        if (length === null) return failed(`expected an array, string or object with length ${preview(value)}`, "has no length");
        const [lo, hi] = typeof value === "number" ? [value, value] : (value as [number, number]);
        return length >= lo && length <= hi ? pass(`has length ${length}`) : failed(`has length ${length}, expected ${lo === hi ? lo : `[${lo}, ${hi}]`}`, `has length ${length}, which fails the len assertion`);
      }
      case "type": {
        const kind = kindOf(actual);
        const isInt = Number.isInteger(actual) || typeof actual === "bigint";
        const ok = value === kind || (value === "integer" && isInt);
        return ok ? pass(`is of type ${String(value)}`) : failed(`expected type ${String(value)}`);
      }
      case "regex": {
        if (typeof actual !== "string") return failed(`expected a string matching ${preview(value)}`, "is not a string");
        const c = compilePattern(value as string);
        // Stryker disable next-line all: unreachable, the params refuse a pattern that does not compile
        if (!c.ok) return { passed: false, message: c.message };
        return c.pattern.test(actual) ? pass(`matches ${preview(value)}`) : failed(`expected a match of ${preview(value)}`);
      }
    }
  },
});
