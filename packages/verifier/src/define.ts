import type { z } from "zod";
import type { CheckDef, CheckResult, CheckRunRequest, ParamsSchema, SandboxPlanContext, VerifyContext } from "./types";

/**
 * Typed constructor for a check: `run` sees the parsed params with their real type. The casts are sound
 * because the runner only calls these functions with the output of this same schema.
 */
export function defineCheck<S extends ParamsSchema>(def: {
  description: string;
  params: S;
  example: z.input<S>;
  publicParams?: readonly (keyof z.output<S> & string)[];
  publicMessages?: boolean;
  checkerFiles?(params: z.output<S>): string[];
  sandbox?(params: z.output<S>, ctx: SandboxPlanContext): CheckRunRequest[];
  run(params: z.output<S>, ctx: VerifyContext): CheckResult;
}): CheckDef {
  const { checkerFiles, sandbox } = def;
  return {
    description: def.description,
    params: def.params,
    example: def.example as Record<string, unknown>,
    publicParams: def.publicParams ?? [],
    ...(def.publicMessages ? { publicMessages: true } : {}),
    ...(checkerFiles ? { checkerFiles: (p: Record<string, unknown>) => checkerFiles(p as z.output<S>) } : {}),
    ...(sandbox ? { sandbox: (p: Record<string, unknown>, ctx: SandboxPlanContext) => sandbox(p as z.output<S>, ctx) } : {}),
    run: (params, ctx) => def.run(params as z.output<S>, ctx),
  };
}

/**
 * An alias runs another check's logic under its own id and its own param schema (usually the same params
 * with defaults that fit a common goal). The alias's effective params go through the target's schema
 * too, so the target's run never sees params its own schema would not have produced.
 */
export function defineAlias(
  aliasOf: string,
  target: CheckDef,
  description: string,
  params: ParamsSchema,
  example: Record<string, unknown>,
): CheckDef {
  return {
    description,
    params,
    example,
    aliasOf,
    publicParams: target.publicParams,
    ...(target.publicMessages ? { publicMessages: true } : {}),
    run: (p, ctx) => target.run(target.params.parse(p), ctx),
  };
}
