import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "@loopsmith/core";
import { createModel, modelConfigSchema, ModelOutputError, ModelUnavailableError, type LoopModel } from "../src/index";
import { plan, planRequest } from "./fixtures";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "./support/fake-openai";

type ChatRequest = {
  model: string;
  max_tokens?: number;
  messages: { role: string; content: string }[];
  response_format: { type: string; json_schema: { name: string; strict: boolean; schema: Record<string, unknown> } };
};

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

// MODEL_HTTP_RETRIES=0 so no test waits on the SDK's backoff.
async function modelAgainst(replies: FakeReply[], env: Record<string, string> = {}): Promise<{ model: LoopModel; server: FakeOpenAI }> {
  const server = await startFakeOpenAI(replies);
  fake = server;
  const config = parseConfig(modelConfigSchema, {
    OPENAI_COMPATIBLE_BASE_URL: server.baseURL,
    OPENAI_COMPATIBLE_MODEL: "fake-model",
    MODEL_HTTP_RETRIES: "0",
    MODEL_SCHEMA_RETRIES: "2",
    ...env,
  });
  return { model: createModel({ provider: "openai-compatible" }, config), server };
}

const requestAt = (server: FakeOpenAI, i: number) => server.requests[i] as ChatRequest;

describe("openai-compatible model against a fake server", () => {
  it("sends the schema and the messages, and returns the parsed output with the server's usage", async () => {
    const { model, server } = await modelAgainst([
      { content: JSON.stringify(plan), usage: { prompt_tokens: 120, completion_tokens: 45 } },
    ]);
    expect(model.provider).toBe("openai-compatible");
    expect(model.modelName).toBe("fake-model");

    const res = await model.complete(planRequest);
    expect(res.output).toEqual(plan);
    expect(res.usage).toEqual({ inputTokens: 120, outputTokens: 45 });
    expect(res.tries).toBe(1);
    expect(res.rejected).toEqual([]);

    const body = requestAt(server, 0);
    expect(body.model).toBe("fake-model");
    expect(body.max_tokens).toBe(8192);
    expect(body.messages).toEqual([
      { role: "system", content: planRequest.system },
      { role: "user", content: planRequest.prompt },
    ]);
    expect(body.response_format.type).toBe("json_schema");
    expect(body.response_format.json_schema.name).toBe("Plan");
    // What is really sent: the root $ref that .meta({ id }) produces is inlined (providers want an object at
    // the root), and strict is off by default because CheckSpec is not strict-compatible (free-form params).
    // Pinned so a change in the SDK or the schemas shows up here.
    expect(body.response_format.json_schema.strict).toBe(false);
    const schema = body.response_format.json_schema.schema as {
      type: string;
      $ref?: string;
      required: string[];
      definitions: Record<string, { required: string[]; properties: { params: { additionalProperties: unknown } } }>;
    };
    expect(schema.type).toBe("object");
    expect(schema.$ref).toBeUndefined();
    expect(schema.required).toEqual(["objective", "approach", "output_contract", "checks"]);
    // The planner's checks: never hidden (a model wrote them), so no visibility fields.
    expect(Object.keys(schema.definitions)).toEqual(["PlannedCheck"]);
    expect(schema.definitions.PlannedCheck?.properties.params.additionalProperties).toEqual({});
    expect(schema.definitions.PlannedCheck?.required).toEqual(["id"]);
  });

  it("feeds a schema mismatch back and accepts the corrected reply", async () => {
    const { model, server } = await modelAgainst([
      { content: JSON.stringify({ ...plan, objective: "" }), usage: { prompt_tokens: 100, completion_tokens: 30 } },
      { content: JSON.stringify(plan), usage: { prompt_tokens: 150, completion_tokens: 40 } },
    ]);
    const res = await model.complete(planRequest);
    expect(res.output).toEqual(plan);
    expect(res.tries).toBe(2);
    expect(res.usage).toEqual({ inputTokens: 250, outputTokens: 70 });
    expect(res.rejected).toHaveLength(1);
    expect(res.rejected[0]?.text).toBe(JSON.stringify({ ...plan, objective: "" }));
    expect(res.rejected[0]?.error).toMatch(/^objective: /);

    const retry = requestAt(server, 1).messages;
    expect(retry.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(retry[2]?.content).toBe(res.rejected[0]?.text);
    expect(retry[3]?.content).toContain("did not match the required JSON schema: objective: ");
    expect(retry[3]?.content).toContain("Reply again with only the corrected JSON object.");
  });

  it("reports a non-JSON reply as a parse error", async () => {
    const { model } = await modelAgainst([{ content: "Sure! Here is the plan: ..." }, { content: JSON.stringify(plan) }]);
    const res = await model.complete(planRequest);
    expect(res.tries).toBe(2);
    expect(res.rejected[0]).toMatchObject({ text: "Sure! Here is the plan: ...", error: expect.stringMatching(/not valid JSON/) });
  });

  it("gives up with ModelOutputError after 1 + MODEL_SCHEMA_RETRIES tries", async () => {
    const bad = JSON.stringify({ objective: "x" });
    const { model, server } = await modelAgainst([{ content: bad }, { content: bad }, { content: bad }, { content: JSON.stringify(plan) }]);
    const err = await model.complete(planRequest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelOutputError);
    const e = err as ModelOutputError;
    expect(e.code).toBe("LS_ERR_MODEL_OUTPUT");
    expect(e.tries).toBe(3);
    expect(e.rejected).toHaveLength(3);
    expect(e.usage).toEqual({ inputTokens: 30, outputTokens: 30 });
    expect(server.requests).toHaveLength(3);
  });

  it("turns an HTTP 500 into ModelUnavailableError with the status and the provider's message", async () => {
    const { model, server } = await modelAgainst([{ status: 500, body: { error: { message: "upstream exploded" } } }]);
    const err = await model.complete(planRequest).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelUnavailableError);
    const e = err as ModelUnavailableError;
    expect(e.code).toBe("LS_ERR_MODEL_UNAVAILABLE");
    expect(e.statusCode).toBe(500);
    expect(e.providerMessage).toContain("upstream exploded");
    expect(e.usage).toEqual({ inputTokens: 0, outputTokens: 0 });
    expect(server.requests).toHaveLength(1);
  });

  it("keeps the usage of rejected tries when a later try fails over HTTP", async () => {
    const { model } = await modelAgainst([
      { content: "{}", usage: { prompt_tokens: 7, completion_tokens: 3 } },
      { status: 429, body: { error: { message: "slow down" } } },
    ]);
    const e = (await model.complete(planRequest).catch((x: unknown) => x)) as ModelUnavailableError;
    expect(e).toBeInstanceOf(ModelUnavailableError);
    expect(e.statusCode).toBe(429);
    expect(e.usage).toEqual({ inputTokens: 7, outputTokens: 3 });
  });

  it("a function reply sees the request body; an exhausted script answers 500", async () => {
    const { model } = await modelAgainst([(body) => ({ content: JSON.stringify({ ...plan, objective: (body as ChatRequest).model }) })]);
    expect((await model.complete(planRequest)).output.objective).toBe("fake-model");
    const e = (await model.complete(planRequest).catch((x: unknown) => x)) as ModelUnavailableError;
    expect(e.statusCode).toBe(500);
    expect(e.providerMessage).toMatch(/script exhausted/);
  });

  it("uses the SDK's HTTP retries and honours retry-after", async () => {
    const { model, server } = await modelAgainst(
      [{ status: 503, headers: { "retry-after": "0" } }, { content: JSON.stringify(plan) }],
      { MODEL_HTTP_RETRIES: "1" },
    );
    expect((await model.complete(planRequest)).tries).toBe(1);
    expect(server.requests).toHaveLength(2);
  });

  it("after the SDK's HTTP retries run out, reports the last status", async () => {
    const busy = { status: 503, headers: { "retry-after": "0" }, body: { error: { message: "overloaded" } } };
    const { model, server } = await modelAgainst([busy, busy], { MODEL_HTTP_RETRIES: "1" });
    const e = (await model.complete(planRequest).catch((x: unknown) => x)) as ModelUnavailableError;
    expect(e).toBeInstanceOf(ModelUnavailableError);
    expect(e.statusCode).toBe(503);
    expect(e.providerMessage).toBe("failed after 2 attempts; last error: overloaded");
    expect(server.requests).toHaveLength(2);
  });
});

