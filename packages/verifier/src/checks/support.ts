import { z } from "zod";
import { loadJson } from "../artifacts";
import { describeValue } from "../format";
import { isPlainObject, resolvePath, showPath } from "../json-path";
import type { VerifyContext } from "../types";

/**
 * The checks that run code (cases, test_suite, command): run the check's runs this many times on the same
 * program. It passes only if every repetition passes; repetitions that disagree make it flaky (a failure).
 */
export const repeatParam = z
  .int()
  .min(1)
  .max(10)
  .default(1)
  .describe("Runs the check this many times on the same program, each time in fresh containers: it passes only if every run passes, and runs that disagree are reported as flaky (still a failure).");

/** The checks that run code: one more run of the check when it fails, to tell a flaky check from a failing one. */
export const rerunFailedParam = z
  .boolean()
  .default(false)
  .describe("When the check fails (and showed no tampering), runs it once more on the same program before the verdict: if that run passes the check is reported flaky, still a failure; if it fails too, it failed twice.");

export type Got<T> = { ok: true; value: T } | { ok: false; message: string };

/** The value at `path` in the JSON artifact `artifact`. */
export function jsonAt(ctx: VerifyContext, artifact: string, path: string): Got<unknown> {
  const doc = loadJson(ctx, artifact);
  if (!doc.ok) return doc;
  const resolved = resolvePath(doc.value, path);
  if (!resolved.ok) return { ok: false, message: `in "${artifact}", ${resolved.message}` };
  return resolved;
}

export function objectAt(ctx: VerifyContext, artifact: string, path: string): Got<Record<string, unknown>> {
  const got = jsonAt(ctx, artifact, path);
  if (!got.ok) return got;
  if (!isPlainObject(got.value)) {
    return { ok: false, message: `in "${artifact}", the value at ${showPath(path)} is ${describeValue(got.value)}, expected an object` };
  }
  return { ok: true, value: got.value };
}

/**
 * A finite JSON number, or why the value is not one (the message completes "X is ..."). Numeric strings
 * do not count: a consumer reading the JSON would get text, not a number.
 */
export function asNumber(value: unknown): Got<number> {
  // Stryker disable next-line ConditionalExpression: equivalent; Number.isFinite is false for every non-number (it does not coerce)
  if (typeof value === "number" && Number.isFinite(value)) return { ok: true, value };
  if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value))) {
    return { ok: false, message: `a string (${JSON.stringify(value)}), not a number: write it as a JSON number, without quotes` };
  }
  return { ok: false, message: `${describeValue(value)}, expected a finite number` };
}

/** The object's entries when every value is a finite number; otherwise which ones are not. */
export function numericEntries(obj: Record<string, unknown>, path: string): Got<[string, number][]> {
  const good: [string, number][] = [];
  const bad: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    const n = asNumber(v);
    if (n.ok) good.push([k, n.value]);
    else bad.push(`${JSON.stringify(k)} is ${n.message}`);
  }
  if (bad.length === 0) return { ok: true, value: good };
  const more = bad.length > 5 ? `; and ${bad.length - 5} more` : "";
  return { ok: false, message: `every value of the object at ${showPath(path)} must be a number: ${bad.slice(0, 5).join("; ")}${more}` };
}
