// issue 17.3: one tenant must not starve the others. Real Postgres, Redis and Docker; the goals really
// run (scripted model, real sandbox), the webhooks really go out over loopback, the streams are read over
// a real socket. Each bound below is stated as a constant, with what the old code measured beside it.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, type CreatedTenant } from "@loopsmith/db";
import { goalStepJob, type DeliveryView } from "@loopsmith/schemas";
import { startReceiver, type Receiver } from "../../packages/webhooks/test/support";
import { demoGoal, INSPECT_VERIFIED, program, SCRIPT_CORRECT, scriptedGoal } from "../../scripts/demo/scenario";
import { hostileGoal, startLoop, type GoalView, type Loop } from "../support/loop";

const code = (body: Record<string, unknown>) => (body.error as { code: string } | undefined)?.code;

describe("goals: a burst of one tenant's long goals does not hold back another tenant's goal", () => {
  // One runner slot, a cap of one stepping goal per tenant. Tenant A submits BURST goals whose program
  // runs for SLEEP_S each; then tenant B submits one ordinary goal.
  const BURST = 12;
  const SLEEP_S = 3;
  // The bound, in work: B's program runs after at most CAP + 1 of A's programs (the one stepping when B
  // came, and the next, admitted when it ended). Old code: after all BURST of them, since each of B's
  // steps queued behind one step of every one of A's goals. In time: B's goal ends within BOUND_MS of its
  // submission, the least the old code could take (its EXECUTE followed BURST sleeps of SLEEP_S on the one
  // slot), however fast the machine; measured now: 8-21 s on this 2-core machine at load 2-15, most of it
  // B's own steps and A's first one.
  const CAP = 1;
  const BOUND_MS = BURST * SLEEP_S * 1000;
  let loop: Loop;
  let b: CreatedTenant;
  beforeAll(async () => {
    loop = await startLoop({ env: { TENANT_MAX_ACTIVE_GOALS: String(CAP), TENANT_DEFER_MS: "200" } });
    b = await createTenant(loop.prisma, { name: `${loop.prefix}-b`, secretBox: loop.secretBox });
  });
  afterAll(async () => {
    await loop?.close();
  });

  it("B's program runs after at most CAP + 1 of A's and B is verified within the bound; A's waiting goals spend no tries", async () => {
    const burst: string[] = [];
    for (let i = 0; i < BURST; i++) {
      const res = await loop.post(hostileGoal(`import time\ntime.sleep(${SLEEP_S})\n`));
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      burst.push(res.body.id as string);
    }
    const submitted = Date.now();
    // Right first time: plan, generate, execute, inspect, verified.
    const res = await loop.post(scriptedGoal({ generate: program(SCRIPT_CORRECT), inspect: [INSPECT_VERIFIED] }), { key: b.api_key });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const bId = res.body.id as string;
    let bGoal: GoalView;
    for (;;) {
      bGoal = (await loop.get(bId, { key: b.api_key })).body;
      if (!["plan", "generate", "execute", "inspect", "refine"].includes(bGoal.state)) break;
      expect(Date.now() - submitted, bGoal.tape).toBeLessThan(BOUND_MS + 10_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    const tookMs = Date.parse(bGoal.finished_at ?? "") - submitted;
    expect(bGoal.tape).toBe("plan → generate → execute → inspect → verified");

    const ranAt = (g: GoalView) => Date.parse(g.transitions.find((t) => t.from === "execute")?.at ?? "");
    const views = await Promise.all(burst.map(async (id) => (await loop.get(id)).body));
    const before = views.filter((v) => ranAt(v) < ranAt(bGoal)).length;
    const timeline = views.map((v, i) => `A${i + 1}: ${v.transitions.map((t) => `${t.to}@${Date.parse(t.at) - submitted}`).join(" ")}`);
    expect(before, `B's program ran after ${before} of A's programs; B: ${bGoal.transitions.map((t) => `${t.to}@${Date.parse(t.at) - submitted}`).join(" ")}\n${timeline.join("\n")}`).toBeLessThanOrEqual(CAP + 1);
    expect(tookMs, timeline.join("\n")).toBeLessThan(BOUND_MS);
    // And A's third goal onwards had not moved at all when B ended.
    for (const v of views.slice(CAP + 1)) expect(Date.parse(v.transitions[1]?.at ?? "9999-01-01"), `A's goal ${v.id}`).toBeGreaterThan(Date.parse(bGoal.finished_at!));

    // A's youngest goal has not started: its first step was picked again and again and put back, delayed,
    // with no try spent (STEP_ATTEMPTS spent tries would have parked it in errored).
    const last = burst[BURST - 1]!;
    expect((await loop.get(last)).body.tape).toBe("plan");
    const jobId = goalStepJob({ goalId: last, version: 0 })[2].jobId;
    // Picked at least twice: how many times by the moment B ended depends on the machine's pace, so wait
    // (a few hundred ms at TENANT_DEFER_MS 200) while A's first goal still holds the tenant's one place.
    let job = await loop.queue.getJob(jobId);
    for (const until = Date.now() + 10_000; (job?.attemptsStarted ?? 0) < 2 && Date.now() < until; job = await loop.queue.getJob(jobId)) await new Promise((r) => setTimeout(r, 100));
    expect(job).toBeDefined();
    expect(["delayed", "waiting"]).toContain(await job!.getState());
    expect(job!.attemptsStarted).toBeGreaterThan(1);
    expect((await loop.get(last)).body.tape).toBe("plan");
    expect(job!.attemptsMade).toBe(0);
    expect(job!.stalledCounter).toBe(0);

    // Not lost: A's first goal ran to its end once, and the next one takes its turn after it.
    const a1 = await loop.waitForEnd(burst[0]!, 30_000);
    expect(a1.tape).toBe("plan → generate → execute → inspect → failed");
    expect(a1.executions).toHaveLength(1);
    const a2 = await loop.waitForEnd(burst[1]!, 30_000, ["generate", "execute", "inspect", "failed"]);
    expect(a2.transitions[1]!.from).toBe("plan");
    for (const id of burst.slice(1)) await loop.request("POST", `/goals/${id}/cancel`);
    console.log(`tenant B's goal verified ${tookMs} ms after submission, its program after ${before} of A's ${BURST} (bound ${BOUND_MS} ms, ${CAP + 1} programs)`);
  });
});

/** A webhook receiver that reads the request and never answers (until it is closed). */
async function startHangingReceiver() {
  const sockets = new Set<import("node:net").Socket>();
  let received = 0;
  const srv = http.createServer((req) => {
    req.resume();
    req.on("end", () => received++);
  });
  srv.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`,
    received: () => received,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => srv.close(() => resolve()));
    },
  };
}

describe("webhooks: a tenant whose receiver hangs does not hold every delivery slot", () => {
  // A runner's delivery worker runs 4 POSTs at once. Tenant A has SLOW deliveries queued first, to a
  // receiver that never answers (each attempt ends at WEBHOOK_TIMEOUT_MS); tenant B's one comes after.
  const SLOW = 6;
  const TIMEOUT_MS = 10_000; // the default
  // B's delivery is delivered within this of the worker starting. Old code: all 4 slots hung on A's
  // receiver, so B waited for the first timeout, at least TIMEOUT_MS; now A holds its
  // WEBHOOK_TENANT_IN_FLIGHT (2) slots and B takes another at once (measured 0.8-1.3 s at load 2-8).
  const BOUND_MS = 4000;
  let loop: Loop;
  let b: CreatedTenant;
  let hanging: Awaited<ReturnType<typeof startHangingReceiver>>;
  let fast: Receiver;
  beforeAll(async () => {
    loop = await startLoop({ runner: false, env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_MAX_ATTEMPTS: "1", WEBHOOK_DEFER_MS: "200" } });
    b = await createTenant(loop.prisma, { name: `${loop.prefix}-b`, secretBox: loop.secretBox });
    hanging = await startHangingReceiver();
    fast = await startReceiver([200]);
  });
  afterAll(async () => {
    await hanging?.close();
    await fast?.close();
    await loop?.close();
  });

  /** A goal with a webhook, cancelled at once: its goal.cancelled delivery is queued (no runner yet). */
  const cancelledGoal = async (url: string, key?: string) => {
    const res = await loop.post(demoGoal({ webhook: { url } }), { key });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const id = res.body.id as string;
    expect((await loop.request("POST", `/goals/${id}/cancel`, { key })).status).toBe(200);
    return id;
  };
  const deliveryOf = async (goalId: string, key?: string) => {
    const res = await loop.request("GET", `/goals/${goalId}/deliveries`, { key });
    return (res.body as unknown as { deliveries: DeliveryView[] }).deliveries[0]!;
  };

  it("B's delivery goes out within the bound while A's receiver hangs; A's waiting deliveries spend no attempts", async () => {
    const slow: string[] = [];
    for (let i = 0; i < SLOW; i++) slow.push(await cancelledGoal(hanging.url));
    const bGoal = await cancelledGoal(fast.url, b.api_key);

    await loop.startRunner();
    const started = Date.now();
    for (;;) {
      const d = await deliveryOf(bGoal, b.api_key);
      if (d.status === "delivered") break;
      expect(Date.now() - started, JSON.stringify(d)).toBeLessThan(BOUND_MS);
      await new Promise((r) => setTimeout(r, 50));
    }
    const tookMs = Date.now() - started;
    expect(fast.received).toHaveLength(1);

    // A's attempts in flight are at its cap; the rest wait with no attempt made or logged.
    const views = await Promise.all(slow.map((id) => deliveryOf(id)));
    expect(views.every((d) => d.status === "pending"), JSON.stringify(views)).toBe(true);
    const attempted = views.filter((d) => d.attempts > 0);
    expect(attempted.length).toBeLessThanOrEqual(2);
    for (const d of views.filter((v) => v.attempts === 0)) expect(d.log).toEqual([]);
    expect(hanging.received()).toBeLessThanOrEqual(2);
    console.log(`tenant B's webhook delivered ${tookMs} ms after the worker started, behind ${SLOW} deliveries to a hanging receiver (bound ${BOUND_MS} ms)`);
  });
});

