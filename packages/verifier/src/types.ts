import type { z } from "zod";

/**
 * What the verifier sees of one execution. Structural on purpose: the sandbox's RunResult satisfies it,
 * and the verifier stays free of the sandbox package and its Docker dependencies.
 */
export interface VerifyContext {
  exitCode: number;
  timedOut: boolean;
  oomKilled: boolean;
  stderr: string;
  /** Regular files the program left in its output directory; names are relative to it, e.g. "result.json". */
  artifacts: { name: string; content: Buffer }[];
  /** Files that were not returned and collection failures, usually "<name>: <why>". */
  artifactErrors: string[];
}

export interface CheckResult {
  passed: boolean;
  message: string;
}

/** Params are always an object; the schema supplies defaults and rejects unknown keys. */
export type ParamsSchema = z.ZodType<Record<string, unknown>, Record<string, unknown>>;

/** One entry of the check library, with its params type erased so that entries can share one map. */
export interface CheckDef {
  description: string;
  params: ParamsSchema;
  /** Set on aliases: the check whose logic this entry runs with its own defaults. */
  aliasOf?: string;
  /** Only ever called with the output of `params`; may throw (the runner turns a throw into a failure). */
  run(params: Record<string, unknown>, ctx: VerifyContext): CheckResult;
}
