import { z } from "zod";
import { LoopSmithError } from "@loopsmith/core";
import { modelProviders, type ModelProvider, type ModelSpec } from "@loopsmith/schemas";
import { BUILTIN_MODELS } from "./pricing";

export const DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-5";
export const DEFAULT_GOOGLE_MODEL = "gemini-2.5-flash";

/** The providers nothing but a secret key enables. */
const KEY_ENABLED = ["anthropic", "google"] as const;

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
const positive = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * Model settings from the environment. Apps merge them into their own config with
 * `.extend(modelConfigSchema.shape)`. Credentials live here only, never in goal requests.
 */
export const modelConfigSchema = z.object({
  // Off by default: a scripted goal bypasses real judgement, so a server has to opt in.
  LOOPSMITH_SCRIPTED_MODEL: z.stringbool({ truthy: ["true", "1"], falsy: ["false", "0"] }).default(false),
  // Scripted cannot be a default: it needs a script, which only a goal can supply.
  DEFAULT_MODEL_PROVIDER: z.enum(modelProviders).exclude(["scripted"]).optional(),
  OPENAI_COMPATIBLE_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  // Optional: local servers (llama.cpp, vLLM, Ollama) take no key.
  OPENAI_COMPATIBLE_API_KEY: z.string().min(1).optional(),
  OPENAI_COMPATIBLE_MODEL: z.string().min(1).optional(),
  // Servers with OpenAI's strict structured outputs reject free-form objects such as check params.
  OPENAI_COMPATIBLE_STRICT_JSON_SCHEMA: z.stringbool({ truthy: ["true", "1"], falsy: ["false", "0"] }).default(false),
  ANTHROPIC_API_KEY: z.string().min(1).optional(),
  ANTHROPIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  ANTHROPIC_MODEL: z.string().min(1).default(DEFAULT_ANTHROPIC_MODEL),
  GOOGLE_GENERATIVE_AI_API_KEY: z.string().min(1).optional(),
  GOOGLE_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  GOOGLE_MODEL: z.string().min(1).default(DEFAULT_GOOGLE_MODEL),
  // issue 25: for a process that checks goals but never calls a model, the API in docker-compose, which
  // is not given the providers' keys: the key-enabled providers the runners hold keys for, comma-separated.
  // Listed, a provider counts as enabled here; the runners still need its key to run a goal.
  MODEL_PROVIDERS: z
    .string()
    .default("")
    .transform((raw, ctx) => {
      const listed = raw
        .split(",")
        .map((p) => p.trim())
        .filter(Boolean);
      for (const p of listed.filter((p) => !(KEY_ENABLED as readonly string[]).includes(p))) {
        const hint = p === "openai-compatible" ? " (OPENAI_COMPATIBLE_BASE_URL and OPENAI_COMPATIBLE_MODEL enable it, and hold no secret)" : "";
        ctx.addIssue({ code: "custom", message: `"${p.slice(0, 40)}" is not one of ${KEY_ENABLED.join(", ")}${hint}` });
      }
      return listed as (typeof KEY_ENABLED)[number][];
    }),
  /** Extra tries, with the validation error fed back, when a reply does not match the schema. */
  MODEL_SCHEMA_RETRIES: count(2),
  /** The AI SDK's own retries of retryable HTTP failures (429, 5xx, network), with backoff. */
  MODEL_HTTP_RETRIES: count(2),
  /** Per try, covering the SDK's HTTP retries too. */
  MODEL_TIMEOUT_MS: positive(120_000),
  MODEL_MAX_OUTPUT_TOKENS: positive(8192),
  /**
   * The model names a goal may ask for, per provider, as JSON: {"anthropic": ["claude-sonnet-4-5"], ...}.
   * A provider listed here allows exactly these names plus its configured default model; a provider not
   * listed allows its default model plus the built-in price table's models of that provider.
   */
  MODEL_ALLOWLIST: z
    .string()
    .transform((s, ctx) => {
      try {
        return z
          .partialRecord(z.enum(["openai-compatible", "anthropic", "google"]), z.array(z.string().min(1).max(200)))
          .parse(JSON.parse(s));
      } catch (e) {
        ctx.addIssue({ code: "custom", message: `MODEL_ALLOWLIST must be JSON {"anthropic": ["model", ...], "google": [...], "openai-compatible": [...]}: ${(e as Error).message}` });
        return z.NEVER;
      }
    })
    .optional(),
});
export type ModelConfig = z.output<typeof modelConfigSchema>;

