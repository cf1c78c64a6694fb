// Infrastructure failures are not goal failures (issue #5): a provider answering 503 past the step retry
// cap parks the goal in `errored`, on the operators' dead-letter list, without spending its attempts; a
// retry resumes it where it stopped. Admin routes need ADMIN_API_KEY.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { demoGoal, demoScript, SCRIPT_CORRECT } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";

const ADMIN = "admin-key-for-tests-0123456789abcdef";
let fake: FakeOpenAI;
let loop: Loop;
let noAdmin: Loop;

const { plan } = demoScript();
const ok = (o: unknown) => ({ content: JSON.stringify(o), usage: { prompt_tokens: 100, completion_tokens: 50 } });

beforeAll(async () => {
  fake = await startFakeOpenAI([
    { status: 503 },
    { status: 503 },
    ok(plan),
    ok({ filename: "analysis.py", language: "python", source: SCRIPT_CORRECT, notes: "" }),
    ok({ verified: true, failing_checks: [], diagnosis: "All checks pass.", fix_hint: "" }),
  ]);
  const env = {
    OPENAI_COMPATIBLE_BASE_URL: fake.baseURL,
    OPENAI_COMPATIBLE_MODEL: "fake-coder-7b",
    STEP_ATTEMPTS: "2",
    STEP_BACKOFF_MS: "100",
    ADMIN_API_KEY: ADMIN,
  };
  loop = await startLoop({ env });
  noAdmin = await startLoop({ runner: false });
});
afterAll(async () => {
  await loop?.close();
  await noAdmin?.close();
  await fake?.close();
});

describe("dead letters", () => {
  it("a step failing past the retry cap parks the goal in errored; an operator's retry resumes it", async () => {
    const res = await loop.post(demoGoal({ model: { provider: "openai-compatible" } }));
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const parked = await loop.waitForEnd(id, 60_000);
    expect(parked.state).toBe("errored");
    expect(parked.tape).toBe("plan → errored");
    expect(parked.attempts).toBe(0);
    const row = parked.transitions.at(-1)!;
    expect(row.detail.tries).toBe(2);
    expect(String(row.detail.error)).toMatch(/503|unavailable/i);
    expect(fake.requests).toHaveLength(2);

    // Tenants cannot see the admin list; the admin key can.
    expect((await loop.request("GET", "/admin/dead-letters")).status).toBe(403);
    expect((await loop.request("GET", "/admin/dead-letters", { key: null })).status).toBe(401);
    const list = await loop.request("GET", "/admin/dead-letters", { key: ADMIN });
    expect(list.status).toBe(200);
    const entry = (list.body.dead_letters as { goal_id: string; errored_in: string; tries: number; tenant_id: string }[]).find((d) => d.goal_id === id);
    expect(entry).toMatchObject({ errored_in: "plan", tries: 2, tenant_id: loop.tenant.tenant_id });

    const retry = await loop.request("POST", `/admin/dead-letters/${id}/retry`, { key: ADMIN });
    expect(retry.status).toBe(202);
    expect(retry.body).toMatchObject({ goal_id: id, state: "plan" });
    const done = await loop.waitForEnd(id, 60_000);
    expect(done.state).toBe("verified");
    expect(done.tape).toBe("plan → errored → plan → generate → execute → inspect → verified");
    // The provider's outage spent none of the goal's attempts.
    expect(done.attempts).toBe(1);

    // Retrying a goal that is not errored is a 409; an unknown one a 404.
    expect((await loop.request("POST", `/admin/dead-letters/${id}/retry`, { key: ADMIN })).status).toBe(409);
    expect((await loop.request("POST", "/admin/dead-letters/00000000-0000-0000-0000-000000000000/retry", { key: ADMIN })).status).toBe(404);
    const after = await loop.request("GET", "/admin/dead-letters", { key: ADMIN });
    expect((after.body.dead_letters as { goal_id: string }[]).map((d) => d.goal_id)).not.toContain(id);
  });

  it("admin routes answer 403 when ADMIN_API_KEY is not configured", async () => {
    const res = await noAdmin.request("GET", "/admin/dead-letters", { key: ADMIN });
    expect(res.status).toBe(403);
    expect((res.body.error as { code: string; message: string }).message).toMatch(/ADMIN_API_KEY/);
  });
});
