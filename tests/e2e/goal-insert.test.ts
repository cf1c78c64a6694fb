// issue 29: a submit's insert is one SQL statement (it was a six-round-trip transaction), and the tenant's
// open-goal cap is checked by that statement against the tenant's open_goals, which a database trigger keeps
// (counting the open goals on every submit cost about 1 µs per open goal). What the statement writes must be what the Prisma create
// wrote: the goal with its defaults, its files, its workspace and tape row 0; a refused goal leaves nothing.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LoopSmithError } from "@loopsmith/core";
import { isTerminal, STATES, TERMINAL_STATES } from "@loopsmith/machine";
import { checkApiKey, createPrisma, createTenant, goalsOf, type CreatedTenant } from "@loopsmith/db";
import { transitionHash } from "@loopsmith/receipts";
import { DATABASE_URL, randomPrefix, testSecretBox } from "../support/services";

const prisma = createPrisma(DATABASE_URL);
let tenant: CreatedTenant;

/** The statements `run` sends to the real Postgres (observed, nothing replaced: every statement is one call). */
async function statements(run: () => Promise<unknown>): Promise<string[]> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const q = args[0] as string | { text: string };
    sent.push(typeof q === "string" ? q : q.text);
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    await run();
  } finally {
    pg.Client.prototype.query = query;
  }
  return sent;
}

const file = (name: string, text: string) => ({ name, content: Buffer.from(text), sha256: `sha-${name}` });
const goal = (extra: Record<string, unknown> = {}) => ({
  objective: "o",
  success: null,
  checks: [{ id: "json_valid" }],
  inputs: [file("a.csv", "x,y\n1,2\n"), file("b.bin", "\u0000\u00ff")],
  maxAttempts: 3,
  budgets: { max_usd: 1 },
  model: { provider: "scripted" },
  ...extra,
});

beforeAll(async () => {
  tenant = await createTenant(prisma, { name: randomPrefix("goal-insert"), secretBox: testSecretBox() });
});
afterAll(async () => {
  await prisma.tenant.delete({ where: { id: tenant.tenant_id } }).catch(() => undefined);
  await prisma.$disconnect();
});

