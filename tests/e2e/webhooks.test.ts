// Webhooks end to end: goals submitted through the HTTP API (app.inject), a real runner whose delivery
// worker POSTs to a real node:http receiver on loopback, against real Postgres, Redis and Docker.
// Signatures are verified only with the `standardwebhooks` package, never with our own signing code.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTenant, type CreatedTenant } from "@loopsmith/db";
import { announceMove, GONE } from "@loopsmith/webhooks";
import type { DeliveryView, GoalView } from "@loopsmith/schemas";
import { startReceiver as startTestReceiver, type Answer, type Received, type Receiver } from "../../packages/webhooks/test/support";
import { demoGoal, EXPECTED_REPORT } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";
import { closedPort } from "../support/services";

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

/** The webhooks package's test receiver, closed after each test. */
async function startReceiver(statuses: Answer[], port?: number): Promise<Receiver> {
  const r = await startTestReceiver(statuses, port);
  receivers.push(r);
  return r;
}

/** Verifies one received request with `secret` through standardwebhooks; throws when it does not verify. */
function verify(secret: string, r: Received): WebhookEvent {
  return new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as WebhookEvent;
}

interface WebhookEvent {
  type: string;
  timestamp: string;
  data: GoalView;
}

/** A well-formed whsec_ secret nobody signs with: the negative control of every verification. */
const strangerSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

async function deliveries(loop: Loop, goalId: string, key?: string): Promise<DeliveryView[]> {
  const res = await loop.request("GET", `/goals/${goalId}/deliveries`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as unknown as { deliveries: DeliveryView[] }).deliveries;
}

