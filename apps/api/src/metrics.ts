import { goalCounts, type PrismaClient } from "@loopsmith/db";
import { addGoalStateGauge, addQueueDepthGauge, createPromMetrics, type CountableQueue, type PromMetrics } from "@loopsmith/metrics";

/**
 * The API's metrics: its requests (app.ts times them), and what is read at scrape time: goals by state
 * from Postgres (cached for `goalCacheMs`) and queue depth from BullMQ. The runners count the work they
 * do on their own /metrics.
 */
export function createApiMetrics(deps: { prisma: PrismaClient; queues: readonly CountableQueue[]; queuePrefix: string; goalCacheMs?: number }): PromMetrics {
  const metrics = createPromMetrics({ app: "api" });
  // Goals of this deployment only (its queue prefix): others may share the database.
  addGoalStateGauge(metrics, () => goalCounts(deps.prisma, deps.queuePrefix), deps.goalCacheMs);
  addQueueDepthGauge(metrics, deps.queues);
  return metrics;
}
