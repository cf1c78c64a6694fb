// issue 17.3: how long a deferred step waits before it asks again; which steps are admitted.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createGoal, createPrisma } from "@loopsmith/db";
import { DATABASE_URL } from "../../../tests/support/services";
import { admitStep, deferDelay, MAX_DEFER_FACTOR } from "../src/fairness";

describe("deferDelay", () => {
  const cap = { maxActive: 4, deferMs: 1000 };
  it("is one deferMs for the goal next in line and one more per goal that must end first", () => {
    expect(deferDelay(4, cap)).toBe(1000);
    expect(deferDelay(5, cap)).toBe(2000);
    expect(deferDelay(7, cap)).toBe(4000);
  });
  it("stops growing at MAX_DEFER_FACTOR deferMs, so that no goal waits long after its turn has come", () => {
    expect(deferDelay(4 + MAX_DEFER_FACTOR - 1, cap)).toBe(MAX_DEFER_FACTOR * 1000);
    expect(deferDelay(10_000, cap)).toBe(MAX_DEFER_FACTOR * 1000);
  });
});

// issue 29: a step reads its tenant's count of open goals with its goal; at or below the cap the step runs
// without counting the working goals ahead of it. The answer must be the rule's either way.
describe("admitStep against real Postgres", () => {
  const prisma = createPrisma(DATABASE_URL);
  const cap = { maxActive: 2, deferMs: 1000 };
  const now = () => new Date();
  // A queue prefix no runner takes: nothing sweeps these goals into a queue.
  const queuePrefix = `lstest-fairness-${randomUUID()}`;
  afterAll(() => prisma.$disconnect());

  /** A tenant with n working goals (plan, version 0), oldest first, each read as the runner reads it. */
  async function tenantWith(n: number) {
    const tenant = await prisma.tenant.create({ data: { name: `fairness-${randomUUID()}` } });
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const { id } = await createGoal(prisma, { tenantId: tenant.id, queuePrefix, objective: "o", success: null, checks: [], inputs: [], maxAttempts: 3, budgets: {}, model: null });
      ids.push(id);
      await new Promise((r) => setTimeout(r, 5)); // distinct created_at
    }
    const read = (id: string) => prisma.goal.findUnique({ where: { id }, include: { tenant: { select: { openGoals: true } } } });
    return { tenant, ids, read };
  }

  it("at the cap (open goals = cap): every goal runs", async () => {
    const { ids, read } = await tenantWith(2);
    for (const id of ids) expect(await admitStep(prisma, { goalId: id, version: 0 }, await read(id), cap, now())).toEqual({ run: true });
  });

  it("past the cap: the oldest goals run, the younger one waits with the goals ahead of it counted", async () => {
    const { ids, read } = await tenantWith(3);
    expect((await read(ids[0]!))!.tenant.openGoals).toBe(3);
    expect(await admitStep(prisma, { goalId: ids[0]!, version: 0 }, await read(ids[0]!), cap, now())).toEqual({ run: true });
    expect(await admitStep(prisma, { goalId: ids[1]!, version: 0 }, await read(ids[1]!), cap, now())).toEqual({ run: true });
    expect(await admitStep(prisma, { goalId: ids[2]!, version: 0 }, await read(ids[2]!), cap, now())).toEqual({ run: false, ahead: 2, delayMs: 1000 });
  });

  it("an ended goal frees its place: open goals back at the cap, the younger goal runs", async () => {
    const { ids, read } = await tenantWith(3);
    await prisma.goal.update({ where: { id: ids[0]! }, data: { state: "cancelled" } });
    expect((await read(ids[2]!))!.tenant.openGoals).toBe(2);
    expect(await admitStep(prisma, { goalId: ids[2]!, version: 0 }, await read(ids[2]!), cap, now())).toEqual({ run: true });
  });
});
