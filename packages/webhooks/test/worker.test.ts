import http from "node:http";
import type { AddressInfo } from "node:net";
import { Queue, UnrecoverableError, type Job, type Worker } from "bullmq";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@loopsmith/core";
import { rotateWebhookSecret } from "@loopsmith/db";
import {
  createDelivery,
  createDeliveryWorker,
  createWebhookQueue,
  deliver,
  enqueuePendingDeliveries,
  IN_FLIGHT,
  listDeliveries,
  loadDelivery,
  NO_OUTCOME,
  redeliver,
  webhookConfigSchema,
  type LookupAll,
  type WebhookConfig,
  type WebhookEvent,
} from "../src/index";
import { spawnTs } from "../../../scripts/lib/proc";
import { closedPort, deleteKeys, randomPrefix, services, startReceiver, tenantWithGoal, testSecretBox, waitFor } from "./support";

const { prisma, redis } = services();
const prefix = randomPrefix("webhooks");
const log = createLogger({ name: "webhooks-test", level: "silent" });
const tenants: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

const config = (env: Record<string, string> = {}): WebhookConfig =>
  webhookConfigSchema.parse({ WEBHOOK_ALLOW_CIDRS: "127.0.0.1/32", WEBHOOK_RETRY_SCHEDULE: "50ms", WEBHOOK_TIMEOUT_MS: "3000", ...env });

let queue: Queue;

beforeAll(async () => {
  await redis.ping();
  queue = createWebhookQueue(redis, prefix);
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

afterAll(async () => {
  await queue?.obliterate({ force: true });
  await queue?.close();
  await deleteKeys(redis, prefix);
  if (tenants.length) await prisma.tenant.deleteMany({ where: { id: { in: tenants } } });
  await prisma.$disconnect();
  await redis.quit();
});

function startWorker(cfg: WebhookConfig, opts: { prefix?: string; lookup?: LookupAll } = {}): Worker {
  const worker = createDeliveryWorker({ prisma, connection: redis, prefix: opts.prefix ?? prefix, config: cfg, secretBox: testSecretBox(), log, lookup: opts.lookup });
  cleanups.push(() => worker.close());
  return worker;
}

async function receiver(statuses: number[], port?: number) {
  const r = await startReceiver(statuses, port);
  cleanups.push(r.close);
  return r;
}

/** A goal with a webhook and a delivery for it, as the runner creates one (inside its transaction). */
async function newDelivery(url: string, event: WebhookEvent = "goal.verified") {
  const { tenant, goalId } = await tenantWithGoal(prisma, url);
  tenants.push(tenant.tenant_id);
  const goal = await prisma.goal.findUniqueOrThrow({ where: { id: goalId } });
  const deliveryId = await prisma.$transaction((tx) => createDelivery(tx, goal, event));
  expect(deliveryId).toMatch(/^[0-9a-f-]{36}$/);
  return { tenant, goalId, deliveryId: deliveryId! };
}

/** ...then enqueued after the commit. */
async function deliveryFor(url: string, cfg: WebhookConfig, event: WebhookEvent = "goal.verified", q: Queue = queue) {
  const d = await newDelivery(url, event);
  expect(await enqueuePendingDeliveries(prisma, q, cfg, d.goalId)).toBe(1);
  return d;
}

const settled = (id: string, status: "delivered" | "dead") =>
  waitFor(`delivery ${id} to be ${status}`, async () => {
    const d = await prisma.webhookDelivery.findUniqueOrThrow({ where: { id }, include: { log: { orderBy: { attempt: "asc" } } } });
    return d.status === status ? d : null;
  });

const headersOf = (r: { headers: Record<string, string | string[] | undefined> }) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"]),
});