describe("createGoal (issue 29)", () => {
  it("is one database round trip", async () => {
    const goals = goalsOf(prisma, tenant.tenant_id);
    await goals.find("00000000-0000-0000-0000-000000000000"); // the pool's connection is open before counting
    const sent = await statements(() => goals.create(goal({ checkerFiles: [file("expected.json", "{}")] }), { limit: 1000 }));
    expect(sent).toHaveLength(1);
  });

  it("writes the goal, its defaults, files, workspace and tape row 0 as the Prisma create did", async () => {
    const archive = Buffer.from("tar bytes");
    const { id, version } = await goalsOf(prisma, tenant.tenant_id).create(
      goal({
        idempotencyKey: "k-1",
        requestHash: "h",
        webhook: { url: "https://example.test/hook" },
        queuePrefix: "pfx",
        checkerFiles: [file("expected.json", "{}")],
        selfTest: { good: [], bad: [] },
        loopsmithVersion: "git:abc",
        workspace: { archive, files: [{ path: "a.py", size: 1, sha256: "s" }], locked: ["a.py"], sha256: "ws" },
      }),
    );
    expect(version).toBe(0);
    const row = await prisma.goal.findUniqueOrThrow({ where: { id }, include: { inputFiles: { orderBy: { name: "asc" } }, checkerFiles: true, workspace: true, transitions: true } });
    expect(row).toMatchObject({
      tenantId: tenant.tenant_id,
      idempotencyKey: "k-1",
      requestHash: "h",
      webhook: { url: "https://example.test/hook" },
      queuePrefix: "pfx",
      objective: "o",
      success: null,
      checks: [{ id: "json_valid" }],
      inputs: [
        { name: "a.csv", size: 8, sha256: "sha-a.csv" },
        { name: "b.bin", size: 3, sha256: "sha-b.bin" },
      ],
      deliverable: "result.json",
      feedback: "full",
      onInfeasible: "fail",
      language: "python",
      selfTest: { good: [], bad: [] },
      maxAttempts: 3,
      budgets: { max_usd: 1 },
      model: { provider: "scripted" },
      state: "plan",
      attempts: 0,
      verified: false,
      loopsmithVersion: "git:abc",
    });
    expect(row.updatedAt.getTime()).toBeGreaterThan(0);
    expect(row.inputFiles.map((f) => [f.name, Buffer.from(f.content).toString("latin1")])).toEqual([
      ["a.csv", "x,y\n1,2\n"],
      ["b.bin", "\u0000\u00c3\u00bf"],
    ]);
    expect(row.checkerFiles.map((f) => [f.name, f.size, Buffer.from(f.content).toString()])).toEqual([["expected.json", 2, "{}"]]);
    expect(row.workspace).toMatchObject({ files: [{ path: "a.py", size: 1, sha256: "s" }], locked: ["a.py"], sha256: "ws" });
    expect(Buffer.from(row.workspace!.archive).equals(archive)).toBe(true);
    expect(row.transitions).toHaveLength(1);
    const t = row.transitions[0]!;
    expect(t).toMatchObject({ seq: 0, fromState: null, toState: "plan", detail: {} });
    expect(t.hash).toBe(transitionHash("", { seq: 0, from: null, to: "plan", at: t.at.toISOString(), detail: {} }));

    // A null deliverable (the program itself) is stored as null, not the default.
    const program = await goalsOf(prisma, tenant.tenant_id).create(goal({ deliverable: null, inputs: [] }));
    expect((await prisma.goal.findUniqueOrThrow({ where: { id: program.id } })).deliverable).toBeNull();
  });

  it("a second goal with the tenant's idempotency key fails with P2002, the code the route matches", async () => {
    const goals = goalsOf(prisma, tenant.tenant_id);
    await goals.create(goal({ idempotencyKey: "k-dup" }));
    await expect(goals.create(goal({ idempotencyKey: "k-dup" }))).rejects.toMatchObject({ code: "P2002" });
  });

  it("refuses past the open-goal cap, stores nothing of the refused goal, and an ended goal frees a place", async () => {
    const other = await createTenant(prisma, { name: randomPrefix("goal-insert-cap"), secretBox: testSecretBox() });
    try {
      const goals = goalsOf(prisma, other.tenant_id);
      const a = await goals.create(goal(), { limit: 2 });
      await goals.create(goal(), { limit: 2 });
      const refused = await goals.create(goal({ objective: "refused" }), { limit: 2 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LoopSmithError);
      expect(refused).toMatchObject({ code: "LS_ERR_GOAL_LIMIT", details: { limit: 2 } });
      expect(await prisma.goal.count({ where: { tenantId: other.tenant_id } })).toBe(2);
      await prisma.goal.update({ where: { id: a.id }, data: { state: "cancelled" } });
      await goals.create(goal(), { limit: 2 });
      expect(await prisma.goal.count({ where: { tenantId: other.tenant_id } })).toBe(3);
    } finally {
      await prisma.tenant.delete({ where: { id: other.tenant_id } });
    }
  });
});

describe("tenants.open_goals, kept by the goals_open_count trigger", () => {
  const openGoals = async (tenantId: string) => (await prisma.tenant.findUniqueOrThrow({ where: { id: tenantId } })).openGoals;
  const counted = (tenantId: string) => prisma.goal.count({ where: { tenantId, state: { notIn: [...TERMINAL_STATES] } } });

  it("agrees with the machine's terminal states through every state, inserts in any state, deletes and a change of tenant", async () => {
    const a = await createTenant(prisma, { name: randomPrefix("open-goals-a"), secretBox: testSecretBox() });
    const b = await createTenant(prisma, { name: randomPrefix("open-goals-b"), secretBox: testSecretBox() });
    try {
      const g = await goalsOf(prisma, a.tenant_id).create(goal());
      expect(await openGoals(a.tenant_id)).toBe(1);
      // Every state in turn, from every other kind: open to open (plan -> ...), open to ended and back.
      for (const state of [...STATES, ...[...STATES].reverse()]) {
        await prisma.goal.update({ where: { id: g.id }, data: { state } });
        expect({ state, open: await openGoals(a.tenant_id) }).toEqual({ state, open: isTerminal(state) ? 0 : 1 });
      }
      // Rows written by other code than createGoal count too, in whatever state they are written.
      for (const state of STATES) {
        await prisma.goal.create({ data: { tenantId: a.tenant_id, objective: "o", checks: [], inputs: [], maxAttempts: 1, budgets: {}, state } });
      }
      expect(await openGoals(a.tenant_id)).toBe(await counted(a.tenant_id));
      // A goal moved to another tenant moves its count; a delete of an open goal lowers it, of an ended one not.
      await prisma.goal.update({ where: { id: g.id }, data: { state: "plan", tenantId: b.tenant_id } });
      expect([await openGoals(a.tenant_id), await openGoals(b.tenant_id)]).toEqual([await counted(a.tenant_id), 1]);
      await prisma.goal.deleteMany({ where: { tenantId: a.tenant_id, state: "verified" } });
      await prisma.goal.deleteMany({ where: { tenantId: a.tenant_id, state: "execute" } });
      expect(await openGoals(a.tenant_id)).toBe(await counted(a.tenant_id));
      expect(await openGoals(a.tenant_id)).toBe(STATES.filter((s) => !isTerminal(s)).length - 1);
    } finally {
      // Deleting a tenant deletes its open goals through the foreign key: their trigger finds no tenant row.
      await prisma.tenant.delete({ where: { id: a.tenant_id } });
      await prisma.tenant.delete({ where: { id: b.tenant_id } });
    }
  });

  it("holds the cap exactly when one tenant's submits race", async () => {
    const t = await createTenant(prisma, { name: randomPrefix("open-goals-race"), secretBox: testSecretBox() });
    try {
      const goals = goalsOf(prisma, t.tenant_id);
      // The pool's ten connections open first, so that the submits below reach Postgres side by side.
      await Promise.all(Array.from({ length: 10 }, () => prisma.$queryRaw`SELECT 1 AS one FROM pg_sleep(0.1)`));
      const outcomes = await Promise.all(Array.from({ length: 24 }, () => goals.create(goal(), { limit: 5 }).then(() => "ok", (e: { code?: string }) => e.code)));
      expect(outcomes.filter((o) => o === "ok")).toHaveLength(5);
      expect(outcomes.filter((o) => o === "LS_ERR_GOAL_LIMIT")).toHaveLength(19);
      expect(await prisma.goal.count({ where: { tenantId: t.tenant_id } })).toBe(5);
      expect(await openGoals(t.tenant_id)).toBe(5);
    } finally {
      await prisma.tenant.delete({ where: { id: t.tenant_id } });
    }
  });
});

describe("checkApiKey (issue 29)", () => {
  it("is one database round trip and returns the key's tenant", async () => {
    await checkApiKey(prisma, tenant.api_key); // the pool's connection is open before counting
    let checked: Awaited<ReturnType<typeof checkApiKey>> | undefined;
    const sent = await statements(async () => {
      checked = await checkApiKey(prisma, tenant.api_key);
    });
    expect(sent).toHaveLength(1);
    expect(checked).toMatchObject({ ok: true, tenant: { id: tenant.tenant_id, name: tenant.name, approvalThresholdUsd: null } });
    await prisma.tenant.update({ where: { id: tenant.tenant_id }, data: { approvalThresholdUsd: 2.5 } });
    expect(await checkApiKey(prisma, tenant.api_key)).toMatchObject({ ok: true, tenant: { approvalThresholdUsd: 2.5 } });
    expect(await checkApiKey(prisma, `${tenant.api_key}x`)).toEqual({ ok: false, reason: "unknown" });
  });
});
