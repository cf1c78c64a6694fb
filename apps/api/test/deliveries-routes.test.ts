// The delivery routes through a Fastify instance of their own (app.ts registers them in the real API),
// with the real auth hook, the real Postgres and a real queue. The end-to-end behaviour (a real runner, a
// real receiver) is in tests/e2e/webhooks.test.ts.
import { randomBytes } from "node:crypto";
import fastifySwagger from "@fastify/swagger";
import Fastify, { type FastifyInstance } from "fastify";
import {
  hasZodFastifySchemaValidationErrors,
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import { LoopSmithError } from "@loopsmith/core";
import { activeWebhookSecrets, createGoal, createPrisma, createTenant, type PrismaClient } from "@loopsmith/db";
import { deliveryList, deliveryView, rotatedSecret } from "@loopsmith/schemas";
import { createDelivery, createWebhookQueue, webhookConfigSchema, type WebhookQueue } from "@loopsmith/webhooks";
import { DATABASE_URL, randomPrefix, REDIS_URL } from "../../../tests/support/services";
import { registerAuth } from "../src/auth";
import { deliveryRoutes } from "../src/routes/deliveries";

const prisma = createPrisma(DATABASE_URL);
const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
const prefix = randomPrefix("webhooks-routes");
const config = webhookConfigSchema.parse({ WEBHOOK_MAX_ATTEMPTS: "2", WEBHOOK_SECRET_OVERLAP_SECONDS: "600" });
const tenants: string[] = [];
let queue: WebhookQueue;
let app: FastifyInstance;

beforeAll(async () => {
  queue = createWebhookQueue(redis, prefix);
  const f = Fastify({ logger: false }).withTypeProvider<ZodTypeProvider>();
  f.setValidatorCompiler(validatorCompiler);
  f.setSerializerCompiler(serializerCompiler);
  await f.register(fastifySwagger, { openapi: { info: { title: "t", version: "0" } }, transform: jsonSchemaTransform, transformObject: jsonSchemaTransformObject });
  f.setErrorHandler((err, _req, reply) => {
    if (err instanceof LoopSmithError) return reply.status(err.status).send(err.toBody());
    if (hasZodFastifySchemaValidationErrors(err)) return reply.status(400).send(new LoopSmithError("LS_ERR_VALIDATION").toBody());
    throw err;
  });
  registerAuth(f as unknown as FastifyInstance, () => prisma);
  await f.register(deliveryRoutes, { deps: () => ({ prisma, webhookQueue: queue, webhooks: config }) });
  await f.ready();
  app = f as unknown as FastifyInstance;
});

afterAll(async () => {
  await app?.close();
  await queue?.obliterate({ force: true });
  await queue?.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  if (tenants.length) await prisma.tenant.deleteMany({ where: { id: { in: tenants } } });
  await prisma.$disconnect();
  await redis.quit();
});

/** A tenant and a goal of it (scripted model, never run) whose webhook points at `url`. */
async function tenantWithGoal(prisma: PrismaClient, url: string) {
  const tenant = await createTenant(prisma, { name: `deliveries-routes-${randomBytes(3).toString("hex")}` });
  const goal = await createGoal(prisma, {
    tenantId: tenant.tenant_id,
    objective: "Summarise the CSV",
    success: null,
    checks: [],
    inputs: [],
    maxAttempts: 3,
    budgets: {},
    model: { provider: "scripted", script: { plan: {}, generate: {}, inspect: [], refine: [] } },
    webhook: { url },
  });
  return { tenant, goalId: goal.id };
}

async function fixture(status: "pending" | "dead") {
  const { tenant, goalId } = await tenantWithGoal(prisma, "https://93.184.216.34/hook");
  tenants.push(tenant.tenant_id);
  const goal = await prisma.goal.findUniqueOrThrow({ where: { id: goalId } });
  const deliveryId = (await prisma.$transaction((tx) => createDelivery(tx, goal, "goal.failed")))!;
  if (status === "dead") {
    await prisma.webhookDelivery.update({ where: { id: deliveryId }, data: { status: "dead", attempts: 2, lastError: "HTTP 503" } });
    await prisma.deliveryAttempt.createMany({
      data: [
        { deliveryId, attempt: 2, statusCode: 503, latencyMs: 12, error: "HTTP 503" },
        { deliveryId, attempt: 1, statusCode: null, latencyMs: 3000, error: "timed out after 3000 ms" },
      ],
    });
  }
  const auth = { authorization: `Bearer ${tenant.api_key}` };
  return { tenant, goalId, deliveryId, auth };
}

describe("GET /goals/:id/deliveries", () => {
  it("lists the goal's deliveries, newest first, each log oldest first", async () => {
    const { goalId, deliveryId, auth } = await fixture("dead");
    const goal = await prisma.goal.findUniqueOrThrow({ where: { id: goalId } });
    const newer = (await prisma.$transaction((tx) => createDelivery(tx, goal, "goal.verified")))!;
    const res = await app.inject({ method: "GET", url: `/goals/${goalId}/deliveries`, headers: auth });
    expect(res.statusCode).toBe(200);
    const body = deliveryList.parse(res.json());
    expect(body.deliveries.map((d) => [d.id, d.event, d.status])).toEqual([
      [newer, "goal.verified", "pending"],
      [deliveryId, "goal.failed", "dead"],
    ]);
    expect(body.deliveries[1]).toMatchObject({ goal_id: goalId, url: "https://93.184.216.34/hook", attempts: 2, last_error: "HTTP 503", delivered_at: null });
    expect(body.deliveries[1]!.log).toEqual([
      { attempt: 1, status_code: null, latency_ms: 3000, error: "timed out after 3000 ms", at: expect.any(String) },
      { attempt: 2, status_code: 503, latency_ms: 12, error: "HTTP 503", at: expect.any(String) },
    ]);
    expect(body.deliveries[0]!.message_id).toMatch(/^msg_[0-9a-f]{32}$/);
  });

  it("answers 404 for another tenant's goal and for a non-UUID id, 401 without a key", async () => {
    const { goalId } = await fixture("pending");
    const other = await fixture("pending");
    for (const url of [`/goals/${goalId}/deliveries`, "/goals/not-a-uuid/deliveries"]) {
      const res = await app.inject({ method: "GET", url, headers: other.auth });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: { code: "LS_ERR_NOT_FOUND" } });
    }
    const anon = await app.inject({ method: "GET", url: `/goals/${goalId}/deliveries` });
    expect(anon.statusCode).toBe(401);
    expect(anon.json()).toMatchObject({ error: { code: "LS_ERR_UNAUTHORIZED" } });
  });
});

