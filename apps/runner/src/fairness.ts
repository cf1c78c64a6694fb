// Tenant fairness for goal steps (README "Tenant limits"). There is one FIFO queue of steps and each
// step of a goal re-enters it at the back, so the queue already takes turns between goals; without a
// cap it does not take turns between tenants: a tenant with 50 goals in flight gets 50 turns for every
// turn of a tenant with one. So a step runs only while fewer than TENANT_MAX_ACTIVE_GOALS of its
// tenant's working goals are older than its goal. A younger goal's step is put back in the queue,
// delayed, without spending a try (see JobMeta.defer), and asks again later. Which goals may step is
// derived from the goal rows at each pick, so nothing has to be released when a goal ends, and a runner
// that dies while deferring leaves a delayed job behind, which is all crash recovery needs.
//
// The bound: with C worker slots across the runners, T tenants with work and a cap of K, a step of one
// tenant waits behind at most K * T steps (each of the tenant's own K, and K of every other), however
// many goals any tenant has submitted; the deferred ones cost a quick read each when they come back.
import { workingGoalsAhead, type Goal, type PrismaClient } from "@loopsmith/db";
import { WORKING_STATES } from "@loopsmith/machine";
import { storedBudgets, type GoalJob } from "@loopsmith/schemas";

export interface TenantCap {
  /** Working goals of one tenant that may step; 0: no cap. */
  maxActive: number;
  /** Delay of a deferred step per goal ahead of it past the cap. */
  deferMs: number;
}

export type Admission = { run: true } | { run: false; ahead: number; delayMs: number };

/** A deferred goal asks again after this many deferMs at most, however deep in its tenant's line it is. */
export const MAX_DEFER_FACTOR = 10;

/**
 * How long a step waits before it asks again: one deferMs for each goal that must end before this one
 * may step, up to MAX_DEFER_FACTOR of them. A goal next in line asks often; the hundredth does not churn
 * the queue by asking as often as the first.
 */
export function deferDelay(ahead: number, cap: TenantCap): number {
  return cap.deferMs * Math.min(MAX_DEFER_FACTOR, Math.max(1, ahead - cap.maxActive + 1));
}

const isWorking = (s: string) => (WORKING_STATES as readonly string[]).includes(s);

/**
 * Whether this step may run now, or how long to put it back for. `goal`: the job's goal as the step will
 * load it (read once for both: the step takes it from here).
 */
export async function admitStep(prisma: PrismaClient, job: GoalJob, goal: (Goal & { tenant?: { openGoals: number } }) | null, cap: TenantCap, now: Date): Promise<Admission> {
  if (cap.maxActive <= 0) return { run: true };
  // A step that would not run (missing goal, stale job, ended or parked goal) is runStep's to judge.
  if (!goal || goal.version !== job.version || !isWorking(goal.state)) return { run: true };
  // The wall-clock budget counts from submission, waiting included: a goal whose budget ran out while it
  // waited is let through, and its step ends it (budget_wall) without doing any work.
  const { max_wall_seconds } = storedBudgets(goal.budgets, goal.maxAttempts);
  if ((now.getTime() - goal.createdAt.getTime()) / 1000 >= max_wall_seconds) return { run: true };
  // The tenant's goals that have not ended (the database keeps the count), this one among them: at most
  // the cap of them means fewer than the cap are working ahead of it, with no count to make.
  if (goal.tenant && goal.tenant.openGoals <= cap.maxActive) return { run: true };
  const ahead = await workingGoalsAhead(prisma, goal, cap.maxActive + MAX_DEFER_FACTOR);
  if (ahead < cap.maxActive) return { run: true };
  return { run: false, ahead, delayMs: deferDelay(ahead, cap) };
}