describe("createDelivery", () => {
  it("inserts nothing for a goal without a webhook", async () => {
    const { tenant, goalId } = await tenantWithGoal(prisma, null);
    tenants.push(tenant.tenant_id);
    const goal = await prisma.goal.findUniqueOrThrow({ where: { id: goalId } });
    expect(await prisma.$transaction((tx) => createDelivery(tx, goal, "goal.failed"))).toBeNull();
    expect(await prisma.webhookDelivery.count({ where: { goalId } })).toBe(0);
  });

  it("rolls back with the caller's transaction", async () => {
    const { tenant, goalId } = await tenantWithGoal(prisma, "http://127.0.0.1:1/hook");
    tenants.push(tenant.tenant_id);
    const goal = await prisma.goal.findUniqueOrThrow({ where: { id: goalId } });
    await expect(
      prisma.$transaction(async (tx) => {
        await createDelivery(tx, goal, "goal.failed");
        throw new Error("the move failed");
      }),
    ).rejects.toThrow("the move failed");
    expect(await prisma.webhookDelivery.count({ where: { goalId } })).toBe(0);
  });

  it("is enqueued once however often enqueuePendingDeliveries runs (job id = delivery id)", async () => {
    const q = new Queue("webhooks", { connection: redis, prefix: randomPrefix("webhooks-idem") });
    cleanups.push(async () => {
      await q.obliterate({ force: true });
      await q.close();
    });
    const cfg = config({ WEBHOOK_MAX_ATTEMPTS: "3" });
    const { goalId, deliveryId } = await deliveryFor("http://127.0.0.1:1/hook", cfg, "goal.failed", q);
    await enqueuePendingDeliveries(prisma, q, cfg, goalId);
    const jobs = await q.getJobs(["waiting", "delayed", "active"]);
    expect(jobs.map((j) => [j.id, j.data, j.opts.attempts, j.opts.backoff])).toEqual([
      [deliveryId, { deliveryId }, 3, { type: "webhook-schedule" }],
    ]);
    const row = await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId } });
    expect(row).toMatchObject({ status: "pending", attempts: 0, payload: null, event: "goal.failed", url: "http://127.0.0.1:1/hook" });
    expect(row.messageId).toMatch(/^msg_[0-9a-f]{32}$/);
  });
});