describe("POST /deliveries/:id/redeliver", () => {
  it("requeues a dead delivery: 202 with status pending and the log kept", async () => {
    const { deliveryId, auth } = await fixture("dead");
    const res = await app.inject({ method: "POST", url: `/deliveries/${deliveryId}/redeliver`, headers: auth });
    expect(res.statusCode).toBe(202);
    const view = deliveryView.parse(res.json());
    expect(view).toMatchObject({ id: deliveryId, status: "pending", last_error: null, attempts: 2 });
    expect(view.log).toHaveLength(2);
    const jobs = await queue.getJobs(["waiting", "delayed"]);
    const job = jobs.find((j) => j.data.deliveryId === deliveryId);
    expect(job?.id).toMatch(new RegExp(`^${deliveryId}-r\\d+$`));
    expect(job?.opts.attempts).toBe(2);
  });

  it("answers 409 while a delivery is pending, 404 for another tenant's and for unknown ids", async () => {
    const { deliveryId, auth } = await fixture("pending");
    const busy = await app.inject({ method: "POST", url: `/deliveries/${deliveryId}/redeliver`, headers: auth });
    expect(busy.statusCode).toBe(409);
    expect(busy.json()).toMatchObject({ error: { code: "LS_ERR_DELIVERY_IN_PROGRESS" } });

    const dead = await fixture("dead");
    for (const id of [dead.deliveryId, "00000000-0000-4000-8000-000000000000", "nope"]) {
      const res = await app.inject({ method: "POST", url: `/deliveries/${id}/redeliver`, headers: auth });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: { code: "LS_ERR_NOT_FOUND" } });
    }
    expect((await prisma.webhookDelivery.findUniqueOrThrow({ where: { id: dead.deliveryId } })).status).toBe("dead");
  });
});

describe("POST /webhook-secrets/rotate", () => {
  it("issues a new secret; the old one stays active for WEBHOOK_SECRET_OVERLAP_SECONDS", async () => {
    const { tenant, auth } = await fixture("pending");
    const before = Date.now();
    const res = await app.inject({ method: "POST", url: "/webhook-secrets/rotate", headers: auth });
    expect(res.statusCode).toBe(200);
    const body = rotatedSecret.parse(res.json());
    expect(body.secret).toMatch(/^whsec_/);
    const until = new Date(body.previous_valid_until).getTime();
    expect(until).toBeGreaterThanOrEqual(before + 600_000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 600_000 + 1000);
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id)).toEqual([body.secret, tenant.webhook_secret]);
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, new Date(until + 1))).toEqual([body.secret]);
  });
});

describe("OpenAPI", () => {
  it("documents the three routes under the webhooks tag with their responses", () => {
    const doc = (app as unknown as { swagger: () => { paths: Record<string, Record<string, { tags: string[]; summary: string; responses: Record<string, unknown> }>> } }).swagger();
    const ops = [
      [doc.paths["/goals/{id}/deliveries"]?.get, ["200", "401", "404", "429"]],
      [doc.paths["/deliveries/{id}/redeliver"]?.post, ["202", "401", "404", "409", "429"]],
      [doc.paths["/webhook-secrets/rotate"]?.post, ["200", "401", "429"]],
    ] as const;
    for (const [op, codes] of ops) {
      expect(op?.tags).toEqual(["webhooks"]);
      expect(op?.summary).toBeTruthy();
      expect(Object.keys(op?.responses ?? {}).sort()).toEqual([...codes]);
    }
  });
});
