import { DelayedError, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "@loopsmith/core";
import { goalJobSchema, QUEUES, type GoalJob } from "@loopsmith/schemas";

export interface JobMeta {
  jobId: string;
  /** Tries before this one that failed (threw). */
  attemptsMade: number;
  /** Tries before this one whose runner stopped renewing the job's lock (killed, frozen, lost Redis). */
  stalls: number;
  /** Tries this job gets in all, however they end. */
  maxAttempts: number;
  /** When the job became due (added, plus the delay it was added with), in ms since the epoch. */
  dueAt: number;
  /**
   * Puts the job back, delayed, without spending a try (BullMQ's moveToDelayed skips the attempt count)
   * and without failing it: it stays in the queue, so a crash after this loses nothing. Never returns.
   */
  defer(delayMs: number): Promise<never>;
}

export type GoalHandler = (job: GoalJob, meta: JobMeta) => Promise<unknown>;

export function createGoalWorker(deps: {
  connection: Redis;
  prefix: string;
  concurrency: number;
  handle: GoalHandler;
  log: Logger;
  /** Stored on each job it takes (job.processedBy): which runner holds, or last held, a step. */
  name?: string;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /**
   * Stalls BullMQ lets a job have before it fails the job itself, without calling the handler (BullMQ's
   * default is 1). Set it to the step's tries, so that the handler sees every try and can count stalls
   * against them; past it BullMQ's own failure is only a backstop.
   */
  maxStalledCount: number;
}): Worker {
  const worker = new Worker(
    QUEUES.goals,
    async (job: Job, token?: string) => {
      const payload = goalJobSchema.safeParse(job.data);
      if (!payload.success) {
        // A malformed job can never succeed: fail it without retries rather than loop on it.
        deps.log.error({ jobId: job.id, issues: payload.error.issues }, "malformed goal job");
        throw new Error(`malformed goal job: ${payload.error.message}`);
      }
      return deps.handle(payload.data, {
        jobId: String(job.id),
        attemptsMade: job.attemptsMade,
        stalls: job.stalledCounter,
        // A job added without attempts (BullMQ stores 0) gets one try.
        maxAttempts: Math.max(1, job.opts.attempts ?? 1),
        dueAt: job.timestamp + (job.opts.delay ?? 0),
        defer: async (delayMs) => {
          await job.moveToDelayed(Date.now() + delayMs, token);
          // Tells BullMQ the job was moved on purpose: it neither completes nor fails it.
          throw new DelayedError();
        },
      });
    },
    {
      connection: deps.connection,
      prefix: deps.prefix,
      concurrency: deps.concurrency,
      autorun: false,
      maxStalledCount: deps.maxStalledCount,
      ...(deps.name ? { name: deps.name } : {}),
      ...(deps.lockDurationMs ? { lockDuration: deps.lockDurationMs } : {}),
      ...(deps.stalledIntervalMs ? { stalledInterval: deps.stalledIntervalMs } : {}),
    },
  );
  worker.on("failed", (job, err) => deps.log.warn({ jobId: job?.id, err: err.message }, "job failed"));
  worker.on("error", (err) => deps.log.error({ err }, "worker error"));
  return worker;
}
