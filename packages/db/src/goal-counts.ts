import type { PrismaClient } from "./generated/client";

/** Goals of all tenants by state and failure reason: what the API's /metrics shows as loopsmith_goals. */
export async function goalCounts(prisma: PrismaClient, queuePrefix?: string): Promise<{ state: string; failureReason: string | null; count: number }[]> {
  // A deployment's own goals: several deployments (queue prefixes) may share one database.
  const rows = await prisma.goal.groupBy({ by: ["state", "failureReason"], _count: { _all: true }, ...(queuePrefix !== undefined ? { where: { queuePrefix } } : {}) });
  return rows.map((r) => ({ state: r.state, failureReason: r.failureReason, count: r._count._all }));
}
