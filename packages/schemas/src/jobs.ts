import { z } from "zod";

// The job catalog: every queue and the payload its jobs carry. Producers and consumers import both
// from here so that a renamed queue or a changed payload is a type error, not a silent drop.
export const QUEUES = {
  goals: "goals",
  webhooks: "webhooks",
  schedules: "schedules",
} as const;

export const webhookJobSchema = z.object({ deliveryId: z.uuid() });
export type WebhookJob = z.infer<typeof webhookJobSchema>;

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
export interface StepRetry {
  /** Tries of one step before the goal is parked in `errored` (the dead-letter list). */
  attempts: number;
  /** First backoff; doubles on each retry. */
  backoffMs: number;
}
export const DEFAULT_STEP_RETRY: StepRetry = { attempts: 5, backoffMs: 2000 };

/**
 * The arguments of `queue.add` for a goal's step. One job per goal version: enqueueing the same step
 * twice is a no-op, because BullMQ dedupes by job id. `delayMs` schedules it later (approval timeouts).
 */
export function goalStepJob(job: GoalJob, retry: StepRetry = DEFAULT_STEP_RETRY, delayMs?: number) {
  return [
    "step",
    job,
    {
      attempts: retry.attempts,
      backoff: { type: "exponential", delay: retry.backoffMs },
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
      jobId: `${job.goalId}-v${job.version}`,
      ...(delayMs !== undefined ? { delay: delayMs } : {}),
    },
  ] as const;
}

/** Config shared by every process that enqueues goal steps. */
export const stepRetryConfigSchema = z.object({
  STEP_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(DEFAULT_STEP_RETRY.attempts),
  STEP_BACKOFF_MS: z.coerce.number().int().min(10).default(DEFAULT_STEP_RETRY.backoffMs),
});
