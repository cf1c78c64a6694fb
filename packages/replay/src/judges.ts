// Judge agreement (issue 15): where the inspector model and the deterministic checks disagree. Every
// INSPECT row on the tape holds both verdicts: whether every check passed, and what the inspector said
// (its verified, or `inspector_overruled` when the veto turned its verified into a no). Pure: it reads
// tapes and model_calls rows handed to it.
import type { JudgeCounts, JudgeReport } from "@loopsmith/schemas";

export interface JudgeCall {
  state: string;
  attempt: number;
  provider: string;
  model: string;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
}

export interface JudgeGoalInput {
  id: string;
  state: string;
  transitions: { from: string | null; to: string; detail: unknown }[];
  calls: JudgeCall[];
}

export interface InspectionVerdict {
  attempt: number;
  inspector_verified: boolean;
  checks_passed: boolean;
  failed_checks: string[];
}

export type JudgeGoal = JudgeReport["goals"][number];

type D = Record<string, unknown>;

/** The INSPECT rows where the inspector answered (a model failure at INSPECT has no verdict to compare). */
export function inspectionVerdicts(transitions: JudgeGoalInput["transitions"]): InspectionVerdict[] {
  const out: InspectionVerdict[] = [];
  for (const t of transitions) {
    if (t.from !== "inspect") continue;
    const d = (t.detail ?? {}) as D;
    const inspection = d.inspection as D | undefined;
    if (!inspection || typeof inspection.verified !== "boolean" || typeof d.checks_passed !== "boolean") continue;
    const checks = Array.isArray(d.checks) ? (d.checks as D[]) : [];
    out.push({
      attempt: typeof d.attempt === "number" ? d.attempt : out.length + 1,
      // The veto rewrites the stored inspection's verified to false; overruled says the model had said true.
      inspector_verified: inspection.verified || d.inspector_overruled === true,
      checks_passed: d.checks_passed,
      failed_checks: checks.filter((c) => c.passed !== true).map((c) => String(c.id)),
    });
  }
  return out;
}

const tokens = (c: JudgeCall) => c.tokensIn + c.tokensOut;

/**
 * One goal's disagreements. A false reject's cost is counted from the goal's first one: had the inspector
 * agreed with the checks there, the goal would have ended verified, so every later attempt and every model
 * turn after it (the refine at that attempt on) was spent because of it.
 */
export function judgeGoal(g: JudgeGoalInput): JudgeGoal {
  const verdicts = inspectionVerdicts(g.transitions);
  const falseAccepts = verdicts.filter((v) => v.inspector_verified && !v.checks_passed);
  const falseRejects = verdicts.filter((v) => !v.inspector_verified && v.checks_passed);
  const first = falseRejects[0]?.attempt;
  const after =
    first === undefined
      ? []
      : g.calls.filter((c) => (c.state === "refine" && c.attempt >= first) || (c.state === "inspect" && c.attempt > first));
  const executions = new Set(
    g.transitions
      .filter((t) => t.from === "execute")
      .map((t) => (t.detail as D | null)?.attempt)
      .filter((a): a is number => typeof a === "number"),
  );
  const judge = g.calls.find((c) => c.state === "inspect") ?? g.calls[0];
  return {
    goal_id: g.id,
    provider: judge?.provider ?? "unknown",
    model: judge?.model ?? "unknown",
    state: g.state,
    inspections: verdicts.length,
    agree: verdicts.length - falseAccepts.length - falseRejects.length,
    false_accepts: falseAccepts.length,
    false_rejects: falseRejects.length,
    false_reject_attempts: first === undefined ? 0 : [...executions].filter((a) => a > first).length,
    false_reject_tokens: after.reduce((s, c) => s + tokens(c), 0),
    false_reject_cost_usd: round(after.reduce((s, c) => s + c.costUsd, 0)),
    vetoed_by: [...new Set(falseAccepts.flatMap((v) => v.failed_checks))].sort(),
  };
}

const round = (usd: number) => Math.round(usd * 1e6) / 1e6;

function empty(): JudgeCounts {
  return { goals: 0, inspections: 0, agree: 0, false_accepts: 0, false_rejects: 0, false_reject_attempts: 0, false_reject_tokens: 0, false_reject_cost_usd: 0 };
}

function add(into: JudgeCounts, g: JudgeGoal): void {
  into.goals += 1;
  into.inspections += g.inspections;
  into.agree += g.agree;
  into.false_accepts += g.false_accepts;
  into.false_rejects += g.false_rejects;
  into.false_reject_attempts += g.false_reject_attempts;
  into.false_reject_tokens += g.false_reject_tokens;
  into.false_reject_cost_usd = round(into.false_reject_cost_usd + g.false_reject_cost_usd);
}

export const MAX_REPORTED_GOALS = 100;

/** The report over a tenant's goals (pass them newest first): totals, per model, per vetoing check, per goal. */
export function judgeReport(goals: JudgeGoalInput[], window: { since: Date; until: Date }): JudgeReport {
  const tenant = empty();
  const byModel = new Map<string, JudgeCounts & { provider: string; model: string }>();
  const byCheck = new Map<string, number>();
  const disagreeing: JudgeGoal[] = [];
  for (const input of goals) {
    const g = judgeGoal(input);
    add(tenant, g);
    const key = `${g.provider}\u0000${g.model}`;
    const m = byModel.get(key) ?? { provider: g.provider, model: g.model, ...empty() };
    add(m, g);
    byModel.set(key, m);
    for (const v of inspectionVerdicts(input.transitions)) {
      if (!v.inspector_verified || v.checks_passed) continue;
      for (const id of new Set(v.failed_checks)) byCheck.set(id, (byCheck.get(id) ?? 0) + 1);
    }
    if ((g.false_accepts > 0 || g.false_rejects > 0) && disagreeing.length < MAX_REPORTED_GOALS) disagreeing.push(g);
  }
  return {
    since: window.since.toISOString(),
    until: window.until.toISOString(),
    tenant,
    by_model: [...byModel.values()].sort((a, b) => b.goals - a.goals || a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model)),
    by_check: [...byCheck.entries()].map(([id, n]) => ({ id, false_accepts: n })).sort((a, b) => b.false_accepts - a.false_accepts || a.id.localeCompare(b.id)),
    goals: disagreeing,
  };
}
