import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { PrismaClient } from "@loopsmith/db";
import { QUEUES, type WebhookJob } from "@loopsmith/schemas";
import type { WebhookConfig } from "./config";

export type WebhookQueue = Queue<WebhookJob>;
export type RetryConfig = Pick<WebhookConfig, "WEBHOOK_MAX_ATTEMPTS">;

/** The backoff type of delivery jobs: the delivery worker's backoffStrategy computes it (see worker.ts). */
export const DELIVERY_BACKOFF = "webhook-schedule";

export function createWebhookQueue(connection: Redis, prefix: string): WebhookQueue {
  return new Queue<WebhookJob>(QUEUES.webhooks, { connection, prefix });
}

/**
 * One job per delivery: the job id defaults to the delivery id, so enqueueing twice (a step redelivered
 * after it committed) is a no-op. A redelivery passes a fresh id, since the finished job is kept for a while.
 */
export async function enqueueDelivery(queue: Queue, deliveryId: string, config: RetryConfig, jobId: string = deliveryId): Promise<void> {
  // BullMQ reads a custom id with ':' as a key path.
  if (jobId.includes(":")) throw new Error(`job id must not contain ':' (${jobId})`);
  const job: WebhookJob = { deliveryId };
  await queue.add("deliver", job, {
    jobId,
    attempts: config.WEBHOOK_MAX_ATTEMPTS,
    // The delay is the worker's to compute (schedule, jitter, Retry-After): it knows the failed attempt.
    backoff: { type: DELIVERY_BACKOFF },
    removeOnComplete: { age: 24 * 3600, count: 10_000 },
    removeOnFail: { age: 7 * 24 * 3600 },
  });
}

/**
 * Enqueue every pending delivery of a goal. Call it after the transaction that created them commits
 * (a job enqueued earlier could run before the row exists), and again whenever a redelivered step finds
 * its move already written: that covers a crash between the commit and the enqueue.
 */
export async function enqueuePendingDeliveries(prisma: PrismaClient, queue: Queue, config: RetryConfig, goalId: string): Promise<number> {
  const pending = await prisma.webhookDelivery.findMany({ where: { goalId, status: "pending" }, select: { id: true } });
  for (const d of pending) await enqueueDelivery(queue, d.id, config);
  return pending.length;
}
