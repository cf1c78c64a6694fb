import type { CheckOutcome, CheckSpec } from "@loopsmith/schemas";
import type { z } from "zod";
import { checkRegistry, knownCheckIds } from "./registry";
import type { VerifyContext } from "./types";

type IssuePath = (string | number)[];

function issuePath(issue: z.core.$ZodIssue): IssuePath {
  return issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
}

function unknownIdMessage(id: string): string {
  return `unknown check id ${JSON.stringify(id)}; known deterministic checks: ${knownCheckIds().join(", ")}`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

/**
 * Runs the deterministic checks in order; judgement checks belong to the inspector model and are left out.
 * Fails closed: an unknown id, invalid params or a check that throws is a failed outcome, never a pass.
 */
export function runChecks(checks: CheckSpec[], ctx: VerifyContext): CheckOutcome[] {
  return checks.filter((spec) => spec.kind !== "judgement").map((spec) => runOne(spec, ctx));
}

function runOne(spec: CheckSpec, ctx: VerifyContext): CheckOutcome {
  const def = checkRegistry.get(spec.id);
  if (def === undefined) return { id: spec.id, params: spec.params, passed: false, message: unknownIdMessage(spec.id) };
  // Shown in the outcome: the raw params until they parse, the effective ones (with defaults) after.
  let params = spec.params;
  try {
    const parsed = def.params.safeParse(spec.params);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${issuePath(i).join(".") || "(params)"}: ${i.message}`);
      return { id: spec.id, params, passed: false, message: `invalid params: ${issues.join("; ")}` };
    }
    params = parsed.data;
    const result = def.run(params, ctx);
    // Anything but a literal `true` is a failure, whatever else the result claims.
    return { id: spec.id, params, passed: result.passed === true, message: String(result.message) };
  } catch (e) {
    return { id: spec.id, params, passed: false, message: `check threw: ${errorText(e)}` };
  }
}

export type CheckSpecValidation = { ok: true } | { ok: false; issues: { path: IssuePath; message: string }[] };

/** Lets the API reject a client's check before a goal is queued, with paths relative to the check spec. */
export function validateCheckSpec(spec: CheckSpec): CheckSpecValidation {
  if (spec.kind === "judgement") return { ok: true };
  const def = checkRegistry.get(spec.id);
  if (def === undefined) return { ok: false, issues: [{ path: ["id"], message: unknownIdMessage(spec.id) }] };
  const parsed = def.params.safeParse(spec.params);
  if (parsed.success) return { ok: true };
  return { ok: false, issues: parsed.error.issues.map((i) => ({ path: ["params", ...issuePath(i)], message: i.message })) };
}
