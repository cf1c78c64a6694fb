// issue 25: an outage or a saturated database is a 503 the client may retry, never a 500.
// - With Postgres stopped every authenticated request was a 500 (the key lookup threw P1001) while /readyz
//   said 503. Reproduced without stopping the shared Postgres: the app's Prisma client points at a port
//   where nothing listens.
// - With the pool saturated, POST /goals at 100 req/s was 48% 500s (P2028: no transaction could start
//   within maxWait). Reproduced with a pool of one connection held by an open transaction.
// - And the API sheds load: past its in-flight bound a request is answered 503 at once instead of
//   queueing for the pool.
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "@loopsmith/core";
import { createPrisma, createTenant, type CreatedTenant, type PrismaClient } from "@loopsmith/db";
import { modelConfigSchema } from "@loopsmith/models";
import { budgetConfigSchema, goalStepJob, QUEUES } from "@loopsmith/schemas";
import { createWebhookQueue, webhookConfigSchema } from "@loopsmith/webhooks";
import { demoGoal } from "../../../scripts/demo/scenario";
import { build } from "../src/app";
import { unavailable } from "../src/unavailable";
import { closedPort, DATABASE_URL, randomPrefix, REDIS_URL, testSecretBox } from "../../../tests/support/services";

const ADMIN_KEY = "admin-key-for-the-outages-test-0123456789";
const prefix = randomPrefix("outages");
const shared = createPrisma(DATABASE_URL);
const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const queue = new Queue(QUEUES.goals, { connection, prefix });
const webhookQueue = createWebhookQueue(connection, prefix);
const clients: PrismaClient[] = [];
let tenant: CreatedTenant;

const up = async () => "up";
async function appOn(prisma: PrismaClient, extra: { maxInFlight?: number } = {}) {
  const env = { LOOPSMITH_SCRIPTED_MODEL: "true" };
  return build({
    logger: false,
    readiness: { postgres: up, redis: up, docker: up, sandbox_image: up },
    ...extra,
    services: {
      prisma,
      queuePrefix: prefix,
      models: parseConfig(modelConfigSchema, env),
      budgets: parseConfig(budgetConfigSchema, env),
      webhooks: parseConfig(webhookConfigSchema, env),
      webhookQueue,
      secretBox: testSecretBox(),
      enqueue: async (job) => {
        await queue.add(...goalStepJob(job, { attempts: 1, backoffMs: 100 }));
      },
      adminApiKey: ADMIN_KEY,
    },
  });
}
const client = (url: string, options: Parameters<typeof createPrisma>[1] = {}) => {
  const c = createPrisma(url, options);
  clients.push(c);
  return c;
};

/** Holds the pool's one connection in an open transaction until the returned function is called. */
async function holdTheConnection(prisma: PrismaClient): Promise<() => Promise<void>> {
  let release!: () => void;
  let started!: () => void;
  const begun = new Promise<void>((r) => (started = r));
  const done = prisma.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT 1`;
      started();
      await new Promise<void>((r) => (release = r));
    },
    { timeout: 60_000 },
  );
  await begun;
  return async () => {
    release();
    await done;
  };
}

const goal = demoGoal();
const auth = () => ({ authorization: `Bearer ${tenant.api_key}` });

beforeAll(async () => {
  tenant = await createTenant(shared, { name: `${prefix}-tenant`, secretBox: testSecretBox() });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.$disconnect()));
  await shared.$disconnect();
  await queue.obliterate({ force: true }).catch(() => undefined);
  await Promise.all([queue.close(), webhookQueue.close()]);
  connection.disconnect();
});

describe("Postgres unreachable: 503 LS_ERR_NOT_READY on every route, never 500 (issue 25)", () => {
  it.each([
    ["GET /goals (the key lookup fails)", "GET", "/goals", auth, undefined],
    ["POST /goals (the key lookup fails)", "POST", "/goals", auth, goal],
    ["GET /goals/:id", "GET", "/goals/00000000-0000-4000-8000-000000000000", auth, undefined],
    ["an admin route (no key lookup; the handler's query fails)", "GET", "/admin/tenants/00000000-0000-4000-8000-000000000000/api-keys", () => ({ authorization: `Bearer ${ADMIN_KEY}` }), undefined],
  ])("%s", async (_, method, url, headers, payload) => {
    const app = await appOn(client(`postgresql://postgres:postgres@127.0.0.1:${await closedPort()}/loopsmith`));
    try {
      const res = await app.inject({ method: method as "GET" | "POST", url, headers: headers(), payload });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.headers["retry-after"]).toBe("5");
      expect(res.json()).toEqual({ error: { code: "LS_ERR_NOT_READY", message: "The database cannot be reached right now; retry shortly.", details: null } });
      // Nothing of the connection string or the address leaves the server.
      expect(res.body).not.toMatch(/127\.0\.0\.1|postgres:|P1001/);
    } finally {
      await app.close();
    }
  });
});

