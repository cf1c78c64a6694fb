// How much of the system a tenant holds right now, read from the goal rows themselves: a count derived
// from states cannot leak (a goal that ends frees its place by ending), whatever process died on the way.
import { WORKING_STATES } from "@loopsmith/machine";
import type { PrismaClient } from "./generated/client";

/**
 * How many of the tenant's goals in a working state (a step queued or running) come before this one in
 * submission order (createdAt, then id). The runner lets a goal step only while fewer than the tenant's
 * cap are ahead of it: the tenant's oldest working goals progress, the younger ones wait their turn.
 * Counting stops at `upTo` (the caller only needs to know how far past its cap a goal is).
 */
export function workingGoalsAhead(
  prisma: PrismaClient,
  goal: { id: string; tenantId: string; queuePrefix: string; createdAt: Date },
  upTo: number,
): Promise<number> {
  return prisma.goal.count({
    where: {
      tenantId: goal.tenantId,
      // Goals of another queue prefix (another deployment on this database) take no turns in this queue.
      queuePrefix: goal.queuePrefix,
      state: { in: [...WORKING_STATES] },
      OR: [{ createdAt: { lt: goal.createdAt } }, { createdAt: goal.createdAt, id: { lt: goal.id } }],
    },
    take: upTo,
  });
}
