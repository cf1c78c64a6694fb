import { z } from "zod";

// The job catalog: every queue and the payload its jobs carry. Producers and consumers import both
// from here so that a renamed queue or a changed payload is a type error, not a silent drop.
export const QUEUES = {
  goals: "goals",
} as const;

export const goalJobSchema = z.object({
  goalId: z.uuid(),
  // The goal version this job was scheduled from: a worker that finds a newer version does nothing.
  version: z.number().int().nonnegative(),
});
export type GoalJob = z.infer<typeof goalJobSchema>;


/**
 * Delivery settings for goal jobs. A step that throws (sandbox engine or model provider unreachable) is
 * retried with backoff; the goal's own attempt budget is spent only by executions that really ran.
 */
const GOAL_JOB_OPTIONS = {
  attempts: 5,
  backoff: { type: "exponential", delay: 2000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
} as const;

/**
 * The arguments of `queue.add` for a goal's step. One job per goal version: enqueueing the same step
 * twice is a no-op, because BullMQ dedupes by job id.
 */
export function goalStepJob(job: GoalJob) {
  return ["step", job, { ...GOAL_JOB_OPTIONS, jobId: `${job.goalId}-v${job.version}` }] as const;
}