/** What each provider needs, for error messages. */
const ENABLED_BY: Record<ModelProvider, string> = {
  scripted: "LOOPSMITH_SCRIPTED_MODEL=true",
  "openai-compatible": "OPENAI_COMPATIBLE_BASE_URL and OPENAI_COMPATIBLE_MODEL (plus OPENAI_COMPATIBLE_API_KEY if the server needs one)",
  anthropic: "ANTHROPIC_API_KEY (or, on an API not given the key, MODEL_PROVIDERS=anthropic)",
  google: "GOOGLE_GENERATIVE_AI_API_KEY (or, on an API not given the key, MODEL_PROVIDERS=google)",
};

export function isProviderEnabled(provider: ModelProvider, config: ModelConfig): boolean {
  switch (provider) {
    case "scripted":
      return config.LOOPSMITH_SCRIPTED_MODEL;
    case "openai-compatible":
      return config.OPENAI_COMPATIBLE_BASE_URL !== undefined && config.OPENAI_COMPATIBLE_MODEL !== undefined;
    case "anthropic":
      return config.ANTHROPIC_API_KEY !== undefined || config.MODEL_PROVIDERS.includes("anthropic");
    case "google":
      return config.GOOGLE_GENERATIVE_AI_API_KEY !== undefined || config.MODEL_PROVIDERS.includes("google");
  }
}

/** Enabled providers, in the order a default is picked from (scripted last: it can never be a default). */
export function enabledProviders(config: ModelConfig): ModelProvider[] {
  const order: ModelProvider[] = ["openai-compatible", "anthropic", "google", "scripted"];
  return order.filter((p) => isProviderEnabled(p, config));
}

export function providerDisabledError(provider: ModelProvider): LoopSmithError {
  const message = `Model provider "${provider}" is not enabled on this server; it needs ${ENABLED_BY[provider]}.`;
  return new LoopSmithError("LS_ERR_MODEL_DISABLED", message, [{ path: "model.provider", message }]);
}

/** The server's default model name for a provider (undefined for openai-compatible without OPENAI_COMPATIBLE_MODEL). */
export function defaultModelName(provider: Exclude<ModelProvider, "scripted">, c: ModelConfig): string | undefined {
  if (provider === "openai-compatible") return c.OPENAI_COMPATIBLE_MODEL;
  return provider === "anthropic" ? c.ANTHROPIC_MODEL : c.GOOGLE_MODEL;
}

/**
 * The model names a goal may name for a provider. A client never chooses an unpriced or arbitrary model
 * on the operator's key: an unlisted name would be billed at the fallback price (or not at all, if the
 * table has a cheaper lookalike), and some SDKs put the name into the request URL's path.
 */
export function allowedModelNames(provider: Exclude<ModelProvider, "scripted">, c: ModelConfig): string[] {
  const listed = c.MODEL_ALLOWLIST?.[provider] ?? BUILTIN_MODELS[provider];
  const fallback = defaultModelName(provider, c);
  return [...new Set([...(fallback ? [fallback] : []), ...listed])];
}

/**
 * The spec a goal runs with: the goal's own, or the server's default provider when it names none.
 * Throws LS_ERR_MODEL_DISABLED (a 400, so the API can refuse the goal up front) when that provider is off.
 */
export function resolveModelSpec(spec: ModelSpec | undefined, config: ModelConfig): ModelSpec {
  if (spec !== undefined) {
    if (!isProviderEnabled(spec.provider, config)) throw providerDisabledError(spec.provider);
    if (spec.provider !== "scripted" && spec.model !== undefined) {
      const allowed = allowedModelNames(spec.provider, config);
      if (!allowed.includes(spec.model)) {
        const message = `Model "${spec.model}" is not allowed for ${spec.provider} on this server; allowed: ${allowed.map((m) => `"${m}"`).join(", ")} (operators set MODEL_ALLOWLIST).`;
        throw new LoopSmithError("LS_ERR_MODEL_NOT_ALLOWED", message, [{ path: "model.model", message }]);
      }
    }
    return spec;
  }
  if (config.DEFAULT_MODEL_PROVIDER !== undefined) {
    if (!isProviderEnabled(config.DEFAULT_MODEL_PROVIDER, config)) throw providerDisabledError(config.DEFAULT_MODEL_PROVIDER);
    return { provider: config.DEFAULT_MODEL_PROVIDER };
  }
  const fallback = enabledProviders(config).find((p): p is Exclude<ModelProvider, "scripted"> => p !== "scripted");
  if (fallback !== undefined) return { provider: fallback };
  const scriptedHint = config.LOOPSMITH_SCRIPTED_MODEL ? ' The scripted provider is enabled: name it with a script ({"provider": "scripted", "script": {...}}).' : "";
  const message =
    "The goal names no model provider and this server has no default; configure one of " +
    `${(["openai-compatible", "anthropic", "google"] as const).map((p) => `${p} (${ENABLED_BY[p]})`).join(", ")}.${scriptedHint}`;
  throw new LoopSmithError("LS_ERR_MODEL_DISABLED", message, [{ path: "model.provider", message }]);
}
