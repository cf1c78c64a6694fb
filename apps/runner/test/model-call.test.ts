// A model turn's ledger row, against real Postgres and a local fake of the OpenAI-compatible wire format:
// the answer settles the reservation that carried the request, and still lands when that reservation was
// moved aside while the call was in flight (as a second runner retrying the step does).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "@loopsmith/core";
import { Prisma } from "@loopsmith/db";
import { MODEL_CALL_RESERVED } from "@loopsmith/schemas";
import { createCheckPool } from "@loopsmith/verifier";
import { startFakeOpenAI, type FakeOpenAI } from "../../../packages/models/test/support/fake-openai";
import { demoGoal, demoScript } from "../../../scripts/demo/scenario";
import { startLoop, type Loop } from "../../../tests/support/loop";
import { runnerConfigSchema } from "../src/config";
import { runStep, type StepRunnerDeps } from "../src/step";
import { stepDeps } from "./support/step-deps";

let loop: Loop;
let fake: FakeOpenAI;
let deps: StepRunnerDeps;
let config: ReturnType<typeof parseConfig<typeof runnerConfigSchema>>;
const checks = createCheckPool({ timeoutMs: 30_000 });
/** Runs while the fake holds the plan's answer (set by each test). */
let whileHeld: () => Promise<void> = async () => undefined;

const PLAN_ANSWER = () => ({ content: JSON.stringify(demoScript().plan), usage: { prompt_tokens: 400, completion_tokens: 80 } });

beforeAll(async () => {
  fake = await startFakeOpenAI(
    Array.from({ length: 4 }, () => async () => {
      await whileHeld();
      return PLAN_ANSWER();
    }),
  );
  const env = { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: "fake-ledger-7b", MODEL_HTTP_RETRIES: "0" };
  loop = await startLoop({ runner: false, env });
  config = parseConfig(runnerConfigSchema, env);
  deps = stepDeps({
    prisma: loop.prisma,
    sandbox: { runnerId: loop.prefix },
    checks,
    config,
  });
});
afterAll(async () => {
  await checks.close();
  await loop?.close();
  await fake?.close();
});

async function planStep() {
  const res = await loop.post(demoGoal({ model: { provider: "openai-compatible" } }));
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  expect(await runStep(deps, { goalId: id, version: 0 })).toMatchObject({ done: true, from: "plan", to: "generate" });
  const rows = await loop.prisma.modelCall.findMany({ where: { goalId: id }, orderBy: { createdAt: "asc" } });
  return { id, rows };
}

const sentPrompt = (i: number) => (fake.requests[i] as { messages: { role: string; content: string }[] }).messages.find((m) => m.role === "user")!.content;

describe("a model turn's ledger row", () => {
  it("is the reservation settled by the answer: one row, with the request that was sent and the answer's figures", async () => {
    whileHeld = async () => undefined;
    const asked = fake.requests.length;
    const { rows } = await planStep();
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row!.error).toBeNull();
    // The plan as parsed (its checks with their defaults filled in).
    expect(row!.response).toMatchObject({ objective: demoScript().plan.objective, approach: demoScript().plan.approach });
    expect([row!.tokensIn, row!.tokensOut]).toEqual([400, 80]);
    expect(row!.latencyMs).toBeGreaterThanOrEqual(0);
    // The request is the reservation's, unchanged by the settle: what the provider was sent.
    expect((row!.request as { prompt: string }).prompt).toBe(sentPrompt(asked));
    expect(row!.model).toBe("fake-ledger-7b");
  });

  it("lands whole when the reservation was moved aside mid-call: the answer under the call's key, the moved row kept", async () => {
    const asked = fake.requests.length;
    let moved = 0;
    whileHeld = async () => {
      // What a second runner's retry does to a reservation it finds unsettled (keepPossiblyBilled).
      const r = await loop.prisma.modelCall.updateMany({
        where: { error: { startsWith: "reserved" }, goal: { queuePrefix: loop.prefix } },
        data: { requestHash: `moved-aside-${Date.now()}`, error: "possibly billed: moved aside by the test" },
      });
      moved = r.count;
    };
    const { rows } = await planStep();
    whileHeld = async () => undefined;
    expect(moved).toBe(1);
    expect(rows).toHaveLength(2);
    const answered = rows.filter((r) => r.response !== null);
    expect(answered).toHaveLength(1);
    expect(answered[0]!.error).toBeNull();
    expect(answered[0]!.requestHash).toMatch(/^[0-9a-f]{64}$/);
    expect((answered[0]!.request as { prompt: string }).prompt).toBe(sentPrompt(asked));
    expect([answered[0]!.tokensIn, answered[0]!.tokensOut]).toEqual([400, 80]);
    const aside = rows.find((r) => r.response === null)!;
    expect(aside.error).toBe("possibly billed: moved aside by the test");
    expect(aside.requestHash).toMatch(/^moved-aside-/);
  });

  it("counts a reservation a dead runner left against the budget of the call that finds it (issue 29: the spend is read after it is moved aside)", async () => {
    whileHeld = async () => undefined;
    // The plan call's key and estimate, from a goal like the next one (the prompt does not carry the budgets).
    const { rows } = await planStep();
    const { system, prompt } = rows[0]!.request as { system: string; prompt: string };
    const estimate = Math.ceil((system.length + prompt.length) / 4) + config.MODEL_OUTPUT_TOKENS_ESTIMATE;
    const left = 5000;
    // Room for the call's estimate, not for it and the reservation left behind.
    const res = await loop.post(demoGoal({ model: { provider: "openai-compatible" }, budget: { max_tokens: estimate + left - 1 } }));
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const { goalId: _, id: __, createdAt: ___, ...row } = rows[0]!;
    await loop.prisma.modelCall.create({
      data: { ...row, goalId: id, request: row.request as object, response: Prisma.DbNull, tokensIn: left, tokensOut: 0, costUsd: 0, error: MODEL_CALL_RESERVED },
    });
    const asked = fake.requests.length;
    expect(await runStep(deps, { goalId: id, version: 0 })).toMatchObject({ done: true, from: "plan", to: "failed" });
    expect(fake.requests.length).toBe(asked);
    const goal = await loop.prisma.goal.findUniqueOrThrow({ where: { id } });
    expect(goal.failureReason).toBe("budget_tokens");
    const calls = await loop.prisma.modelCall.findMany({ where: { goalId: id } });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.error).toMatch(/^possibly billed/);
  });
});