describe("the delivery worker", () => {
  it("retries 500, 500, 500 then delivers on 200: same bytes, same webhook-id, a verifiable signature, one log row per attempt", async () => {
    const cfg = config();
    const r = await receiver([500, 500, 500, 200]);
    startWorker(cfg);
    const { tenant, goalId, deliveryId } = await deliveryFor(r.url, cfg);

    const d = await settled(deliveryId, "delivered");
    expect(d.log.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 500, "HTTP 500"],
      [3, 500, "HTTP 500"],
      [4, 200, null],
    ]);
    expect(d).toMatchObject({ attempts: 4, lastError: null });
    expect(d.deliveredAt).toBeInstanceOf(Date);

    expect(r.received).toHaveLength(4);
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
    expect(new Set(r.received.map((x) => x.headers["webhook-id"]))).toEqual(new Set([d.messageId]));
    for (const x of r.received) {
      expect(x).toMatchObject({ method: "POST", url: "/hook" });
      expect(x.headers["content-type"]).toBe("application/json");
      expect(x.headers["user-agent"]).toBe("LoopSmith-Webhooks/1");
      expect(new Webhook(tenant.webhook_secret).verify(x.body, headersOf(x))).toBeTruthy();
    }
    expect(d.payload).toBe(r.received[0]!.body);
    const payload = JSON.parse(r.received[3]!.body) as { type: string; timestamp: string; data: { id: string; state: string; webhook: unknown } };
    expect(payload.type).toBe("goal.verified");
    expect(new Date(payload.timestamp).toISOString()).toBe(payload.timestamp);
    expect(payload.data).toMatchObject({ id: goalId, state: "plan", webhook: { url: r.url } });

    // What the API shows.
    const list = await listDeliveries(prisma, { tenantId: tenant.tenant_id, goalId });
    expect(list).toHaveLength(1);
    expect(list![0]).toMatchObject({ id: deliveryId, goal_id: goalId, status: "delivered", attempts: 4, message_id: d.messageId, last_error: null });
    expect(list![0]!.log.map((a) => a.status_code)).toEqual([500, 500, 500, 200]);
  });

  it("goes dead after WEBHOOK_MAX_ATTEMPTS against a closed port; redeliver then delivers the same message, continuing the log", async () => {
    const cfg = config({ WEBHOOK_MAX_ATTEMPTS: "3" });
    const port = await closedPort();
    startWorker(cfg);
    const { tenant, goalId, deliveryId } = await deliveryFor(`http://127.0.0.1:${port}/hook`, cfg, "goal.failed");

    const dead = await settled(deliveryId, "dead");
    expect(dead.log.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, null],
      [2, null],
      [3, null],
    ]);
    for (const a of dead.log) expect(a.error).toMatch(/ECONNREFUSED/);
    expect(dead.lastError).toMatch(/ECONNREFUSED/);
    // Dead means no further attempts: give BullMQ time to (wrongly) retry, then look again.
    await new Promise((res) => setTimeout(res, 300));
    expect(await prisma.deliveryAttempt.count({ where: { deliveryId } })).toBe(3);

    const r = await receiver([200], port);
    const view = await redeliver(prisma, queue, cfg, { tenantId: tenant.tenant_id, deliveryId });
    expect(view).toMatchObject({ id: deliveryId, status: "pending", last_error: null, attempts: 3 });

    const delivered = await settled(deliveryId, "delivered");
    expect(delivered.log.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, null],
      [2, null],
      [3, null],
      [4, 200],
    ]);
    expect(r.received).toHaveLength(1);
    expect(r.received[0]!.headers["webhook-id"]).toBe(dead.messageId);
    expect(r.received[0]!.body).toBe(dead.payload);
    expect(JSON.parse(r.received[0]!.body)).toMatchObject({ type: "goal.failed", data: { id: goalId } });
    expect(new Webhook(tenant.webhook_secret).verify(r.received[0]!.body, headersOf(r.received[0]!))).toBeTruthy();

    // A delivered one may be redelivered too; a pending one may not.
    await redeliver(prisma, queue, cfg, { tenantId: tenant.tenant_id, deliveryId });
    await expect(redeliver(prisma, queue, cfg, { tenantId: tenant.tenant_id, deliveryId })).rejects.toMatchObject({
      code: "LS_ERR_DELIVERY_IN_PROGRESS",
      status: 409,
    });
    await settled(deliveryId, "delivered");
    await waitFor("the second redelivery's request", async () => r.received.length === 2);
    expect(r.received[1]!.body).toBe(r.received[0]!.body);
    expect((await prisma.deliveryAttempt.findMany({ where: { deliveryId }, orderBy: { attempt: "asc" } })).map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5]);
  });

  it("checks the URL again at delivery time: a worker without the allow list marks it dead, logs the refusal and sends nothing", async () => {
    const r = await receiver([200]);
    // Allowed by the config it was accepted under...
    const lenient = config({ WEBHOOK_MAX_ATTEMPTS: "5" });
    const strictPrefix = randomPrefix("webhooks-strict");
    const strictQueue = createWebhookQueue(redis, strictPrefix);
    cleanups.push(async () => {
      await strictQueue.obliterate({ force: true });
      await strictQueue.close();
      await deleteKeys(redis, strictPrefix);
    });
    // ...processed by a worker whose config has no allow list.
    startWorker(config({ WEBHOOK_ALLOW_CIDRS: "" }), { prefix: strictPrefix });
    const { deliveryId } = await deliveryFor(r.url, lenient, "goal.verified", strictQueue);

    const d = await settled(deliveryId, "dead");
    expect(d.log).toHaveLength(1);
    expect(d.log[0]).toMatchObject({ attempt: 1, statusCode: null });
    expect(d.log[0]!.error).toBe("refused: 127.0.0.1 is not a public address (loopback); add it to WEBHOOK_ALLOW_CIDRS to allow it");
    expect(d.lastError).toBe(d.log[0]!.error);
    // Unrecoverable: no retries despite 5 allowed attempts.
    await new Promise((res) => setTimeout(res, 300));
    expect(await prisma.deliveryAttempt.count({ where: { deliveryId } })).toBe(1);
    expect(r.received).toHaveLength(0);
    const [job] = await strictQueue.getJobs(["failed"]);
    expect(job?.attemptsMade).toBe(1);
  });

  it("ends dead, not stuck pending, when every try fails before an HTTP attempt (no signing secret)", async () => {
    const r = await receiver([200]);
    const cfg = config({ WEBHOOK_MAX_ATTEMPTS: "2" });
    startWorker(cfg);
    const { tenant, goalId, deliveryId } = await newDelivery(r.url);
    await prisma.webhookSecret.deleteMany({ where: { tenantId: tenant.tenant_id } });
    await enqueuePendingDeliveries(prisma, queue, cfg, goalId);
    const d = await settled(deliveryId, "dead");
    expect(d.lastError).toBe("LS_ERR_INTERNAL: no webhook secret to sign with");
    expect(r.received).toHaveLength(0);
    // Dead, so a redelivery is accepted (a stuck pending one would answer 409 forever).
    await expect(redeliver(prisma, queue, cfg, { tenantId: tenant.tenant_id, deliveryId })).resolves.toMatchObject({ status: "pending" });
  });

  it("connects to the address the guard approved, keeping the URL's host name in the Host header", async () => {
    const r = await receiver([204]);
    const cfg = config();
    // hooks.test resolves (for the guard) to the allowed loopback receiver; nothing else resolves it.
    let lookups = 0;
    startWorker(cfg, {
      lookup: async (host) => {
        lookups++;
        expect(host).toBe("hooks.test");
        return [{ address: "127.0.0.1", family: 4 }];
      },
    });
    const { deliveryId } = await deliveryFor(`http://hooks.test:${r.port}/in`, cfg);
    await settled(deliveryId, "delivered");
    expect(lookups).toBe(1);
    expect(r.received[0]).toMatchObject({ url: "/in", headers: { host: `hooks.test:${r.port}` } });
  });

  it("signs with the old and the new secret after a rotation", async () => {
    const r = await receiver([200]);
    const cfg = config();
    startWorker(cfg);
    const { tenant, goalId, deliveryId } = await newDelivery(r.url);
    const rotated = await rotateWebhookSecret(prisma, tenant.tenant_id, { overlapSeconds: 3600, secretBox: testSecretBox() });
    expect(rotated.secret).not.toBe(tenant.webhook_secret);
    expect(new Date(rotated.previous_valid_until).getTime()).toBeGreaterThan(Date.now() + 3500_000);
    await enqueuePendingDeliveries(prisma, queue, cfg, goalId);

    await settled(deliveryId, "delivered");
    const [got] = r.received;
    expect(String(got!.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(new Webhook(tenant.webhook_secret).verify(got!.body, headersOf(got!))).toBeTruthy();
    expect(new Webhook(rotated.secret).verify(got!.body, headersOf(got!))).toBeTruthy();
    const { tenant: stranger } = await tenantWithGoal(prisma, null);
    tenants.push(stranger.tenant_id);
    expect(() => new Webhook(stranger.webhook_secret).verify(got!.body, headersOf(got!))).toThrow(/No matching signature/);
  });

  it("stops signing with the old secret once the overlap is over", async () => {
    const r = await receiver([200]);
    const cfg = config();
    startWorker(cfg);
    const { tenant, goalId, deliveryId } = await newDelivery(r.url);
    const rotated = await rotateWebhookSecret(prisma, tenant.tenant_id, { overlapSeconds: 0, secretBox: testSecretBox() });
    await enqueuePendingDeliveries(prisma, queue, cfg, goalId);
    await settled(deliveryId, "delivered");
    const [got] = r.received;
    expect(String(got!.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(new Webhook(rotated.secret).verify(got!.body, headersOf(got!))).toBeTruthy();
    expect(() => new Webhook(tenant.webhook_secret).verify(got!.body, headersOf(got!))).toThrow(/No matching signature/);
  });
});

describe("reads and redelivery through the tenant", () => {
  it("another tenant sees neither the goal's deliveries nor the delivery", async () => {
    const cfg = config({ WEBHOOK_MAX_ATTEMPTS: "1" });
    const { goalId, deliveryId } = await newDelivery("http://127.0.0.1:1/hook", "goal.cancelled");
    const { tenant: other } = await tenantWithGoal(prisma, null);
    tenants.push(other.tenant_id);
    expect(await listDeliveries(prisma, { tenantId: other.tenant_id, goalId })).toBeNull();
    expect(await listDeliveries(prisma, { tenantId: other.tenant_id, goalId: "not-a-uuid" })).toBeNull();
    expect(await redeliver(prisma, queue, cfg, { tenantId: other.tenant_id, deliveryId })).toBeNull();
    expect(await redeliver(prisma, queue, cfg, { tenantId: other.tenant_id, deliveryId: "nope" })).toBeNull();
  });

  it("a delivery and its log are read in one snapshot: the attempt count always matches the log, while attempts are being recorded", async () => {
    const { tenant, goalId, deliveryId } = await newDelivery("http://127.0.0.1:1/hook", "goal.cancelled");
    // The worker's own shape of an attempt: the count and the log row land in one transaction.
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 150; i++) {
        await prisma.$transaction(async (tx) => {
          const row = await tx.webhookDelivery.update({ where: { id: deliveryId }, data: { attempts: { increment: 1 } }, select: { attempts: true } });
          await tx.deliveryAttempt.create({ data: { deliveryId, attempt: row.attempts, statusCode: 500, latencyMs: 1, error: null } });
        });
      }
      writing = false;
    })();
    const torn: string[] = [];
    let reads = 0;
    const reader = async () => {
      while (writing) {
        const [view] = (await listDeliveries(prisma, { tenantId: tenant.tenant_id, goalId }))!;
        reads++;
        if (view!.log.length !== view!.attempts) torn.push(`attempts ${view!.attempts}, log ${view!.log.length}`);
        const one = (await loadDelivery(prisma, { tenantId: tenant.tenant_id, deliveryId }))!;
        if (one.log.length !== one.attempts) torn.push(`attempts ${one.attempts}, log ${one.log.length}`);
      }
    };
    await Promise.all([writer, reader(), reader(), reader()]);
    expect(reads).toBeGreaterThan(10);
    expect(torn).toEqual([]);
  });
});

