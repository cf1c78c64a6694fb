import type { z } from "zod";
import type { CheckDef, CheckResult, ParamsSchema, VerifyContext } from "./types";

/**
 * Typed constructor for a check: `run` sees the parsed params with their real type. The cast is sound
 * because the runner only calls `run` with the output of this same schema.
 */
export function defineCheck<S extends ParamsSchema>(def: {
  description: string;
  params: S;
  run(params: z.output<S>, ctx: VerifyContext): CheckResult;
}): CheckDef {
  return {
    description: def.description,
    params: def.params,
    run: (params, ctx) => def.run(params as z.output<S>, ctx),
  };
}

/**
 * An alias runs another check's logic under its own id and its own param schema (usually the same params
 * with defaults that fit a common goal). The alias's effective params go through the target's schema
 * too, so the target's run never sees params its own schema would not have produced.
 */
export function defineAlias(aliasOf: string, target: CheckDef, description: string, params: ParamsSchema): CheckDef {
  return { description, params, aliasOf, run: (p, ctx) => target.run(target.params.parse(p), ctx) };
}
