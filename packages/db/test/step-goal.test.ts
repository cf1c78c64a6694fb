// The goal a runner's step reads in one statement is the Goal Prisma reads, field for field and type for
// type (dates as Dates, JSON parsed, nulls as nulls), with the tenant's count of open goals beside it.
import { beforeAll, describe, expect, it } from "vitest";
import { testDatabase } from "./support/database";

const test = await testDatabase();
const { createGoal, readStepGoal } = test.db;
let prisma: typeof test.prisma;
let tenantId: string;

beforeAll(async () => {
  prisma = test.prisma;
  tenantId = (await prisma.tenant.create({ data: { name: "t" } })).id;
});

const prismaReading = (id: string) => prisma.goal.findUnique({ where: { id }, include: { tenant: { select: { openGoals: true } } } });

describe("readStepGoal", () => {
  it("reads a new goal (its optional columns null) as Prisma does", async () => {
    const { id } = await createGoal(prisma, { tenantId, objective: "o", success: null, checks: [], inputs: [], maxAttempts: 3, budgets: {}, model: null });
    const read = await readStepGoal(prisma, id);
    expect(read).toStrictEqual(await prismaReading(id));
    expect(read!.tenant.openGoals).toBe(1);
  });

  it("reads a goal with every column set as Prisma does", async () => {
    const { id } = await createGoal(prisma, { tenantId, objective: "o", success: "s", checks: [{ id: "x", params: { n: 1.5 } }], inputs: [], maxAttempts: 3, budgets: { max_tokens: 10 }, model: { provider: "scripted" } });
    const schedule = await prisma.schedule.findFirst();
    await prisma.goal.update({
      where: { id },
      data: {
        inputs: [{ name: "a.csv", size: 3 }],
        idempotencyKey: "k",
        requestHash: "h",
        webhook: { url: "https://example.test/hook" },
        deliverable: "out.json",
        selfTest: { fixtures: [] },
        state: "verified",
        version: 9,
        attempts: 2,
        verified: true,
        failureReason: "none",
        report: { total: 12345678901234, nested: [null, "é", { a: true }] },
        failureReport: { message: "m" },
        finishedAt: new Date("2026-12-04T10:11:12.345Z"),
        loopsmithVersion: "v1",
        receipt: "{}",
        language: "typescript",
        pinned: "a string as JSON",
        ...(schedule ? { scheduleId: schedule.id } : {}),
      },
    });
    const read = await readStepGoal(prisma, id);
    const reference = await prismaReading(id);
    expect(read).toStrictEqual(reference);
    expect(read!.finishedAt).toBeInstanceOf(Date);
    expect(read!.report).toEqual({ total: 12345678901234, nested: [null, "é", { a: true }] });
    expect(read!.tenant.openGoals).toBe(reference!.tenant.openGoals);
  });

  it("is null for a goal that does not exist", async () => {
    expect(await readStepGoal(prisma, "00000000-0000-4000-8000-000000000000")).toBeNull();
  });
});