/** Polls GET /goals/:id/deliveries until the goal's (single) delivery has `status`. */
async function waitForDelivery(loop: Loop, goalId: string, status: DeliveryView["status"], o: { key?: string; timeoutMs?: number } = {}) {
  const deadline = Date.now() + (o.timeoutMs ?? 20_000);
  for (;;) {
    const list = await deliveries(loop, goalId, o.key);
    if (list.length > 0 && list[0]!.status === status) return list;
    if (Date.now() > deadline) throw new Error(`delivery of goal ${goalId} not ${status} in time: ${JSON.stringify(list)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The parts of a goal that no longer change once it rests. */
const stable = (g: GoalView) => ({
  id: g.id,
  state: g.state,
  tape: g.tape,
  transitions: g.transitions,
  report: g.report,
  failure_report: g.failure_report,
  attempts: g.attempts,
});

async function submit(loop: Loop, body: unknown, key?: string): Promise<string> {
  const res = await loop.post(body, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
}

/** A goal cancelled at once: its goal.cancelled delivery needs no sandbox run. */
async function cancelled(loop: Loop, webhook: Record<string, unknown>): Promise<string> {
  const id = await submit(loop, demoGoal({ webhook }));
  expect((await loop.request("POST", `/goals/${id}/cancel`)).status).toBe(200);
  return id;
}

describe("webhooks through the API, with a runner and a real receiver", () => {
  let loop: Loop;
  beforeAll(async () => {
    loop = await startLoop();
  });
  afterAll(async () => {
    await loop?.close();
  });

  it("retries a failing receiver until it answers 200: one goal.verified, same body and webhook-id every time, signed with the tenant's secret", async () => {
    const receiver = await startReceiver([500, 500, 500, 200]);
    const startedAt = Date.now();
    const goal = await loop.run(demoGoal({ webhook: { url: receiver.url } }));
    expect(goal.state).toBe("verified");

    const [delivery, ...others] = await waitForDelivery(loop, goal.id, "delivered");
    expect(others).toEqual([]);
    expect(delivery).toMatchObject({ goal_id: goal.id, event: "goal.verified", url: receiver.url, status: "delivered", attempts: 4, last_error: null });
    expect(delivery!.delivered_at).not.toBeNull();
    expect(delivery!.message_id).toMatch(/^msg_/);
    expect(delivery!.log.map((a) => [a.attempt, a.status_code, a.error])).toEqual([
      [1, 500, "HTTP 500"],
      [2, 500, "HTTP 500"],
      [3, 500, "HTTP 500"],
      [4, 200, null],
    ]);

    // Exactly the four logged attempts reached the receiver, each the same event under the same id.
    expect(receiver.received).toHaveLength(4);
    const first = receiver.received[0]!;
    for (const r of receiver.received) {
      expect(r.method).toBe("POST");
      expect(r.url).toBe("/hook");
      expect(r.headers["content-type"]).toBe("application/json");
      expect(r.headers["user-agent"]).toBe("LoopSmith-Webhooks/1");
      expect(r.headers["webhook-id"]).toBe(delivery!.message_id);
      expect(r.body).toBe(first.body);
      // Every attempt is signed (with its own timestamp) and verifies with the tenant's secret...
      expect(verify(loop.tenant.webhook_secret, r)).toEqual(JSON.parse(first.body));
      // ...and with no other secret, nor over other bytes.
      expect(() => verify(strangerSecret(), r)).toThrow();
      expect(() => verify(loop.tenant.webhook_secret, { ...r, body: r.body.replace('"verified"', '"failed"') })).toThrow();
    }

    const event = verify(loop.tenant.webhook_secret, receiver.received[3]!);
    expect(Object.keys(event).sort()).toEqual(["data", "timestamp", "type"]);
    expect(event.type).toBe("goal.verified");
    expect(new Date(event.timestamp).toISOString()).toBe(event.timestamp);
    expect(Date.parse(event.timestamp)).toBeGreaterThanOrEqual(startedAt);
    expect(Date.parse(event.timestamp)).toBeLessThanOrEqual(Date.now());
    const now = await loop.get(goal.id);
    expect(now.status).toBe(200);
    expect(stable(event.data)).toEqual(stable(now.body));
    expect(event.data.state).toBe("verified");
    expect(event.data.report).toEqual(EXPECTED_REPORT);
  });

  it("a failed goal sends goal.failed with its failure report; a cancelled goal sends goal.cancelled", async () => {
    const failedReceiver = await startReceiver([204]);
    const failed = await loop.run(demoGoal({ max_attempts: 1, webhook: { url: failedReceiver.url } }));
    expect(failed.state).toBe("failed");
    expect(failed.failure_reason).toBe("budget_attempts");
    const [fd, ...fOthers] = await waitForDelivery(loop, failed.id, "delivered");
    expect(fOthers).toEqual([]);
    expect(fd).toMatchObject({ event: "goal.failed", attempts: 1 });
    expect(failedReceiver.received).toHaveLength(1);
    const fe = verify(loop.tenant.webhook_secret, failedReceiver.received[0]!);
    expect(fe.type).toBe("goal.failed");
    expect(fe.data.state).toBe("failed");
    expect(fe.data.failure_report?.reason).toBe("budget_attempts");
    expect(fe.data.report).toBeNull();
    expect(stable(fe.data)).toEqual(stable((await loop.get(failed.id)).body));

    const cancelReceiver = await startReceiver([200]);
    const id = await submit(loop, demoGoal({ webhook: { url: cancelReceiver.url } }));
    const cancel = await loop.request("POST", `/goals/${id}/cancel`);
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    expect(cancel.body.state).toBe("cancelled");
    const [cd, ...cOthers] = await waitForDelivery(loop, id, "delivered");
    expect(cOthers).toEqual([]);
    expect(cd).toMatchObject({ event: "goal.cancelled", attempts: 1 });
    expect(cancelReceiver.received).toHaveLength(1);
    const ce = verify(loop.tenant.webhook_secret, cancelReceiver.received[0]!);
    expect(ce.type).toBe("goal.cancelled");
    expect(ce.data.state).toBe("cancelled");
    expect(ce.data.tape).toMatch(/→ cancelled$/);
    expect(ce.data.failure_report).toBeNull();
    expect(stable(ce.data)).toEqual(stable((await loop.get(id)).body));
  });

  it("after POST /webhook-secrets/rotate a delivery verifies with both the old and the new secret", async () => {
    const t: CreatedTenant = await createTenant(loop.prisma, { name: `${loop.prefix}-rotate`, secretBox: loop.secretBox });
    const old = t.webhook_secret;
    const before = Date.now();
    const rotated = await loop.request("POST", "/webhook-secrets/rotate", { key: t.api_key });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const secret = rotated.body.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(secret).not.toBe(old);
    // The default overlap: a day.
    const until = Date.parse(rotated.body.previous_valid_until as string);
    expect(until).toBeGreaterThanOrEqual(before + 86_400_000 - 1000);
    expect(until).toBeLessThanOrEqual(Date.now() + 86_400_000 + 1000);

    const receiver = await startReceiver([200]);
    const id = await submit(loop, demoGoal({ webhook: { url: receiver.url } }), t.api_key);
    expect((await loop.request("POST", `/goals/${id}/cancel`, { key: t.api_key })).status).toBe(200);
    await waitForDelivery(loop, id, "delivered", { key: t.api_key });
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(String(r.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    const withNew = verify(secret, r);
    const withOld = verify(old, r);
    expect(withNew).toEqual(withOld);
    expect(withNew.type).toBe("goal.cancelled");
    expect(withNew.data.id).toBe(id);
    expect(() => verify(strangerSecret(), r)).toThrow();
    // The first loop's tenant is not affected by another tenant's rotation.
    expect(() => verify(loop.tenant.webhook_secret, r)).toThrow();
  });

  it("issue 13: a receiver answering 410 gets one attempt; the delivery is dead and the goal's webhook disabled, so later events make no delivery", async () => {
    const receiver = await startReceiver([410, 200]);
    const id = await cancelled(loop, { url: receiver.url });
    const [gone, ...others] = await waitForDelivery(loop, id, "dead");
    expect(others).toEqual([]);
    expect(gone).toMatchObject({ event: "goal.cancelled", attempts: 1, last_error: GONE });
    expect(gone!.log.map((a) => [a.attempt, a.status_code, a.error])).toEqual([[1, 410, GONE]]);
    // No retry is scheduled: the job failed for good after one try.
    const job = await loop.webhookQueue.getJob(gone!.id);
    expect(await job?.getState()).toBe("failed");
    expect(job?.attemptsMade).toBe(1);
    expect(receiver.received).toHaveLength(1);
    const view = (await loop.get(id)).body;
    expect(view.webhook).toMatchObject({ url: receiver.url, payload: "full", disabled_at: expect.any(String) });
    // Any later move of this goal announces nothing.
    const goal = await loop.prisma.goal.findUniqueOrThrow({ where: { id } });
    expect(await loop.prisma.$transaction((tx) => announceMove(tx, goal, "failed"))).toBeNull();
  });

  it("issue 13: a Retry-After longer than the schedule's delay is waited for", async () => {
    const receiver = await startReceiver([{ status: 503, headers: { "retry-after": "1" } }, 200]);
    const id = await cancelled(loop, { url: receiver.url });
    const [delivered] = await waitForDelivery(loop, id, "delivered");
    expect(delivered!.log.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, 503],
      [2, 200],
    ]);
    expect(receiver.received).toHaveLength(2);
    // The schedule alone would have retried after 100 ms ± 20 %.
    expect(receiver.received[1]!.at - receiver.received[0]!.at).toBeGreaterThanOrEqual(1000);
  });

  it("issue 13: payload: thin sends ids, state and links, signed like any delivery", async () => {
    const receiver = await startReceiver([200]);
    const id = await cancelled(loop, { url: receiver.url, payload: "thin" });
    await waitForDelivery(loop, id, "delivered");
    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(() => verify(strangerSecret(), r)).toThrow();
    const event = verify(loop.tenant.webhook_secret, r) as unknown as { type: string; timestamp: string; data: Record<string, unknown> };
    expect(event.type).toBe("goal.cancelled");
    expect(event.data).toEqual({
      id,
      state: "cancelled",
      verified: false,
      failure_reason: null,
      version: expect.any(Number),
      links: { goal: `/goals/${id}`, deliveries: `/goals/${id}/deliveries`, events: `/goals/${id}/events`, artifacts: `/goals/${id}/artifacts`, receipt: null },
    });
    expect(Buffer.byteLength(r.body)).toBeLessThan(1024);
    expect((await loop.get(id)).body.webhook).toEqual({ url: receiver.url, payload: "thin", disabled_at: null });
  });
});

describe("a dead receiver, then a redelivery", () => {
  let loop: Loop;
  beforeAll(async () => {
    loop = await startLoop({ env: { WEBHOOK_MAX_ATTEMPTS: "3" } });
  });
  afterAll(async () => {
    await loop?.close();
  });

  it("ends dead after WEBHOOK_MAX_ATTEMPTS; a redelivery once the receiver is up continues the log at attempt 4", async () => {
    const port = await closedPort();
    const url = `http://127.0.0.1:${port}/hook`;
    const goal = await loop.run(demoGoal({ webhook: { url } }));
    expect(goal.state).toBe("verified");

    const [dead, ...others] = await waitForDelivery(loop, goal.id, "dead");
    expect(others).toEqual([]);
    expect(dead).toMatchObject({ event: "goal.verified", url, status: "dead", attempts: 3, delivered_at: null });
    expect(dead!.last_error).toMatch(/ECONNREFUSED/);
    expect(dead!.log.map((a) => a.attempt)).toEqual([1, 2, 3]);
    for (const a of dead!.log) {
      expect(a.status_code).toBeNull();
      expect(a.error).toMatch(/ECONNREFUSED/);
    }

    // Another tenant cannot redeliver it, nor even see it.
    const other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
    const foreign = await loop.request("POST", `/deliveries/${dead!.id}/redeliver`, { key: other.api_key });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toMatchObject({ error: { code: "LS_ERR_NOT_FOUND" } });
    expect((await loop.request("GET", `/goals/${goal.id}/deliveries`, { key: other.api_key })).status).toBe(404);
    expect((await deliveries(loop, goal.id))[0]).toMatchObject({ status: "dead", attempts: 3 });

    const receiver = await startReceiver([200], port);
    const redeliveredAt = Date.now();
    const res = await loop.request("POST", `/deliveries/${dead!.id}/redeliver`);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ id: dead!.id, status: "pending", attempts: 3, message_id: dead!.message_id });

    const [delivered] = await waitForDelivery(loop, goal.id, "delivered");
    expect(delivered).toMatchObject({ id: dead!.id, status: "delivered", attempts: 4, last_error: null });
    expect(delivered!.delivered_at).not.toBeNull();
    expect(delivered!.log.map((a) => [a.attempt, a.status_code])).toEqual([
      [1, null],
      [2, null],
      [3, null],
      [4, 200],
    ]);
    expect(delivered!.log[3]!.error).toBeNull();

    expect(receiver.received).toHaveLength(1);
    const r = receiver.received[0]!;
    expect(r.headers["webhook-id"]).toBe(dead!.message_id);
    const event = verify(loop.tenant.webhook_secret, r);
    expect(event.type).toBe("goal.verified");
    // The payload stored at the first attempt, not one rebuilt for the redelivery.
    expect(Date.parse(event.timestamp)).toBeLessThan(redeliveredAt);
    expect(Date.parse(event.timestamp)).toBeLessThanOrEqual(Date.parse(dead!.log[0]!.at));
    expect(stable(event.data)).toEqual(stable((await loop.get(goal.id)).body));
  });
});

