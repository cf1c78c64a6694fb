// A runner reads its goal at the start of every step, with its tenant's count of open goals (the fairness
// cap's fast path). One statement through node-postgres: Prisma's findUnique with an include sent two, one
// after the other, at about a millisecond of client CPU each. The row is the Goal Prisma reads (same field
// names and types; packages/db/test/step-goal.test.ts holds the two readings to each other).
import { sendStatement } from "./client";
import type { Goal, PrismaClient } from "./generated/client";

const COLUMNS: Record<keyof Goal, string> = {
  id: "id",
  tenantId: "tenant_id",
  idempotencyKey: "idempotency_key",
  requestHash: "request_hash",
  webhook: "webhook",
  queuePrefix: "queue_prefix",
  objective: "objective",
  success: "success",
  inputs: "inputs",
  checks: "checks",
  deliverable: "deliverable",
  feedback: "feedback",
  candidates: "candidates",
  onInfeasible: "on_infeasible",
  selfTest: "self_test",
  maxAttempts: "max_attempts",
  budgets: "budgets",
  model: "model",
  state: "state",
  version: "version",
  attempts: "attempts",
  verified: "verified",
  failureReason: "failure_reason",
  report: "report",
  failureReport: "failure_report",
  createdAt: "created_at",
  updatedAt: "updated_at",
  finishedAt: "finished_at",
  loopsmithVersion: "loopsmith_version",
  receipt: "receipt",
  language: "language",
  scheduleId: "schedule_id",
  pinned: "pinned",
};
const SQL = `SELECT ${Object.entries(COLUMNS)
  .map(([field, column]) => `g."${column}" AS "${field}"`)
  .join(", ")}, t.open_goals AS "__openGoals"
  FROM goals g JOIN tenants t ON t.id = g.tenant_id WHERE g.id = $1::uuid`;

export type StepGoal = Goal & { tenant: { openGoals: number } };

/** The goal with its tenant's count of open goals, or null when there is no such goal. */
export async function readStepGoal(prisma: PrismaClient, goalId: string): Promise<StepGoal | null> {
  const [row] = await sendStatement<Goal & { __openGoals: number }>(prisma, SQL, [goalId]);
  if (!row) return null;
  const { __openGoals, ...goal } = row;
  return { ...goal, tenant: { openGoals: __openGoals } };
}
