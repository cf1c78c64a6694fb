import { describe, expect, it } from "vitest";
import { ConfigError, LoopSmithError, parseConfig } from "@loopsmith/core";
import { z } from "zod";
import { allowedModelNames, BUILTIN_MODELS, BUILTIN_PRICES, createModel, enabledProviders, modelConfigSchema, resolveModelSpec } from "../src/index";
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

describe("MODEL_PROVIDERS (issue 25: the API in docker-compose is not given the providers' keys)", () => {
  it("enables a key-enabled provider for checking goals without its key", () => {
    const api = load({ MODEL_PROVIDERS: "anthropic, google", MODEL_ALLOWLIST: '{"google": ["gemini-2.5-pro"]}' });
    expect(api.MODEL_PROVIDERS).toEqual(["anthropic", "google"]);
    expect(enabledProviders(api)).toEqual(["anthropic", "google"]);
    expect(resolveModelSpec(undefined, api)).toEqual({ provider: "anthropic" });
    expect(resolveModelSpec({ provider: "google", model: "gemini-2.5-pro" }, api)).toEqual({ provider: "google", model: "gemini-2.5-pro" });
    expect(() => resolveModelSpec({ provider: "google", model: "gemini-0" }, api)).toThrow(/not allowed/);
    expect(enabledProviders(load({}))).toEqual([]);
  });

  it("does not stand in for the key where a model is called, and lists only key-enabled providers", () => {
    expect(disabledError(() => createModel({ provider: "anthropic" }, load({ MODEL_PROVIDERS: "anthropic" }))).message).toMatch(/ANTHROPIC_API_KEY/);
    expect(() => load({ MODEL_PROVIDERS: "anthropic,openai-compatible,scripted" })).toThrow(
      new ConfigError([
        'MODEL_PROVIDERS: "openai-compatible" is not one of anthropic, google (OPENAI_COMPATIBLE_BASE_URL and OPENAI_COMPATIBLE_MODEL enable it, and hold no secret)',
        'MODEL_PROVIDERS: "scripted" is not one of anthropic, google',
      ]),
    );
    // The refusal names both ways to enable the provider.
    expect(disabledError(() => resolveModelSpec({ provider: "google" }, load({}))).message).toMatch(/GOOGLE_GENERATIVE_AI_API_KEY \(or, on an API not given the key, MODEL_PROVIDERS=google\)/);
  });
});

describe("resolveModelSpec", () => {
  it("keeps an enabled spec and fills in the default provider", () => {
    const cfg = load({ ANTHROPIC_API_KEY: "a", GOOGLE_GENERATIVE_AI_API_KEY: "g" });
    expect(resolveModelSpec({ provider: "google", model: "gemini-2.5-pro" }, cfg)).toEqual({ provider: "google", model: "gemini-2.5-pro" });
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

describe("the model allow-list", () => {
  const notAllowed = (fn: () => unknown): LoopSmithError => {
    try {
      fn();
    } catch (e) {
      expect((e as LoopSmithError).code).toBe("LS_ERR_MODEL_NOT_ALLOWED");
      expect((e as LoopSmithError).status).toBe(400);
      return e as LoopSmithError;
    }
    throw new Error("expected LS_ERR_MODEL_NOT_ALLOWED");
  };
  const cfg = load({ ANTHROPIC_API_KEY: "a", GOOGLE_GENERATIVE_AI_API_KEY: "g", OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:1/v1", OPENAI_COMPATIBLE_MODEL: "local-7b" });

  it("by default allows each provider's default model and its built-in priced models, nothing else", () => {
    expect(allowedModelNames("anthropic", cfg)).toEqual(["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"]);
    expect(allowedModelNames("openai-compatible", cfg)).toEqual(["local-7b", "gpt-4.1", "gpt-4.1-mini", "gpt-4o-mini"]);
    expect(resolveModelSpec({ provider: "openai-compatible", model: "local-7b" }, cfg)).toEqual({ provider: "openai-compatible", model: "local-7b" });
    // Unpriced names, a priced model under the wrong provider, a lookalike, a name with a path in it.
    for (const [provider, model] of [
      ["anthropic", "claude-opus-5-unpriced"],
      ["anthropic", "gemini-2.5-pro"],
      ["google", "gemini-2.5-flash "],
      ["google", "../../v1/models/gemini-2.5-pro"],
      ["openai-compatible", "gpt-4.1-turbo"],
    ] as const) {
      const err = notAllowed(() => resolveModelSpec({ provider, model }, cfg));
      expect(err.details).toEqual([{ path: "model.model", message: err.message }]);
      expect(err.message).toContain(`"${model}"`);
    }
  });

  it("the built-in provider lists cover exactly the built-in price table", () => {
    expect(Object.values(BUILTIN_MODELS).flat().sort()).toEqual(Object.keys(BUILTIN_PRICES).sort());
  });

  it("MODEL_ALLOWLIST replaces a provider's built-in list (its default model stays allowed)", () => {
    const c = load({ ANTHROPIC_API_KEY: "a", ANTHROPIC_MODEL: "claude-haiku-4-5", MODEL_ALLOWLIST: '{"anthropic": ["claude-sonnet-4-5"]}' });
    expect(allowedModelNames("anthropic", c)).toEqual(["claude-haiku-4-5", "claude-sonnet-4-5"]);
    notAllowed(() => resolveModelSpec({ provider: "anthropic", model: "claude-opus-4-1" }, c));
    expect(resolveModelSpec({ provider: "anthropic", model: "claude-sonnet-4-5" }, c).provider).toBe("anthropic");
    // Providers it does not list keep the built-in list.
    expect(allowedModelNames("google", c)).toEqual(["gemini-2.5-flash", "gemini-2.5-pro"]);
  });

  it("refuses a malformed MODEL_ALLOWLIST at start-up", () => {
    expect(() => load({ MODEL_ALLOWLIST: '{"anthropic": "claude-sonnet-4-5"}' })).toThrow(ConfigError);
    expect(() => load({ MODEL_ALLOWLIST: '{"openai": ["gpt-4.1"]}' })).toThrow(ConfigError);
    expect(() => load({ MODEL_ALLOWLIST: "not json" })).toThrow(/MODEL_ALLOWLIST/);
  });
});
