// The public surface around goals (issue #4): API keys and tenants, idempotent submits, the goal list and
// cancel. Through the HTTP API (app.inject) against real Postgres, Redis and Docker.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, goalsOf, loadGoalView, type CreatedTenant } from "@loopsmith/db";
import { dockerClient, RUNNER_LABEL, SANDBOX_LABEL, sandboxPurpose } from "@loopsmith/sandbox";
import { spawnTs } from "../../scripts/lib/proc";
import { demoGoal, program, scriptedGoal } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";
import { DATABASE_URL } from "../support/services";

let loop: Loop;
let other: CreatedTenant;
/** The keys of the tenants whose goals the tests leave running (see the cancel test). */
const keys: string[] = [];

beforeAll(async () => {
  loop = await startLoop();
  other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
  keys.push(loop.tenant.api_key, other.api_key);
});
afterAll(async () => {
  await loop?.close();
});

const submit = async (body: unknown = demoGoal(), key?: string) => {
  const res = await loop.post(body, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
};

describe("API keys", () => {
  it("answers 401 with the error shape without a key, with a malformed header and with an unknown key", async () => {
    for (const headers of [{} as Record<string, string>, { authorization: "Basic abc" }, { authorization: "Bearer lsk_notakey" }, { authorization: "Bearer " }]) {
      const res = await loop.request("GET", "/goals", { key: null, headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect((res.body.error as { code: string }).code).toBe("LS_ERR_UNAUTHORIZED");
    }
    const post = await loop.post(demoGoal(), { key: null });
    expect(post.status).toBe(401);
  });

  it("a revoked key stops working; health and docs stay public", async () => {
    const t = await createTenant(loop.prisma, { name: `${loop.prefix}-revoked`, secretBox: loop.secretBox });
    expect((await loop.request("GET", "/goals", { key: t.api_key })).status).toBe(200);
    await loop.prisma.apiKey.updateMany({ where: { tenantId: t.tenant_id }, data: { revokedAt: new Date() } });
    expect((await loop.request("GET", "/goals", { key: t.api_key })).status).toBe(401);
    expect((await loop.request("GET", "/healthz", { key: null })).status).toBe(200);
    expect((await loop.request("GET", "/docs/json", { key: null })).status).toBe(200);
  });

  it("stores keys hashed, never in clear", async () => {
    const rows = await loop.prisma.apiKey.findMany({ where: { tenantId: loop.tenant.tenant_id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.keyHash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0]!.keyHash).not.toContain(loop.tenant.api_key);
    expect(loop.tenant.api_key.startsWith(rows[0]!.prefix)).toBe(true);
  });

  it("`npm run tenant:create` prints a working key and a whsec_ secret", async () => {
    const cli = spawnTs("apps/api/src/tenant-cli.ts", { DATABASE_URL }, ["--name", `${loop.prefix}-cli`]);
    const { code } = await cli.exited;
    expect(code, cli.output()).toBe(0);
    const out = JSON.parse(cli.output().slice(cli.output().indexOf("{"))) as CreatedTenant;
    expect(out.api_key).toMatch(/^lsk_/);
    expect(out.webhook_secret).toMatch(/^whsec_/);
    expect((await loop.request("GET", "/goals", { key: out.api_key })).status).toBe(200);

    const bad = spawnTs("apps/api/src/tenant-cli.ts", { DATABASE_URL }, []);
    expect((await bad.exited).code).toBe(64);
    expect(bad.output()).toMatch(/usage/);
  });
});

describe("tenant isolation", () => {
  it("another tenant's goal is a 404 for reads, lists, cancels, approvals and deliveries", async () => {
    const id = await submit(demoGoal(), other.api_key);
    const mine = await loop.request("GET", `/goals/${id}`);
    expect(mine.status).toBe(404);
    expect((mine.body.error as { code: string }).code).toBe("LS_ERR_NOT_FOUND");
    for (const [method, url] of [
      ["POST", `/goals/${id}/cancel`],
      ["POST", `/goals/${id}/approve`],
      ["POST", `/goals/${id}/reject`],
      ["GET", `/goals/${id}/deliveries`],
    ] as const) {
      const res = await loop.request(method, url);
      expect(res.status, `${method} ${url}`).toBe(404);
    }
    const list = await loop.request("GET", "/goals?limit=100");
    expect((list.body.goals as { id: string }[]).map((g) => g.id)).not.toContain(id);
    // The owner still sees it, untouched by the attempted cancel.
    const theirs = await loop.get(id, { key: other.api_key });
    expect(theirs.status).toBe(200);
    expect(theirs.body.state).not.toBe("cancelled");
  });

  it("is enforced in the data layer: another tenant's accessor finds, views, lists and replays nothing", async () => {
    const key = `scoped-${loop.prefix}`;
    const res = await loop.post(demoGoal(), { headers: { "idempotency-key": key } });
    const id = res.body.id as string;
    expect(await loadGoalView(loop.prisma, { tenantId: other.tenant_id, id })).toBeNull();
    expect((await loadGoalView(loop.prisma, { tenantId: loop.tenant.tenant_id, id }))?.id).toBe(id);
    const theirs = goalsOf(loop.prisma, other.tenant_id);
    const mine = goalsOf(loop.prisma, loop.tenant.tenant_id);
    expect(await theirs.find(id)).toBeNull();
    expect(await theirs.view(id)).toBeNull();
    expect(await theirs.byIdempotencyKey(key)).toBeNull();
    expect((await theirs.list({ limit: 100 })).map((g) => g.id)).not.toContain(id);
    expect((await mine.find(id))?.id).toBe(id);
    expect((await mine.byIdempotencyKey(key))?.id).toBe(id);
    expect((await mine.list({ limit: 100 })).map((g) => g.id)).toContain(id);
  });
});

describe("Idempotency-Key", () => {
  it("the same key and body return the same goal; another body is a 409; keys are per tenant", async () => {
    const key = `order-${loop.prefix}`;
    const first = await loop.post(demoGoal(), { headers: { "idempotency-key": key } });
    expect(first.status).toBe(202);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    // Same body with its keys in another order: still the same request.
    const reordered = Object.fromEntries(Object.entries(demoGoal()).reverse());
    const again = await loop.post(reordered, { headers: { "idempotency-key": key } });
    expect(again.status).toBe(202);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers["idempotent-replayed"]).toBe("true");

    const conflict = await loop.post(demoGoal({ max_attempts: 4 }), { headers: { "idempotency-key": key } });
    expect(conflict.status).toBe(409);
    expect((conflict.body.error as { code: string }).code).toBe("LS_ERR_IDEMPOTENCY_CONFLICT");
    expect(JSON.stringify(conflict.body.error)).toContain(first.body.id as string);

    const theirs = await loop.post(demoGoal(), { key: other.api_key, headers: { "idempotency-key": key } });
    expect(theirs.status).toBe(202);
    expect(theirs.body.id).not.toBe(first.body.id);
    expect(await loop.prisma.goal.count({ where: { idempotencyKey: key } })).toBe(2);
  });

  it("concurrent retries with one key create one goal", async () => {
    const key = `burst-${loop.prefix}`;
    const answers = await Promise.all(Array.from({ length: 6 }, () => loop.post(demoGoal(), { headers: { "idempotency-key": key } })));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(202));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(await loop.prisma.goal.count({ where: { tenantId: loop.tenant.tenant_id, idempotencyKey: key } })).toBe(1);
  });
});

describe("GET /goals", () => {
  it("lists newest first with cursor pagination and a state filter", async () => {
    const t = await createTenant(loop.prisma, { name: `${loop.prefix}-list`, secretBox: loop.secretBox });
    keys.push(t.api_key);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push(await submit(demoGoal({ objective: `goal ${i}` }), t.api_key));
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await loop.request("GET", `/goals?limit=2${cursor ? `&cursor=${cursor}` : ""}`, { key: t.api_key });
      expect(res.status).toBe(200);
      seen.push(...(res.body.goals as { id: string }[]).map((g) => g.id));
      cursor = res.body.next_cursor as string | null;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());

    await loop.request("POST", `/goals/${ids[0]}/cancel`, { key: t.api_key });
    const cancelled = await loop.request("GET", "/goals?state=cancelled", { key: t.api_key });
    expect((cancelled.body.goals as { id: string; state: string }[]).map((g) => [g.id, g.state])).toEqual([[ids[0], "cancelled"]]);
    const bad = await loop.request("GET", "/goals?cursor=bm9wZQ", { key: t.api_key });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain("querystring.cursor");
  });

  it("searches objectives (any case) or an id, pages a search, and sums each goal's model spend", async () => {
    const t = await createTenant(loop.prisma, { name: `${loop.prefix}-search`, secretBox: loop.secretBox });
    const other = await createTenant(loop.prisma, { name: `${loop.prefix}-search-other`, secretBox: loop.secretBox });
    keys.push(t.api_key, other.api_key);
    const red = [await submit(demoGoal({ objective: "Count the RED widgets", max_attempts: 1 }), t.api_key), await submit(demoGoal({ objective: "sum red invoices", max_attempts: 1 }), t.api_key)];
    const blue = await submit(demoGoal({ objective: "Count the blue widgets", max_attempts: 1 }), t.api_key);
    await submit(demoGoal({ objective: "red, but another tenant's", max_attempts: 1 }), other.api_key);
    const list = async (query: string) => {
      const res = await loop.request("GET", `/goals?${query}`, { key: t.api_key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { goals: { id: string; cost_usd: number }[]; next_cursor: string | null };
    };
    expect((await list("q=red")).goals.map((g) => g.id)).toEqual([...red].reverse());
    expect((await list("q=Red%20Widgets")).goals.map((g) => g.id)).toEqual([red[0]]);
    expect((await list(`q=${blue}`)).goals.map((g) => g.id)).toEqual([blue]);
    // % and _ are text, not wildcards.
    expect((await list("q=%25")).goals).toEqual([]);
    expect((await list("q=red_widgets")).goals).toEqual([]);
    const first = await list("q=red&limit=1");
    expect(first.goals.map((g) => g.id)).toEqual([red[1]]);
    expect((await list(`q=red&limit=1&cursor=${first.next_cursor!}`)).goals.map((g) => g.id)).toEqual([red[0]]);
    // cost_usd: the sum of the goal's model calls, as GET /goals/:id says.
    for (const [i, cost] of [0.25, 0.5].entries())
      await loop.prisma.modelCall.create({
        data: { goalId: blue, state: "plan", attempt: 0, provider: "p", model: "m", tokensIn: 1, tokensOut: 1, latencyMs: 1, costUsd: cost, requestHash: `h${i}` },
      });
    const all = await list("limit=10");
    expect(all.goals.find((g) => g.id === blue)?.cost_usd).toBe(0.75);
    expect(all.goals.find((g) => g.id === red[0])?.cost_usd).toBe(0);
    expect((await loop.get(blue, { key: t.api_key })).body.cost.cost_usd).toBe(0.75);
    for (const [q, why] of [["q=", "empty"], [`q=${"x".repeat(201)}`, "too long"]]) {
      const bad = await loop.request("GET", `/goals?${q}`, { key: t.api_key });
      expect(bad.status, why).toBe(400);
      expect(JSON.stringify(bad.body)).toContain("querystring.q");
    }
  });
});

describe("POST /goals/:id/cancel", () => {
  it("stops a running goal: cancelled on the tape, its container killed, nothing after", async () => {
    // The goals the tests above submitted and left running have program containers of this runner too:
    // they are cancelled first (by their tenants), so that the only program container counted below is
    // this goal's. (Waiting for them to end cost 40-50 s of CPU.)
    const settled = ["verified", "failed", "cancelled", "errored", "awaiting_approval"];
    const busy = () => loop.prisma.goal.findMany({ where: { tenant: { name: { startsWith: loop.prefix } }, state: { notIn: settled } }, select: { id: true, state: true } });
    for (const g of await busy()) {
      for (const key of keys) if ((await loop.request("POST", `/goals/${g.id}/cancel`, { key })).status !== 404) break;
    }
    expect(await busy(), "goals of earlier tests still running").toEqual([]);
    const docker = dockerClient();
    // The goal's program container, not the idle containers the runner's pool keeps ready.
    const programs = async () =>
      (await docker.listContainers({ all: true, filters: { label: [`${SANDBOX_LABEL}=1`, `${RUNNER_LABEL}=${loop.prefix}`] } })).filter(
        (c) => sandboxPurpose(c) === "program",
      );
    const running = async () => (await programs()).length;
    const cleared = Date.now() + 30_000;
    while ((await running()) > 0 && Date.now() < cleared) await new Promise((r) => setTimeout(r, 200));
    expect(await running(), "the cancelled goals' containers").toBe(0);
    const slow = program("import time\ntime.sleep(60)\n");
    const id = await submit(scriptedGoal({ generate: slow }, { execution_timeout_seconds: 120 }));
    await loop.waitForEnd(id, 60_000, ["execute"]);
    // What is left, should a program container outlive the cancel: its name, state and age say which run it was.
    const left = async () => JSON.stringify((await programs()).map((c) => ({ name: c.Names[0], state: c.State, status: c.Status, created: c.Created })));
    const deadline = Date.now() + 30_000;
    while ((await running()) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await running()).toBe(1);

    const res = await loop.request("POST", `/goals/${id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.state).toBe("cancelled");
    expect(res.body.tape).toBe("plan → generate → execute → cancelled");
    expect(res.body.finished_at).not.toBeNull();

    const gone = Date.now() + 15_000;
    while ((await running()) > 0 && Date.now() < gone) await new Promise((r) => setTimeout(r, 200));
    expect(await running(), await left()).toBe(0);
    // The abandoned execution's result is dropped: no later row, no execution recorded.
    await new Promise((r) => setTimeout(r, 1500));
    const after = await loop.get(id);
    expect(after.body.tape).toBe("plan → generate → execute → cancelled");
    expect(after.body.executions).toHaveLength(0);

    const again = await loop.request("POST", `/goals/${id}/cancel`);
    expect(again.status).toBe(409);
    expect((again.body.error as { code: string }).code).toBe("LS_ERR_GOAL_STATE");
  }, 300_000);

  it("a finished goal cannot be cancelled", async () => {
    const done = await loop.run(demoGoal());
    expect(done.state).toBe("verified");
    const res = await loop.request("POST", `/goals/${done.id}/cancel`);
    expect(res.status).toBe(409);
    expect((res.body.error as { details: { state: string } }).details.state).toBe("verified");
  });
});

describe("budgets at submission", () => {
  it("fills server defaults, takes the tenant's approval policy, and refuses caps above the server's maximums", async () => {
    const t = await createTenant(loop.prisma, { name: `${loop.prefix}-policy`, approvalThresholdUsd: 1.5, secretBox: loop.secretBox });
    const res = await loop.post(demoGoal({ budget: { max_cost_usd: 2 } }), { key: t.api_key });
    expect(res.status).toBe(202);
    await loop.request("POST", `/goals/${res.body.id}/cancel`, { key: t.api_key });
    const view = await loop.get(res.body.id as string, { key: t.api_key });
    expect(view.body.budgets).toEqual({
      max_attempts: 5,
      execution_timeout_seconds: 60,
      max_tokens: 500_000,
      max_cost_usd: 2,
      max_wall_seconds: 3600,
      approval_threshold_usd: 1.5,
    });
    // The goal's own threshold wins over the tenant's.
    const own = await loop.post(demoGoal({ approval_threshold_usd: 0.25 }), { key: t.api_key });
    await loop.request("POST", `/goals/${own.body.id}/cancel`, { key: t.api_key });
    expect((await loop.get(own.body.id as string, { key: t.api_key })).body.budgets.approval_threshold_usd).toBe(0.25);

    const over = await loop.post(demoGoal({ budget: { max_tokens: 6_000_000, max_wall_seconds: 100_000 } }));
    expect(over.status).toBe(400);
    const details = (over.body.error as { details: { path: string; message: string }[] }).details;
    expect(details.map((d) => d.path)).toEqual(["body.budget.max_tokens", "body.budget.max_wall_seconds"]);
    expect(details[0]!.message).toMatch(/LIMIT_MAX_TOKENS/);
  });
});