describe("a saturated pool: 503 LS_ERR_BUSY with Retry-After, never 500 (issue 25)", () => {
  it("a transaction that cannot start within maxWait (Prisma P2028)", async () => {
    // No pool timeout of its own: the wait that ends is Prisma's (maxWait, 2 s), as under load.
    const prisma = client(DATABASE_URL, { maxConnections: 1 });
    const app = await appOn(prisma);
    const release = await holdTheConnection(prisma);
    try {
      // Rotating a key is one transaction from its first query; admin routes need no key lookup.
      const res = await app.inject({
        method: "POST",
        url: `/admin/tenants/${tenant.tenant_id}/api-keys/00000000-0000-4000-8000-000000000000/rotate`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: {},
      });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.headers["retry-after"]).toBe("1");
      expect(res.json().error).toMatchObject({ code: "LS_ERR_BUSY", message: "The database has no free connection right now; retry shortly." });
    } finally {
      await release();
      await app.close();
    }
  });

  it("a query that waits longer than the pool timeout for a connection (the key lookup of POST /goals)", async () => {
    const prisma = client(DATABASE_URL, { maxConnections: 1, connectionTimeoutMs: 300 });
    const app = await appOn(prisma);
    await prisma.$queryRaw`SELECT 1`; // the connection is open before it is held
    const release = await holdTheConnection(prisma);
    try {
      const res = await app.inject({ method: "POST", url: "/goals", headers: auth(), payload: goal });
      expect(res.statusCode, res.body).toBe(503);
      expect(res.headers["retry-after"]).toBe("1");
      expect(res.json().error.code).toBe("LS_ERR_BUSY");
    } finally {
      await release();
    }
    // Once the connection is free again, the same request is accepted.
    const res = await app.inject({ method: "POST", url: "/goals", headers: auth(), payload: goal });
    expect(res.statusCode, res.body).toBe(202);
    await app.close();
  });

  it("past the in-flight bound a request is answered at once, health stays up, and the waiting ones finish", async () => {
    const prisma = client(DATABASE_URL, { maxConnections: 1 });
    const app = await appOn(prisma, { maxInFlight: 2 });
    await prisma.$queryRaw`SELECT 1`;
    const release = await holdTheConnection(prisma);
    let waiting: Promise<{ statusCode: number }>[] = [];
    try {
      // Two requests wait for the held connection (no pool timeout here): they fill the bound.
      // .then() sends them: inject() alone only describes a request until something awaits it.
      waiting = [0, 1].map(() => app.inject({ method: "GET", url: "/goals", headers: auth() }).then((r) => r));
      // Until they hold their places: a request without a key, admitted, is a 401 at once (no lookup).
      while ((await app.inject({ method: "GET", url: "/goals" })).statusCode === 401) await new Promise((r) => setTimeout(r, 20));
      const shed = await app.inject({ method: "POST", url: "/goals", headers: auth(), payload: goal });
      expect(shed.statusCode).toBe(503);
      expect(shed.headers["retry-after"]).toBe("1");
      expect(shed.json().error).toEqual({ code: "LS_ERR_BUSY", message: "This API process is already working on 2 requests; retry shortly.", details: { in_flight_limit: 2 } });
      expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    } finally {
      await release();
    }
    expect((await Promise.all(waiting)).map((r) => r.statusCode)).toEqual([200, 200]);
    // Their places came back.
    expect((await app.inject({ method: "GET", url: "/goals", headers: auth() })).statusCode).toBe(200);
    await app.close();
  });
});

describe("unavailable()", () => {
  it("matches by code and through causes, and leaves other errors alone", () => {
    const code = (e: unknown) => unavailable(e)?.error.code;
    expect(code({ code: "P1001", clientVersion: "7" })).toBe("LS_ERR_NOT_READY");
    expect(code({ code: "P2024" })).toBe("LS_ERR_BUSY");
    expect(code({ code: "P2010", meta: { driverAdapterError: { cause: { kind: "DatabaseNotReachable" } } } })).toBe("LS_ERR_NOT_READY");
    expect(code({ code: "P2010", meta: { driverAdapterError: { cause: { kind: "postgres", originalCode: "57P01" } } } })).toBe("LS_ERR_NOT_READY");
    expect(code({ code: "P2010", meta: { driverAdapterError: { cause: { kind: "postgres", originalCode: "08006" } } } })).toBe("LS_ERR_NOT_READY");
    expect(code({ code: "P2037", meta: { driverAdapterError: { cause: { kind: "TooManyConnections" } } } })).toBe("LS_ERR_BUSY");
    expect(code(Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:6379"), { code: "ECONNREFUSED" }))).toBe("LS_ERR_NOT_READY");
    expect(code(new Error("wrapped", { cause: Object.assign(new Error("x"), { code: "ETIMEDOUT" }) }))).toBe("LS_ERR_NOT_READY");
    expect(code(new Error("timeout exceeded when trying to connect"))).toBe("LS_ERR_BUSY");
    expect(unavailable(Object.assign(new Error("Connection terminated unexpectedly"), { clientVersion: "7" }))?.error.message).toBe("The database cannot be reached right now; retry shortly.");
    expect(unavailable(Object.assign(new Error("x"), { code: "ECONNREFUSED" }))?.error.message).toBe("A service this API depends on cannot be reached right now; retry shortly.");
    for (const other of [new Error("boom"), { code: "P2002" }, { code: "P2025", clientVersion: "7" }, { code: "23505" }, null, "text", { code: "LS_ERR_VALIDATION" }]) expect(unavailable(other)).toBeUndefined();
  });
});