describe("openai-compatible strict mode", () => {
  it("OPENAI_COMPATIBLE_STRICT_JSON_SCHEMA=true asks the server for strict schema adherence", async () => {
    const { model, server } = await modelAgainst([{ content: JSON.stringify(plan) }], { OPENAI_COMPATIBLE_STRICT_JSON_SCHEMA: "true" });
    await model.complete(planRequest);
    expect(requestAt(server, 0).response_format.json_schema.strict).toBe(true);
  });
});

describe("openai-compatible transport failures", () => {
  const config = (env: Record<string, string>) =>
    parseConfig(modelConfigSchema, { OPENAI_COMPATIBLE_MODEL: "m", MODEL_HTTP_RETRIES: "0", ...env });

  it("an unreachable server is ModelUnavailableError without a status", async () => {
    const server = await startFakeOpenAI([]);
    await server.close();
    const model = createModel({ provider: "openai-compatible" }, config({ OPENAI_COMPATIBLE_BASE_URL: server.baseURL }));
    const e = (await model.complete(planRequest).catch((x: unknown) => x)) as ModelUnavailableError;
    expect(e).toBeInstanceOf(ModelUnavailableError);
    expect(e.statusCode).toBeUndefined();
    expect(e.providerMessage).toMatch(/Cannot connect/);
  });

  it("a call that outlives MODEL_TIMEOUT_MS is ModelUnavailableError", async () => {
    // A fetch that never answers, only honouring the abort signal, as a hung server would.
    const hang: typeof fetch = (_url, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)));
    const model = createModel(
      { provider: "openai-compatible", model: "override" },
      config({ OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1", MODEL_TIMEOUT_MS: "50" }),
      { fetch: hang },
    );
    expect(model.modelName).toBe("override");
    const e = (await model.complete(planRequest).catch((x: unknown) => x)) as ModelUnavailableError;
    expect(e).toBeInstanceOf(ModelUnavailableError);
    expect(e.providerMessage).toMatch(/TimeoutError/);
    expect(e.latencyMs).toBeGreaterThanOrEqual(45);
  });
});
