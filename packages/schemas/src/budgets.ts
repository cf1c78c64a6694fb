import { z } from "zod";
import { DEFAULT_EXECUTION_TIMEOUT_SECONDS, type Budgets, type GoalBudget } from "./goals";

/** Server defaults and maximums for per-goal budgets (API config). */
export const budgetConfigSchema = z.object({
  DEFAULT_MAX_TOKENS: z.coerce.number().int().min(1).default(500_000),
  LIMIT_MAX_TOKENS: z.coerce.number().int().min(1).default(5_000_000),
  DEFAULT_MAX_COST_USD: z.coerce.number().positive().default(5),
  LIMIT_MAX_COST_USD: z.coerce.number().positive().default(500),
  DEFAULT_MAX_WALL_SECONDS: z.coerce.number().int().min(1).default(3600),
  LIMIT_MAX_WALL_SECONDS: z.coerce.number().int().min(1).default(24 * 3600),
});
export type BudgetConfig = z.output<typeof budgetConfigSchema>;

/** Caps above this server's maximums, each with its field path (a 400, never a silent clamp). */
export function budgetProblems(b: GoalBudget, config: BudgetConfig): { path: string; message: string }[] {
  const problems: { path: string; message: string }[] = [];
  const over = (field: keyof GoalBudget, limit: number, envName: string) => {
    const v = b[field];
    // An omitted cap is never over the maximum (every maximum is at least 1).
    if ((v ?? 0) > limit) problems.push({ path: `body.budget.${field}`, message: `${v} exceeds this server's maximum ${limit} (${envName})` });
  };
  over("max_tokens", config.LIMIT_MAX_TOKENS, "LIMIT_MAX_TOKENS");
  over("max_cost_usd", config.LIMIT_MAX_COST_USD, "LIMIT_MAX_COST_USD");
  over("max_wall_seconds", config.LIMIT_MAX_WALL_SECONDS, "LIMIT_MAX_WALL_SECONDS");
  return problems;
}

/**
 * The budgets a goal runs under: what the client asked for, server defaults for the rest. A request above
 * a server maximum is an error with its field path, not a silent clamp.
 */
export function resolveBudgets(
  req: { max_attempts: number; execution_timeout_seconds?: number; budget?: GoalBudget; approval_threshold_usd?: number },
  config: BudgetConfig,
  tenantApprovalThresholdUsd: number | null,
): { budgets: Budgets; problems: { path: string; message: string }[] } {
  const b = req.budget ?? {};
  const problems = budgetProblems(b, config);
  return {
    problems,
    budgets: {
      max_attempts: req.max_attempts,
      execution_timeout_seconds: req.execution_timeout_seconds ?? DEFAULT_EXECUTION_TIMEOUT_SECONDS,
      max_tokens: b.max_tokens ?? config.DEFAULT_MAX_TOKENS,
      max_cost_usd: b.max_cost_usd ?? config.DEFAULT_MAX_COST_USD,
      max_wall_seconds: b.max_wall_seconds ?? config.DEFAULT_MAX_WALL_SECONDS,
      approval_threshold_usd: req.approval_threshold_usd ?? tenantApprovalThresholdUsd,
    },
  };
}

/** Reads a stored goal's budgets; goals stored before budgets existed get the built-in defaults. */
export function storedBudgets(raw: unknown, maxAttempts: number): Budgets {
  const d = budgetConfigSchema.parse({});
  const r = (raw ?? {}) as Partial<Budgets>;
  return {
    max_attempts: r.max_attempts ?? maxAttempts,
    execution_timeout_seconds: r.execution_timeout_seconds ?? DEFAULT_EXECUTION_TIMEOUT_SECONDS,
    max_tokens: r.max_tokens ?? d.DEFAULT_MAX_TOKENS,
    max_cost_usd: r.max_cost_usd ?? d.DEFAULT_MAX_COST_USD,
    max_wall_seconds: r.max_wall_seconds ?? d.DEFAULT_MAX_WALL_SECONDS,
    approval_threshold_usd: r.approval_threshold_usd ?? null,
  };
}
