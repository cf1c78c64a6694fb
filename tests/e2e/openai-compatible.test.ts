// The loop driven by the openai-compatible provider against a local fake server speaking the
// chat-completions wire format: structured output requested, replies validated, usage recorded.
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { demoGoal, demoScript, EXPECTED_REPORT, SCRIPT_CORRECT } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";

let fake: FakeOpenAI | undefined;
let loop: Loop | undefined;
afterEach(async () => {
  await loop?.close();
  await fake?.close();
  loop = fake = undefined;
});

type ChatRequest = {
  model: string;
  messages: { role: string; content: string }[];
  response_format: { type: string; json_schema: { name: string; schema: { required?: string[] } } };
};

async function loopAgainst(replies: Parameters<typeof startFakeOpenAI>[0]) {
  fake = await startFakeOpenAI(replies);
  loop = await startLoop({ env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: "fake-coder-7b" } });
  return { fake, loop };
}

const { plan } = demoScript();
const reply = (o: unknown, prompt_tokens: number, completion_tokens: number) => ({
  content: JSON.stringify(o),
  usage: { prompt_tokens, completion_tokens },
});

describe("openai-compatible provider", () => {
  it("plans, writes, runs and verifies; a schema-breaking reply is retried with the error fed back", async () => {
    const { fake, loop } = await loopAgainst([
      // PLAN: first reply misses output_contract, the retry is valid.
      reply({ objective: plan.objective, approach: plan.approach, checks: [] }, 300, 40),
      reply(plan, 420, 90),
      reply({ filename: "analysis.py", language: "python", source: SCRIPT_CORRECT, notes: "" }, 500, 400),
      reply({ verified: true, failing_checks: [], diagnosis: "All checks pass.", fix_hint: "" }, 700, 30),
    ]);
    const goal = await loop.run(demoGoal({ model: { provider: "openai-compatible" } }));
    expect(goal.state).toBe("verified");
    expect(goal.tape).toBe("plan → generate → execute → inspect → verified");
    expect(goal.report).toEqual(EXPECTED_REPORT);
    expect(goal.model).toEqual({ provider: "openai-compatible", model: "fake-coder-7b" });

    // Structured output on the wire, with the right schema per turn.
    const requests = fake.requests as ChatRequest[];
    expect(requests).toHaveLength(4);
    expect(requests.map((r) => r.response_format.json_schema.name)).toEqual(["Plan", "Plan", "GeneratedCode", "Inspection"]);
    expect(requests.every((r) => r.response_format.type === "json_schema" && r.model === "fake-coder-7b")).toBe(true);
    expect(requests[2]!.response_format.json_schema.schema.required).toEqual(["filename", "language", "source", "notes"]);
    // The retry carried the bad reply and what was wrong with it.
    const retry = requests[1]!.messages;
    expect(retry.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(retry[3]!.content).toMatch(/output_contract/);
    // The generator saw the real CSV header.
    expect(requests[2]!.messages[1]!.content).toContain("order_id,date,region,product,revenue");

    // Usage as the server reported it, the rejected try included (it was billed).
    expect(goal.cost.model_calls).toBe(3);
    expect(goal.cost.tokens_in).toBe(300 + 420 + 500 + 700);
    expect(goal.cost.tokens_out).toBe(40 + 90 + 400 + 30);
    const calls = await loop.prisma.modelCall.findMany({ where: { goalId: goal.id }, orderBy: { createdAt: "asc" } });
    expect(calls.map((c) => [c.state, c.provider, c.model, c.tokensIn, c.tokensOut])).toEqual([
      ["plan", "openai-compatible", "fake-coder-7b", 720, 130],
      ["generate", "openai-compatible", "fake-coder-7b", 500, 400],
      ["inspect", "openai-compatible", "fake-coder-7b", 700, 30],
    ]);
  });

  it("output that keeps failing the schema ends the goal as a recorded model failure, not a crash", async () => {
    const bad = { content: '{"objective": "x"}', usage: { prompt_tokens: 50, completion_tokens: 5 } };
    const { fake, loop } = await loopAgainst([bad, bad, bad]);
    const goal = await loop.run(demoGoal({ model: { provider: "openai-compatible" } }));
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("model_failure");
    expect(goal.tape).toBe("plan → failed");
    expect(fake.requests).toHaveLength(3); // 1 + MODEL_SCHEMA_RETRIES (2)
    const last = goal.transitions.at(-1)!.detail as { model_error: { code: string; tries: number; rejected: unknown[] } };
    expect(last.model_error).toMatchObject({ code: "LS_ERR_MODEL_OUTPUT", tries: 3 });
    expect(last.model_error.rejected).toHaveLength(3);
    const calls = await loop.prisma.modelCall.findMany({ where: { goalId: goal.id } });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ state: "plan", tokensIn: 150, tokensOut: 15 });
    expect(calls[0]!.error).toMatch(/no valid Plan in 3 tries.*output_contract/);
  });

  it("a provider that is down fails the step, not the goal: the step is retried and the goal verifies", async () => {
    const { fake, loop } = await loopAgainst([
      { status: 503, body: { error: { message: "overloaded" } } },
      reply(plan, 400, 80),
      reply({ filename: "analysis.py", language: "python", source: SCRIPT_CORRECT, notes: "" }, 500, 400),
      reply({ verified: true, failing_checks: [], diagnosis: "All checks pass.", fix_hint: "" }, 700, 30),
    ]);
    const goal = await loop.run(demoGoal({ model: { provider: "openai-compatible" } }));
    expect(goal.state).toBe("verified");
    expect(goal.tape).toBe("plan → generate → execute → inspect → verified");
    expect(fake.requests).toHaveLength(4);
    expect(goal.cost.model_calls).toBe(3);
  });

  it("a request the provider refuses outright (401) ends the goal as a model failure with the status on the tape", async () => {
    const { fake, loop } = await loopAgainst([{ status: 401, body: { error: { message: "invalid api key" } } }]);
    const goal = await loop.run(demoGoal({ model: { provider: "openai-compatible" } }));
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("model_failure");
    expect(goal.tape).toBe("plan → failed");
    expect(fake.requests).toHaveLength(1);
    expect(goal.transitions.at(-1)!.detail.model_error).toMatchObject({ code: "LS_ERR_MODEL_UNAVAILABLE", status_code: 401 });
    expect((goal.transitions.at(-1)!.detail.model_error as { message: string }).message).toMatch(/invalid api key/);
  });
});
