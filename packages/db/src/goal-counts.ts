import type { PrismaClient } from "./generated/client";

/** Goals of all tenants by state and failure reason: what the API's /metrics shows as loopsmith_goals. */
export async function goalCounts(prisma: PrismaClient): Promise<{ state: string; failureReason: string | null; count: number }[]> {
  const rows = await prisma.goal.groupBy({ by: ["state", "failureReason"], _count: { _all: true } });
  return rows.map((r) => ({ state: r.state, failureReason: r.failureReason, count: r._count._all }));
}
