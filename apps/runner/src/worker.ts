import { Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "@loopsmith/core";
import { goalJobSchema, QUEUES, type GoalJob } from "@loopsmith/schemas";

export interface JobMeta {
  jobId: string;
  /** Tries before this one. */
  attemptsMade: number;
  /** Tries this job gets in all. */
  maxAttempts: number;
}

export type GoalHandler = (job: GoalJob, meta: JobMeta) => Promise<unknown>;

export function createGoalWorker(deps: {
  connection: Redis;
  prefix: string;
  concurrency: number;
  handle: GoalHandler;
  log: Logger;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
}): Worker {
  const worker = new Worker(
    QUEUES.goals,
    async (job: Job) => {
      const payload = goalJobSchema.safeParse(job.data);
      if (!payload.success) {
        // A malformed job can never succeed: fail it without retries rather than loop on it.
        deps.log.error({ jobId: job.id, issues: payload.error.issues }, "malformed goal job");
        throw new Error(`malformed goal job: ${payload.error.message}`);
      }
      return deps.handle(payload.data, { jobId: String(job.id), attemptsMade: job.attemptsMade, maxAttempts: job.opts.attempts ?? 1 });
    },
    {
      connection: deps.connection,
      prefix: deps.prefix,
      concurrency: deps.concurrency,
      autorun: false,
      ...(deps.lockDurationMs ? { lockDuration: deps.lockDurationMs } : {}),
      ...(deps.stalledIntervalMs ? { stalledInterval: deps.stalledIntervalMs } : {}),
    },
  );
  worker.on("failed", (job, err) => deps.log.warn({ jobId: job?.id, err: err.message }, "job failed"));
  worker.on("error", (err) => deps.log.error({ err }, "worker error"));
  return worker;
}
