import { describe, expect, it } from "vitest";
import { MockLanguageModelV3 } from "ai/test";
import { createAiSdkModel, ModelOutputError } from "../src/index";
import { plan, planRequest } from "./fixtures";

// Provider-independent behaviour, on the SDK's mock model: usage a provider does not report, and replies
// that carry no text at all.
// Derived from the mock rather than imported: @ai-sdk/provider is not a direct dependency of this package.
type LanguageModelV3GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;

function reply(text: string, finish: "stop" | "length", tokens?: { input: number; output: number }): LanguageModelV3GenerateResult {
  return {
    content: text === "" ? [] : [{ type: "text", text }],
    finishReason: { unified: finish, raw: finish },
    usage: {
      inputTokens: { total: tokens?.input, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: tokens?.output, text: undefined, reasoning: undefined },
    },
    warnings: [],
  };
}

const modelOf = (mock: MockLanguageModelV3, schemaRetries = 1) =>
  createAiSdkModel({
    provider: "openai-compatible",
    modelName: "mock",
    model: mock,
    schemaRetries,
    maxRetries: 0,
    timeoutMs: 5_000,
    maxOutputTokens: 100,
  });

describe("createAiSdkModel", () => {
  it("counts unreported usage as 0", async () => {
    const res = await modelOf(new MockLanguageModelV3({ doGenerate: [reply(JSON.stringify(plan), "stop")] })).complete(planRequest);
    expect(res.output).toEqual(plan);
    expect(res.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
  });

  it("rejects an empty reply cut off by the token limit, and says so to the model", async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: [reply("", "length", { input: 5, output: 100 }), reply(JSON.stringify(plan), "stop", { input: 9, output: 20 })],
    });
    const res = await modelOf(mock).complete(planRequest);
    expect(res.tries).toBe(2);
    expect(res.usage).toEqual({ inputTokens: 14, outputTokens: 120 });
    expect(res.rejected).toEqual([{ text: null, error: "the reply held no JSON object (finish reason: length)" }]);
    // No empty assistant turn is sent back (some providers refuse one); only the feedback.
    const second = mock.doGenerateCalls[1]?.prompt ?? [];
    expect(second.map((m) => m.role)).toEqual(["system", "user", "user"]);
  });

  it("marks a truncated JSON reply as cut off", async () => {
    const err = await modelOf(new MockLanguageModelV3({ doGenerate: [reply('{"objective": "x", "appr', "length")] }), 0)
      .complete(planRequest)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelOutputError);
    expect((err as ModelOutputError).tries).toBe(1);
    expect((err as ModelOutputError).rejected[0]?.error).toMatch(/^the reply was cut off at the output token limit; the reply is not valid JSON/);
  });
});
