// Issue 13, the operator's surface: after a goal, the API's /metrics and the runner's show the series
// README "Metrics" lists; the queue dashboard answers behind the admin key.
import { Redis } from "ioredis";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { build } from "../../apps/api/src/app";
import { runnerReadiness } from "../../apps/api/src/readiness";
import { sample, samples } from "../../packages/metrics/test/parse";
import { startReceiver, type Receiver } from "../../packages/webhooks/test/support";
import { hostileGoal, startLoop, type Loop } from "../support/loop";
import { REDIS_URL } from "../support/services";

const token = "e2e-metrics-token-".padEnd(40, "0");
const adminKey = "e2e-admin-key-".padEnd(40, "a");
let loop: Loop;
const receivers: Receiver[] = [];
beforeAll(async () => {
  loop = await startLoop({ metricsToken: token, dashboard: true, env: { ADMIN_API_KEY: adminKey } });
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await loop?.close();
});

const sum = (text: string, name: string, where: (labels: Record<string, string>) => boolean = () => true) =>
  samples(text)
    .filter((s) => s.name === name && where(s.labels))
    .reduce((a, s) => a + s.value, 0);

describe("metrics after a goal", () => {
  it("the API shows goals by state, queue depth and its requests; the runner its moves, time in state, sandbox runs, pool, model calls, job latency and webhook deliveries", async () => {
    const receiver = await startReceiver([200]);
    receivers.push(receiver);
    // One attempt whose inspector never verifies: every working state once, then failed (one sandbox run).
    const goal = await loop.run({ ...hostileGoal("print('hello')"), webhook: { url: receiver.url } });
    expect(goal.tape).toBe("plan → generate → execute → inspect → failed");
    for (;;) {
      const res = await loop.request("GET", `/goals/${goal.id}/deliveries`);
      if ((res.body.deliveries as { status: string }[])[0]?.status === "delivered") break;
      await new Promise((r) => setTimeout(r, 50));
    }

    const scrape = await loop.request("GET", "/metrics", { key: token });
    expect(scrape.status).toBe(200);
    const api = scrape.body as unknown as string;
    // issue 28: this deployment's goals only (the loop's queue prefix), though every test shares the database.
    expect(sample(api, "loopsmith_goals", { state: "failed", failure_reason: "budget_attempts" })).toBe(1);
    expect(sum(api, "loopsmith_goals")).toBe(await loop.prisma.goal.count({ where: { queuePrefix: loop.prefix } }));
    for (const status of ["waiting", "active", "delayed", "failed"]) {
      expect(sample(api, "loopsmith_queue_jobs", { queue: "goals", status }), status).toBeGreaterThanOrEqual(0);
      expect(sample(api, "loopsmith_queue_jobs", { queue: "webhooks", status }), status).toBeGreaterThanOrEqual(0);
    }
    expect(sample(api, "loopsmith_http_request_duration_seconds_count", { route: "/goals", method: "POST", status_code: "202" })).toBe(1);
    expect(sample(api, "loopsmith_http_request_duration_seconds_count", { route: "/goals/:id", method: "GET", status_code: "200" })).toBeGreaterThanOrEqual(1);

    const runner = await loop.metrics.runner!.text();
    const moves = (from: string, to: string) => sample(runner, "loopsmith_goal_transitions_total", { from, to });
    expect([moves("plan", "generate"), moves("generate", "execute"), moves("execute", "inspect"), moves("inspect", "failed")]).toEqual([1, 1, 1, 1]);
    expect(sample(runner, "loopsmith_goal_failures_total", { reason: "budget_attempts" })).toBe(1);
    for (const state of ["plan", "generate", "execute", "inspect"]) expect(sample(runner, "loopsmith_goal_state_duration_seconds_count", { state }), state).toBe(1);
    expect(sample(runner, "loopsmith_goal_state_duration_seconds_sum", { state: "execute" })).toBeGreaterThan(0);
    // issue 28: the goal's whole life, submit to end, by its final state.
    expect(sample(runner, "loopsmith_goal_duration_seconds_count", { state: "failed" })).toBe(1);
    const life = (new Date(goal.updated_at).getTime() - new Date(goal.created_at).getTime()) / 1000;
    expect(sample(runner, "loopsmith_goal_duration_seconds_sum", { state: "failed" })).toBeCloseTo(life, 0);
    expect(sample(runner, "loopsmith_sandbox_run_duration_seconds_count", { outcome: "exit_zero" })).toBe(1);
    expect(sample(runner, "loopsmith_sandbox_pool_containers", { status: "target" })).toBe(loop.sandbox.poolStats().target);
    // plan, generate, inspect: every call the ledger recorded.
    const calls = await loop.prisma.modelCall.count({ where: { goalId: goal.id } });
    expect(sum(runner, "loopsmith_model_calls_total", (l) => l.provider === "scripted" && l.outcome === "ok")).toBe(calls);
    expect(sum(runner, "loopsmith_model_tokens_total", (l) => l.provider === "scripted")).toBe(
      goal.cost.tokens_in + goal.cost.tokens_out,
    );
    expect(samples(runner).some((s) => s.name === "loopsmith_model_cost_usd_total" && s.labels.provider === "scripted")).toBe(true);
    expect(sample(runner, "loopsmith_queue_job_latency_seconds_count", { queue: "goals" })).toBeGreaterThanOrEqual(4);
    // Each step's parts, once per step, by the state it ran in; the handler of EXECUTE holds the program's run.
    for (const state of ["plan", "generate", "execute", "inspect"])
      for (const phase of ["read", "handler", "commit", "schedule"])
        expect(sample(runner, "loopsmith_step_phase_duration_seconds_count", { state, phase }), `${state} ${phase}`).toBe(1);
    expect(sample(runner, "loopsmith_step_phase_duration_seconds_sum", { state: "execute", phase: "handler" })).toBeGreaterThanOrEqual(
      sample(runner, "loopsmith_sandbox_run_duration_seconds_sum", { outcome: "exit_zero" })! * 0.99,
    );
    expect(sample(runner, "loopsmith_queue_job_latency_seconds_count", { queue: "webhooks" })).toBe(1);
    expect(sample(runner, "loopsmith_webhook_deliveries_total", { outcome: "delivered" })).toBe(1);
    expect(sample(runner, "loopsmith_webhook_attempt_duration_seconds_count", { outcome: "delivered" })).toBe(1);
    // No label carries an id.
    expect(api + runner).not.toContain(goal.id);
    expect(api + runner).not.toContain(loop.tenant.tenant_id);
  });
});