describe("the SSRF guard at submit", () => {
  let loop: Loop;
  beforeAll(async () => {
    // An empty WEBHOOK_ALLOW_CIDRS counts as unset: nothing but public addresses is allowed.
    loop = await startLoop({ env: { WEBHOOK_ALLOW_CIDRS: "" }, runner: false });
  });
  afterAll(async () => {
    await loop?.close();
  });

  it("refuses loopback, private, link-local (metadata) and localhost URLs with 400 LS_ERR_WEBHOOK_URL and creates no goal", async () => {
    const urls = [
      "http://127.0.0.1:9999/x",
      "http://10.0.0.1/x",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]/x",
      "http://localhost/x",
      // IPv4-compatible IPv6 (deprecated ::/96), which ipaddr.js alone calls unicast.
      "http://[::127.0.0.1]/x",
    ];
    for (const url of urls) {
      const res = await loop.post(demoGoal({ webhook: { url } }));
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(400);
      const error = res.body.error as { code: string; message: string; details: { path: string; message: string }[] };
      expect(error.code, url).toBe("LS_ERR_WEBHOOK_URL");
      expect(error.details, url).toEqual([{ path: "body.webhook.url", message: expect.stringMatching(/not a public address|does not resolve to a public address/) }]);
      // Issue 17: what the server's resolver says about a name is not echoed back.
      if (url.includes("localhost")) expect(JSON.stringify(res.body), url).not.toMatch(/127\.0\.0\.1|::1/);
    }
    // Ports other than 80, 443 and 1024-65535 are refused, even on a public address.
    const ssh = await loop.post(demoGoal({ webhook: { url: "http://93.184.216.34:22/x" } }));
    expect(ssh.status).toBe(400);
    expect(ssh.body.error).toMatchObject({ code: "LS_ERR_WEBHOOK_URL", details: [{ path: "body.webhook.url", message: "port 22 is not allowed; use 80, 443 or 1024-65535" }] });
    expect(await loop.prisma.goal.count({ where: { tenantId: loop.tenant.tenant_id } })).toBe(0);

    // The same goal without a webhook is accepted: the URL alone was the reason.
    const id = await submit(loop, demoGoal());
    expect((await loop.request("POST", `/goals/${id}/cancel`)).status).toBe(200);
    expect(await loop.prisma.goal.count({ where: { tenantId: loop.tenant.tenant_id } })).toBe(1);
  });
});
