import { describe, expect, it } from "vitest";
import { ConfigError, LoopSmithError, parseConfig } from "@loopsmith/core";
import { z } from "zod";
import { createModel, enabledProviders, modelConfigSchema, resolveModelSpec } from "../src/index";
import { script } from "./fixtures";

const load = (env: Record<string, string>) => parseConfig(modelConfigSchema, env);

function disabledError(fn: () => unknown): LoopSmithError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(LoopSmithError);
    expect((e as LoopSmithError).code).toBe("LS_ERR_MODEL_DISABLED");
    return e as LoopSmithError;
  }
  throw new Error("expected LS_ERR_MODEL_DISABLED");
}

describe("model config", () => {
  it("applies defaults; empty strings are unset", () => {
    const cfg = load({ LOOPSMITH_SCRIPTED_MODEL: "", MODEL_SCHEMA_RETRIES: "" });
    expect(cfg.LOOPSMITH_SCRIPTED_MODEL).toBe(false);
    expect(cfg.MODEL_SCHEMA_RETRIES).toBe(2);
    expect(cfg.MODEL_HTTP_RETRIES).toBe(2);
    expect(cfg.MODEL_TIMEOUT_MS).toBe(120_000);
    expect(cfg.MODEL_MAX_OUTPUT_TOKENS).toBe(8192);
    expect(cfg.ANTHROPIC_MODEL).toMatch(/^claude-/);
    expect(cfg.GOOGLE_MODEL).toMatch(/^gemini-/);
    expect(enabledProviders(cfg)).toEqual([]);
  });

  it("parses the scripted flag and numbers, and rejects bad values", () => {
    expect(load({ LOOPSMITH_SCRIPTED_MODEL: "1" }).LOOPSMITH_SCRIPTED_MODEL).toBe(true);
    expect(load({ LOOPSMITH_SCRIPTED_MODEL: "false" }).LOOPSMITH_SCRIPTED_MODEL).toBe(false);
    expect(load({ MODEL_TIMEOUT_MS: "500" }).MODEL_TIMEOUT_MS).toBe(500);
    expect(() => load({ LOOPSMITH_SCRIPTED_MODEL: "yes" })).toThrow(/LOOPSMITH_SCRIPTED_MODEL/);
    expect(() => load({ MODEL_SCHEMA_RETRIES: "-1" })).toThrow(/MODEL_SCHEMA_RETRIES/);
    expect(() => load({ OPENAI_COMPATIBLE_BASE_URL: "not a url" })).toThrow(ConfigError);
    // A scripted default could never run: only a goal can supply the script.
    expect(() => load({ DEFAULT_MODEL_PROVIDER: "scripted" })).toThrow(/DEFAULT_MODEL_PROVIDER/);
  });

  it("merges into an app's config", () => {
    const appSchema = z.object({ PORT: z.coerce.number().default(3000) }).extend(modelConfigSchema.shape);
    const cfg = parseConfig(appSchema, { PORT: "8080", ANTHROPIC_API_KEY: "k" });
    expect(cfg.PORT).toBe(8080);
    expect(enabledProviders(cfg)).toEqual(["anthropic"]);
  });

  it("enables each provider only with what it needs", () => {
    expect(enabledProviders(load({ OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:1/v1" }))).toEqual([]);
    expect(
      enabledProviders(
        load({
          OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:1/v1",
          OPENAI_COMPATIBLE_MODEL: "m",
          GOOGLE_GENERATIVE_AI_API_KEY: "g",
          ANTHROPIC_API_KEY: "a",
          LOOPSMITH_SCRIPTED_MODEL: "true",
        }),
      ),
    ).toEqual(["openai-compatible", "anthropic", "google", "scripted"]);
  });
});

describe("resolveModelSpec", () => {
  it("keeps an enabled spec and fills in the default provider", () => {
    const cfg = load({ ANTHROPIC_API_KEY: "a", GOOGLE_GENERATIVE_AI_API_KEY: "g" });
    expect(resolveModelSpec({ provider: "google", model: "gemini-x" }, cfg)).toEqual({ provider: "google", model: "gemini-x" });
    expect(resolveModelSpec(undefined, cfg)).toEqual({ provider: "anthropic" });
    expect(resolveModelSpec(undefined, load({ ANTHROPIC_API_KEY: "a", GOOGLE_GENERATIVE_AI_API_KEY: "g", DEFAULT_MODEL_PROVIDER: "google" }))).toEqual({
      provider: "google",
    });
  });

  it("refuses a disabled provider with a message naming the env vars and the field path", () => {
    const err = disabledError(() => resolveModelSpec({ provider: "scripted", script: script() }, load({})));
    expect(err.message).toMatch(/"scripted".*LOOPSMITH_SCRIPTED_MODEL/);
    expect(err.details).toEqual([{ path: "model.provider", message: err.message }]);
    expect(err.status).toBe(400);

    const openai = disabledError(() => resolveModelSpec({ provider: "openai-compatible" }, load({})));
    expect(openai.message).toMatch(/OPENAI_COMPATIBLE_BASE_URL/);
    // The same refusal when a service builds the model directly.
    disabledError(() => createModel({ provider: "google" }, load({})));
  });

  it("refuses a disabled default, and a missing default even when scripted is on", () => {
    const err = disabledError(() => resolveModelSpec(undefined, load({ DEFAULT_MODEL_PROVIDER: "google" })));
    expect(err.message).toMatch(/GOOGLE_GENERATIVE_AI_API_KEY/);
    const none = disabledError(() => resolveModelSpec(undefined, load({ LOOPSMITH_SCRIPTED_MODEL: "true" })));
    expect(none.message).toMatch(/names no model provider/);
    expect(none.message).toMatch(/scripted/);
    expect(resolveModelSpec({ provider: "scripted", script: script() }, load({ LOOPSMITH_SCRIPTED_MODEL: "true" })).provider).toBe("scripted");
  });
});
