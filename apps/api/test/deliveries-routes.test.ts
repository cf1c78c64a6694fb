// The delivery routes through the real API (apps/api/src/app.ts, built by the loop harness without a
// runner), with the real auth hook, the real Postgres and a real queue. The end-to-end behaviour (a real
// runner, a real receiver) is in tests/e2e/webhooks.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeWebhookSecrets } from "@loopsmith/db";
import { deliveryList, deliveryView, rotatedSecret } from "@loopsmith/schemas";
import { createDelivery } from "@loopsmith/webhooks";
import { tenantWithGoal } from "../../../packages/webhooks/test/support";
import { startLoop, type Loop } from "../../../tests/support/loop";

const tenants: string[] = [];
let loop: Loop;
let app: Loop["app"];
let prisma: Loop["prisma"];
let queue: Loop["webhookQueue"];

beforeAll(async () => {
  loop = await startLoop({ runner: false, env: { WEBHOOK_MAX_ATTEMPTS: "2", WEBHOOK_SECRET_OVERLAP_SECONDS: "600" } });
  ({ app, prisma, webhookQueue: queue } = loop);
  tenants.push(loop.tenant.tenant_id);
  await app.ready();
});

afterAll(async () => {
  if (tenants.length) await prisma.tenant.deleteMany({ where: { id: { in: tenants } } });
  await loop?.close();
});

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
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, loop.secretBox)).toEqual([body.secret, tenant.webhook_secret]);
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, loop.secretBox, new Date(until + 1))).toEqual([body.secret]);
  });
});

describe("OpenAPI", () => {
  it("documents the three routes under the webhooks tag with their responses", () => {
    const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { tags: string[]; summary: string; responses: Record<string, unknown> }>> };
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
