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
  /** Only goals whose objective contains this text (any case), or whose id it is. */
  search?: string;
  /** Only the goals this schedule's ticks created. */
  scheduleId?: string;
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
    /**
     * Newest first, each with its model spend; one row more than `limit` tells the caller there is a next
     * page.
     */
    async list(page: GoalPage) {
      const { state, limit, before, search, scheduleId } = page;
      const text = search?.toLowerCase();
      // Prisma's `contains` is a LIKE pattern: the client's % and _ are text, not wildcards.
      const literal = text?.replace(/[\\%_]/g, (c) => `\\${c}`);
      const rows = await prisma.goal.findMany({
        where: {
          tenantId,
          ...(state ? { state } : {}),
          ...(scheduleId ? { scheduleId } : {}),
          ...(text ? { OR: [{ objective: { contains: literal, mode: "insensitive" } }, ...(UUID.test(text) ? [{ id: text }] : [])] } : {}),
          ...(before ? { AND: [{ OR: [{ createdAt: { lt: before.at } }, { createdAt: before.at, id: { lt: before.id } }] }] } : {}),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: limit + 1,
        select: { id: true, objective: true, state: true, verified: true, failureReason: true, attempts: true, createdAt: true, updatedAt: true, finishedAt: true, pinned: true },
      });
      // One grouped sum for the page, not one per goal.
      const spend = rows.length
        ? await prisma.modelCall.groupBy({ by: ["goalId"], where: { goalId: { in: rows.map((r) => r.id) } }, _sum: { costUsd: true } })
        : [];
      const costOf = new Map(spend.map((s) => [s.goalId, s._sum.costUsd ?? 0]));
      return rows.map((r) => ({ ...r, costUsd: costOf.get(r.id) ?? 0 }));
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
