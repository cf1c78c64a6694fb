// A tenant's goals: every read and write the API makes on a client's behalf goes through here, so the
// tenant filter is part of the query itself, not something each route has to remember.
import type { Goal, PrismaClient } from "./generated/client";
import { createGoal, type NewGoal, type OpenGoalCap } from "./goal-state";
import { loadGoalView, UUID } from "./goal-view";

export interface GoalPage {
  state?: string;
  limit: number;
  /** Keyset: only goals older than this (createdAt, then id). */
  before?: { at: Date; id: string };
}

export function goalsOf(prisma: PrismaClient, tenantId: string) {
  return {
    /** The goal row, or null when it is not this tenant's (or the id is not a UUID). */
    find(id: string): Promise<Goal | null> {
      return UUID.test(id) ? prisma.goal.findFirst({ where: { id, tenantId } }) : Promise.resolve(null);
    },
    /** What GET /goals/:id returns, or null. */
    view(id: string) {
      return loadGoalView(prisma, { tenantId, id });
    },
    /** Newest first; one row more than `limit` tells the caller there is a next page. */
    list(page: GoalPage) {
      const { state, limit, before } = page;
      return prisma.goal.findMany({
        where: {
          tenantId,
          ...(state ? { state } : {}),
          ...(before ? { OR: [{ createdAt: { lt: before.at } }, { createdAt: before.at, id: { lt: before.id } }] } : {}),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: limit + 1,
        select: { id: true, objective: true, state: true, verified: true, failureReason: true, attempts: true, createdAt: true, updatedAt: true, finishedAt: true },
      });
    },
    byIdempotencyKey(key: string) {
      return prisma.goal.findUnique({
        where: { tenantId_idempotencyKey: { tenantId, idempotencyKey: key } },
        select: { id: true, requestHash: true },
      });
    },
    /** With `cap`, refused (LS_ERR_GOAL_LIMIT) when the tenant already has cap.limit goals that have not ended. */
    create(goal: Omit<NewGoal, "tenantId">, cap?: OpenGoalCap) {
      return createGoal(prisma, { ...goal, tenantId }, cap);
    },
  };
}
export type TenantGoals = ReturnType<typeof goalsOf>;