describe("event streams and open goals are capped per tenant", () => {
  let loop: Loop;
  let base: string;
  let other: CreatedTenant;
  const streams: AbortController[] = [];
  beforeAll(async () => {
    // No runner: goals stay in plan, so their streams stay open.
    loop = await startLoop({ runner: false, env: { SSE_MAX_STREAMS_PER_TENANT: "2", SSE_MAX_STREAMS: "3", TENANT_MAX_OPEN_GOALS: "3" } });
    base = await loop.app.listen({ port: 0, host: "127.0.0.1" });
    other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
  });
  afterAll(async () => {
    for (const s of streams) s.abort();
    loop?.app.server.closeAllConnections();
    await loop?.close();
  });

  const submit = async (key?: string, headers?: Record<string, string>) => {
    const res = await loop.post(demoGoal(), { key, headers });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return res.body.id as string;
  };
  /** Opens a stream; a 200 is kept open (and its first frame read), anything else is returned as JSON. */
  const open = async (goalId: string, key: string) => {
    const ctl = new AbortController();
    const res = await fetch(`${base}/goals/${goalId}/events`, { headers: { authorization: `Bearer ${key}` }, signal: ctl.signal });
    if (res.status !== 200) return { status: res.status, body: (await res.json()) as Record<string, unknown>, close: () => undefined };
    streams.push(ctl);
    const reader = res.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain("retry:");
    return { status: 200, body: {} as Record<string, unknown>, close: () => ctl.abort() };
  };

  it("refuses a tenant's third stream with 429 LS_ERR_STREAM_LIMIT, and the server's fourth; a closed stream frees its place", async () => {
    const mine = await submit();
    const theirs = await submit(other.api_key);
    const s1 = await open(mine, loop.tenant.api_key);
    const s2 = await open(mine, loop.tenant.api_key);
    expect([s1.status, s2.status]).toEqual([200, 200]);
    const s3 = await open(mine, loop.tenant.api_key);
    expect(s3.status).toBe(429);
    expect(code(s3.body)).toBe("LS_ERR_STREAM_LIMIT");
    expect((s3.body.error as { details: unknown }).details).toEqual({ limit: 2, scope: "tenant" });

    // Another tenant is not held back by this one's streams, up to the server's cap.
    const t1 = await open(theirs, other.api_key);
    expect(t1.status).toBe(200);
    const t2 = await open(theirs, other.api_key);
    expect(t2.status).toBe(429);
    expect((t2.body.error as { details: unknown }).details).toEqual({ limit: 3, scope: "server" });

    // Closing a stream gives its place back (as soon as the server sees the socket close).
    s1.close();
    const deadline = Date.now() + 3000;
    let again = await open(mine, loop.tenant.api_key);
    while (again.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      again = await open(mine, loop.tenant.api_key);
    }
    expect(again.status).toBe(200);
    // Plain reads are not streams: they stay open to the tenant at its stream cap.
    expect((await loop.get(mine)).status).toBe(200);
  });

  it("refuses a submit past TENANT_MAX_OPEN_GOALS with 429 LS_ERR_GOAL_LIMIT; replays still answer; an ended goal frees a place", async () => {
    const t = await createTenant(loop.prisma, { name: `${loop.prefix}-goals`, secretBox: loop.secretBox });
    const first = await submit(t.api_key, { "idempotency-key": `first-${loop.prefix}` });
    await submit(t.api_key);
    await submit(t.api_key);
    const over = await loop.post(demoGoal(), { key: t.api_key });
    expect(over.status).toBe(429);
    expect(code(over.body)).toBe("LS_ERR_GOAL_LIMIT");
    expect((over.body.error as { details: unknown }).details).toEqual({ limit: 3 });
    expect(await loop.prisma.goal.count({ where: { tenantId: t.tenant_id } })).toBe(3);

    const replay = await loop.post(demoGoal(), { key: t.api_key, headers: { "idempotency-key": `first-${loop.prefix}` } });
    expect(replay.status).toBe(202);
    expect(replay.body.id).toBe(first);

    expect((await loop.request("POST", `/goals/${first}/cancel`, { key: t.api_key })).status).toBe(200);
    await submit(t.api_key);
  });
});
