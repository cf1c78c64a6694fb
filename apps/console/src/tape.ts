// Reading the tape for people: who moved the goal along each row. Pure, so it is tested on its own
// (test/tape.test.ts).

export interface Row {
  from: string | null;
  to: string;
  detail?: unknown;
}

const REASONS: Record<string, string> = {
  budget_attempts: "the attempts budget",
  budget_tokens: "the token budget",
  budget_cost: "the cost budget",
  budget_wall: "the wall-time budget",
  model_failure: "the model provider (model_failure)",
  stuck: "the progress guard (stuck)",
  evaluator_rejected: "the checks' self-test (evaluator_rejected)",
  approval_timeout: "the approval timeout",
  declared_infeasible: "a model's give-up (declared_infeasible)",
  rejected: "the client (rejected)",
};

/** Who moved the goal along this row of the tape, in words. */
export function decidedBy(t: Row): string {
  const d = (t.detail ?? {}) as Record<string, unknown>;
  const by = typeof d.by === "string" ? d.by : undefined;
  const reason = typeof d.reason === "string" ? d.reason : undefined;
  if (t.from === null) return "the client (submitted)";
  if (t.to === "cancelled") return by === "client" || by === undefined ? "the client (cancelled)" : `${by} (cancelled)`;
  if (t.to === "errored") return "the infrastructure (its retries ran out)";
  if (t.from === "errored") return "an operator (retried)";
  if (t.from === "awaiting_approval") {
    if (by) return t.to === "failed" ? `the ${by} (rejected)` : `the ${by} (approved)`;
    return reason ? (REASONS[reason] ?? reason) : "the approval gate";
  }
  if (t.to === "awaiting_approval") return d.infeasible ? "a model's give-up (asks the client)" : "the spending threshold (asks the client)";
  if (reason && reason in REASONS && t.to === "failed") return REASONS[reason]!;
  if (t.from === "inspect") {
    const checks = Array.isArray(d.checks) ? (d.checks as { passed: boolean }[]) : [];
    const failed = checks.filter((c) => !c.passed).length;
    if (t.to === "verified") return `the checks (all ${checks.length} passed)`;
    return `the checks (${failed} of ${checks.length} failed)`;
  }
  const pinned = typeof d.pinned_from === "string";
  if (t.from === "plan") return pinned ? "the schedule's pin (its plan, no planner)" : "the planner";
  if (t.from === "execute") return "the sandbox (the program ran)";
  if (t.to === "execute") return pinned ? "the schedule's pin (its program, no model)" : "the model (wrote a program)";
  return reason ?? "the machine";
}
