import { beforeAll, describe, expect, it } from "vitest";
import { testDatabase } from "./support/database";

const test = await testDatabase();
const { createPrisma, DatabaseConnectionError, pingDatabase, sendStatement } = test.db;
type Prisma = typeof test.prisma;
let prisma: Prisma;

beforeAll(() => {
  prisma = test.prisma;
});

const newGoal = () => ({
  tenant: { create: { name: "t" } },
  objective: "Clean the CSV",
  inputs: [{ name: "in.csv", size: 3, sha256: "abc" }],
  maxAttempts: 3,
  budgets: { tokens: 1000 },
  state: "plan",
});

describe("the generated client over @prisma/adapter-pg", () => {
  it("pings", async () => {
    const ping = await pingDatabase(prisma);
    expect(ping.ok).toBe(true);
  });

  it("reports an unreachable database instead of throwing", async () => {
    const broken = createPrisma("postgresql://postgres:postgres@127.0.0.1:1/nowhere");
    try {
      const ping = await pingDatabase(broken);
      expect(ping.ok).toBe(false);
    } finally {
      await broken.$disconnect();
    }
  });

  it("sendStatement: rows as node-postgres reads them; Postgres's refusal as it is; a failed connection wrapped", async () => {
    expect(await sendStatement<{ n: number; t: string; at: Date }>(prisma, "SELECT $1::int AS n, $2::text AS t, now() AS at", [7, "é"])).toMatchObject([{ n: 7, t: "é" }]);
    await expect(sendStatement(prisma, "SELECT $1::int", ["x"])).rejects.toMatchObject({ code: "22P02", severity: "ERROR" });
    const broken = createPrisma("postgresql://postgres:postgres@127.0.0.1:1/nowhere");
    try {
      const refused = await sendStatement(broken, "SELECT 1", []).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DatabaseConnectionError);
      expect(refused).toMatchObject({ name: "DatabaseConnectionError", code: "ECONNREFUSED" });
    } finally {
      await broken.$disconnect();
    }
  });

  it("creates a goal with database defaults filled in", async () => {
    const goal = await prisma.goal.create({ data: newGoal() });
    expect(goal).toMatchObject({ version: 0, attempts: 0, verified: false, success: null, model: null, report: null, finishedAt: null });
    expect(goal.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(goal.inputs).toEqual([{ name: "in.csv", size: 3, sha256: "abc" }]);
  });

  it("compare-and-set on version: the current version wins once, a stale version changes nothing", async () => {
    const goal = await prisma.goal.create({ data: newGoal() });
    const cas = (version: number, state: string) =>
      prisma.goal.updateMany({ where: { id: goal.id, version }, data: { state, version: { increment: 1 } } });

    expect(await cas(0, "generate")).toEqual({ count: 1 });
    expect(await cas(0, "execute")).toEqual({ count: 0 });
    expect(await prisma.goal.findUniqueOrThrow({ where: { id: goal.id } })).toMatchObject({ state: "generate", version: 1 });
    expect(await cas(1, "execute")).toEqual({ count: 1 });
  });

  it("stores bytes and cascades a goal's deletion to its rows", async () => {
    const goal = await prisma.goal.create({ data: newGoal() });
    const content = new Uint8Array([0, 1, 2, 255]);
    await prisma.goalInput.create({ data: { goalId: goal.id, name: "in.csv", size: 4, sha256: "x", content } });
    await prisma.transition.create({ data: { goalId: goal.id, seq: 1, fromState: null, toState: "plan", detail: {} } });
    const stored = await prisma.goalInput.findFirstOrThrow({ where: { goalId: goal.id } });
    expect(Array.from(stored.content)).toEqual([0, 1, 2, 255]);

    await prisma.goal.delete({ where: { id: goal.id } });
    expect(await prisma.goalInput.count({ where: { goalId: goal.id } })).toBe(0);
    expect(await prisma.transition.count({ where: { goalId: goal.id } })).toBe(0);
  });

  it("enforces the tape's (goal, seq) uniqueness", async () => {
    const goal = await prisma.goal.create({ data: newGoal() });
    await prisma.transition.create({ data: { goalId: goal.id, seq: 1, toState: "plan", detail: {} } });
    await expect(prisma.transition.create({ data: { goalId: goal.id, seq: 1, toState: "plan", detail: {} } })).rejects.toMatchObject({ code: "P2002" });
  });
});
