import { inspectorOutput, type CheckOutcome, type CheckSpec, type Inspection, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { describeChecks, describeOutcomes } from "./checks";
import { describeRun, type RunSummary } from "./run-summary";

export const INSPECTOR_INSTRUCTIONS = `You are the inspector of LoopSmith. Your one job: judge whether the run below achieved the
objective, and if not, diagnose why from the evidence.
The deterministic check results are ground truth. You may not mark the run verified while any of them
failed; you may refuse to verify a run whose checks all passed if it misses the objective or a judgement
check. List every failing check id in failing_checks, explain the root cause in diagnosis (quote the
real error), and give one concrete fix in fix_hint.
Leave infeasible null unless the goal cannot be done as asked: the checks or tests contradict the objective
or each other, or they demand something no program can deliver. Then set infeasible.reason with the
evidence (which check, which part of the objective). This is an honest give-up: it never verifies the goal,
it ends it or asks the client. Prefer it to any answer that would only satisfy the checks.`;

export interface InspectorInput {
  plan: PlanOutput;
  /** The client's definition of done in words, if it gave one. */
  success: string | null;
  checks: CheckSpec[];
  outcomes: CheckOutcome[];
  run: RunSummary;
}

export function inspectorRequest(input: InspectorInput): ModelRequest<Inspection> {
  const judgement = input.checks.filter((c) => c.kind === "judgement");
  const prompt = [
    `Objective: ${input.plan.objective}`,
    `Output contract: ${input.plan.output_contract}`,
    input.success ? `Definition of done, in the client's words: ${input.success}` : null,
    `Deterministic check results:\n${describeOutcomes(input.outcomes)}`,
    judgement.length ? `Judgement checks for you to decide:\n${describeChecks(judgement)}` : null,
    `The run:\n${describeRun(input.run)}`,
  ]
    .filter(Boolean)
    .join("\n\n");
  return {
    turn: "inspect",
    index: input.run.attempt - 1,
    system: INSPECTOR_INSTRUCTIONS,
    prompt,
    schema: inspectorOutput,
    schemaName: "Inspection",
  };
}

/**
 * The inspector may veto but never overrule: a "verified" over a failed deterministic check becomes
 * "not verified", and every failed check is listed. The machine applies the same rule on its own; this
 * keeps the stored inspection honest too.
 */
export function applyVeto(raw: Inspection, outcomes: CheckOutcome[]): { inspection: Inspection; overruled: boolean } {
  const failed = outcomes.filter((o) => !o.passed).map((o) => o.id);
  if (failed.length === 0) return { inspection: raw, overruled: false };
  const failing = [...new Set([...raw.failing_checks, ...failed])];
  return {
    inspection: { ...raw, verified: false, failing_checks: failing },
    overruled: raw.verified,
  };
}