describe("issue 16.9: every attempt that reached the network is in the log", () => {
  // Fast lock expiry and stalled-job checks, so that a killed worker's job is handed on in seconds.
  const FAST = { lockDurationMs: 2000, stalledIntervalMs: 1000 };

  it("a worker SIGKILLed 3 ms after the receiver got the event leaves that attempt visible; the retry is attempt 2, same webhook-id", async () => {
    const env = { WEBHOOK_ALLOW_CIDRS: "127.0.0.1/32", WEBHOOK_RETRY_SCHEDULE: "50ms", WEBHOOK_TIMEOUT_MS: "3000", WEBHOOK_MAX_ATTEMPTS: "3" };
    const cfg = config(env);
    const p = randomPrefix("webhooks-kill");
    const q = createWebhookQueue(redis, p);
    cleanups.push(async () => {
      await q.obliterate({ force: true });
      await q.close();
      await deleteKeys(redis, p);
    });
    const child = spawnTs("packages/webhooks/test/worker-process.ts", { ...process.env }, [JSON.stringify({ prefix: p, env, ...FAST })]);
    cleanups.push(async () => {
      child.child.kill("SIGKILL");
      await child.exited;
    });
    await child.waitFor(/delivery worker ready/, 60_000);

    // The receiver takes the first request, then the worker that sent it dies before the answer.
    const received: { id: string; body: string }[] = [];
    const srv = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ id: String(req.headers["webhook-id"]), body: Buffer.concat(chunks).toString("utf8") });
        if (received.length > 1) return void res.writeHead(200).end();
        setTimeout(() => {
          child.child.kill("SIGKILL");
          void child.exited.then(() => res.writeHead(200).end());
        }, 3);
      });
    });
    await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
    cleanups.push(
      () =>
        new Promise<void>((r) => {
          srv.closeAllConnections();
          srv.close(() => r());
        }),
    );
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;
    const { tenant, goalId, deliveryId } = await deliveryFor(url, cfg, "goal.verified", q);

    expect((await child.exited).signal).toBe("SIGKILL");
    expect(received).toHaveLength(1);
    // Nobody has picked the job up yet: the crash itself left the attempt in the log.
    const atCrash = await listDeliveries(prisma, { tenantId: tenant.tenant_id, goalId });
    expect(atCrash![0]).toMatchObject({ status: "pending", attempts: 1 });
    expect(atCrash![0]!.log.map((a) => [a.attempt, a.status_code, a.error])).toEqual([[1, null, IN_FLIGHT]]);

    // A second worker takes the stalled job over and sends the same message again.
    const worker = createDeliveryWorker({ prisma, connection: redis, prefix: p, config: cfg, secretBox: testSecretBox(), log, ...FAST });
    cleanups.push(() => worker.close());
    const d = await settled(deliveryId, "delivered");
    expect(d.log.map((a) => [a.attempt, a.statusCode, a.error])).toEqual([
      [1, null, NO_OUTCOME],
      [2, 200, null],
    ]);
    expect(d.attempts).toBe(2);
    expect(received).toHaveLength(2);
    expect(received.map((r) => r.id)).toEqual([d.messageId, d.messageId]);
    expect(received[1]!.body).toBe(received[0]!.body);
    const [job] = await q.getJobs(["completed"]);
    expect([job?.stalledCounter, job?.attemptsMade]).toEqual([1, 1]);
  });

  it("a job whose every try stalled marks the delivery dead without another POST, and settles the attempt left in flight", async () => {
    const r = await receiver([200]);
    const cfg = config({ WEBHOOK_MAX_ATTEMPTS: "2" });
    const { deliveryId } = await newDelivery(r.url);
    await prisma.webhookDelivery.update({ where: { id: deliveryId }, data: { attempts: 2 } });
    for (const attempt of [1, 2]) await prisma.deliveryAttempt.create({ data: { deliveryId, attempt, statusCode: null, latencyMs: 0, error: attempt === 1 ? NO_OUTCOME : IN_FLIGHT } });
    // What BullMQ hands the worker after two stalls of a two-attempt job (its data as the queue stores it).
    const job = { data: { deliveryId }, attemptsMade: 0, stalledCounter: 2, opts: { attempts: 2 } } as unknown as Job;

    await expect(deliver({ prisma, connection: redis, prefix, config: cfg, secretBox: testSecretBox(), log }, job)).rejects.toBeInstanceOf(UnrecoverableError);
    const d = await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: deliveryId }, include: { log: { orderBy: { attempt: "asc" } } } });
    expect(d).toMatchObject({ status: "dead", attempts: 2 });
    expect(d.lastError).toBe("attempts exhausted: the worker stopped during 2 of 2 tries");
    expect(d.log.map((a) => a.error)).toEqual([NO_OUTCOME, NO_OUTCOME]);
    expect(r.received).toHaveLength(0);
  });
});