describe("the queue dashboard at /admin/queues", () => {
  it("asks a browser for the admin key, refuses tenant keys, and shows the goal and webhook queues to the admin", async () => {
    const none = await loop.request("GET", "/admin/queues", { key: null });
    expect(none.status).toBe(401);
    expect(none.headers["www-authenticate"]).toMatch(/^Basic realm="LoopSmith admin"/);
    expect(none.body).toMatchObject({ error: { code: "LS_ERR_UNAUTHORIZED" } });
    const tenant = await loop.request("GET", "/admin/queues/api/queues");
    expect(tenant.status).toBe(403);
    expect(tenant.body).toMatchObject({ error: { code: "LS_ERR_FORBIDDEN" } });
    const wrongBasic = `Basic ${Buffer.from(`admin:${loop.tenant.api_key}`).toString("base64")}`;
    expect((await loop.request("GET", "/admin/queues", { key: null, headers: { authorization: wrongBasic } })).status).toBe(403);

    const basic = `Basic ${Buffer.from(`admin:${adminKey}`).toString("base64")}`;
    const page = await loop.request("GET", "/admin/queues", { key: null, headers: { authorization: basic } });
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/text\/html/);
    expect(String(page.body)).toContain("LoopSmith queues");
    const api = await loop.request("GET", "/admin/queues/api/queues", { key: adminKey });
    expect(api.status).toBe(200);
    const names = (api.body.queues as { name: string; counts: Record<string, number> }[]).map((q) => q.name).sort();
    expect(names).toEqual(["goals", "webhooks"]);
    // Not part of the client's API document.
    await loop.app.ready();
    expect(Object.keys((loop.app.swagger() as { paths: Record<string, unknown> }).paths).filter((p) => p.startsWith("/admin/queues") || p === "/metrics")).toEqual([]);
  });
});

// Issue 28.6: /readyz answers from the runners' heartbeats only, through the API's own probes and route.
describe("readiness from the runners' heartbeats", () => {
  it("ready with a live runner; not once it stops; not with a runner whose sandbox self-check failed", async () => {
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    const app = await build({ logger: false, readiness: runnerReadiness({ prisma: loop.prisma, redis, prefix: loop.prefix }) });
    const readyz = async () => {
      const res = await app.inject({ method: "GET", url: "/readyz" });
      return { status: res.statusCode, body: res.json() as { missing: string[]; checks: Record<string, { detail: string }> } };
    };
    try {
      const live = await readyz();
      expect(live.status, JSON.stringify(live.body)).toBe(200);
      expect(live.body.checks.docker!.detail).toBe("1 runner(s) alive (heartbeats)");
      const runtime = loop.sandbox.ociRuntime === "runsc" ? "runsc (gVisor)" : loop.sandbox.ociRuntime;
      expect(live.body.checks.sandbox_image!.detail).toBe(`1 runner(s) passed the sandbox self-check (image ${loop.sandbox.image}, runtime ${runtime})`);

      await loop.runner()!.close();
      const none = await readyz();
      expect(none.status).toBe(503);
      expect(none.body.missing).toEqual(["docker", "sandbox_image"]);

      // Alive (it keeps its heartbeat) but never announces a sandbox it could not verify.
      const selfCheck = Promise.reject(new Error("sandbox self-check failed: pandas did not import"));
      selfCheck.catch(() => undefined);
      await loop.startRunner({ sandboxVerified: selfCheck });
      const failed = await readyz();
      expect(failed.status).toBe(503);
      expect(failed.body.missing).toEqual(["sandbox_image"]);
      expect(failed.body.checks.docker!.detail).toBe("1 runner(s) alive (heartbeats)");
    } finally {
      await app.close();
      redis.disconnect();
    }
  });
});
