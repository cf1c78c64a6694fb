import { createAnthropic } from "@ai-sdk/anthropic";
import { createGoogleGenerativeAI } from "@ai-sdk/google";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import type { ModelProvider, ModelSpec } from "@loopsmith/schemas";
import {
  generateText,
  NoObjectGeneratedError,
  NoOutputGeneratedError,
  Output,
  type LanguageModel,
  type LanguageModelUsage,
  type ModelMessage,
} from "ai";
import { isProviderEnabled, providerDisabledError, type ModelConfig } from "./config";
import { describeTransportError, ModelOutputError, ModelUnavailableError, summarizeOutputError } from "./errors";
import { providerSchema } from "./provider-schema";
import { createScriptedModel } from "./scripted";
import type { LoopModel, ModelRequest, ModelResponse, ModelUsage, RejectedReply } from "./types";

export interface AiSdkModelOptions {
  provider: ModelProvider;
  modelName: string;
  model: LanguageModel;
  /** Extra tries after a reply that fails the schema; each one sees the validation error. */
  schemaRetries: number;
  /** The SDK's own retries of retryable HTTP failures (429, 5xx, network). */
  maxRetries: number;
  /** Per try, including the SDK's HTTP retries and their backoff. */
  timeoutMs: number;
  maxOutputTokens: number;
  /** Passed to generateText as is (e.g. the openai-compatible strict-schema switch). */
  providerOptions?: Record<string, Record<string, boolean | string | number>>;
}

function addUsage(total: ModelUsage, usage: LanguageModelUsage | undefined): void {
  total.inputTokens += usage?.inputTokens ?? 0;
  total.outputTokens += usage?.outputTokens ?? 0;
}

type TryResult<T> = { ok: true; output: T } | { ok: false; rejected: RejectedReply };

/** A LoopModel over any AI SDK language model, with schema retries that show the model its own mistake. */
export function createAiSdkModel(opts: AiSdkModelOptions): LoopModel {
  const { provider, modelName } = opts;

  return {
    provider,
    modelName,
    async complete<T>(req: ModelRequest<T>): Promise<ModelResponse<T>> {
      const output = Output.object({ schema: providerSchema(req.schema), name: req.schemaName });
      const messages: ModelMessage[] = [{ role: "user", content: req.prompt }];
      const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
      const rejected: RejectedReply[] = [];
      let latencyMs = 0;

      // One try: the validated object, or the rejected reply to feed back. Transport failures throw as is.
      const tryOnce = async (): Promise<TryResult<T>> => {
        try {
          const result = await generateText({
            model: opts.model,
            system: req.system,
            messages,
            output,
            maxRetries: opts.maxRetries,
            maxOutputTokens: opts.maxOutputTokens,
            providerOptions: opts.providerOptions,
            abortSignal: AbortSignal.timeout(opts.timeoutMs),
          });
          addUsage(usage, result.usage);
          try {
            return { ok: true, output: result.output };
          } catch (e) {
            // The SDK parses only a reply that finished with "stop" or holds text; an empty reply cut off by
            // the token limit or a content filter has no output at all.
            if (!NoOutputGeneratedError.isInstance(e)) throw e;
            const error = `the reply held no JSON object (finish reason: ${result.finishReason})`;
            return { ok: false, rejected: { text: result.text || null, error } };
          }
        } catch (e) {
          if (!NoObjectGeneratedError.isInstance(e)) throw e;
          addUsage(usage, e.usage);
          const truncated = e.finishReason === "length" ? "the reply was cut off at the output token limit; " : "";
          return { ok: false, rejected: { text: e.text ?? null, error: truncated + summarizeOutputError(e.cause) } };
        }
      };

      const timedTry = async (): Promise<TryResult<T>> => {
        const started = performance.now();
        try {
          return await tryOnce();
        } catch (e) {
          const transport = describeTransportError(e);
          if (transport === undefined) throw e;
          throw new ModelUnavailableError(`${provider} model "${modelName}" is unavailable: ${transport.message}`, {
            statusCode: transport.statusCode,
            providerMessage: transport.message,
            usage,
            latencyMs: Math.round(latencyMs + performance.now() - started),
            cause: e,
          });
        } finally {
          latencyMs += performance.now() - started;
        }
      };

      for (let tries = 1; ; tries++) {
        const result = await timedTry();
        if (result.ok) return { output: result.output, usage, latencyMs: Math.round(latencyMs), tries, rejected };
        rejected.push(result.rejected);
        if (tries > opts.schemaRetries) {
          throw new ModelOutputError(
            `${provider} model "${modelName}" gave no valid ${req.schemaName} in ${tries} tries; last error: ${result.rejected.error}`,
            { tries, rejected, usage, latencyMs: Math.round(latencyMs) },
          );
        }
        // Show the model its own reply and what was wrong with it: a bare retry tends to repeat the mistake.
        if (result.rejected.text) messages.push({ role: "assistant", content: result.rejected.text });
        messages.push({
          role: "user",
          content:
            `Your previous reply did not match the required JSON schema: ${result.rejected.error}. ` +
            "Reply again with only the corrected JSON object.",
        });
      }
    },
  };
}

/** Config values a provider cannot run without; resolveModelSpec has normally refused the goal already. */
function required(value: string | undefined, provider: ModelProvider): string {
  if (value === undefined) throw providerDisabledError(provider);
  return value;
}

/** The LoopModel for a goal's spec. `fetch` lets tests intercept the provider's HTTP calls. */
export function createModel(spec: ModelSpec, config: ModelConfig, opts: { fetch?: typeof fetch } = {}): LoopModel {
  if (!isProviderEnabled(spec.provider, config)) throw providerDisabledError(spec.provider);
  const settings = {
    schemaRetries: config.MODEL_SCHEMA_RETRIES,
    maxRetries: config.MODEL_HTTP_RETRIES,
    timeoutMs: config.MODEL_TIMEOUT_MS,
    maxOutputTokens: config.MODEL_MAX_OUTPUT_TOKENS,
  };
  switch (spec.provider) {
    case "scripted":
      return createScriptedModel(spec.script);
    case "openai-compatible": {
      const modelName = required(spec.model ?? config.OPENAI_COMPATIBLE_MODEL, spec.provider);
      const openai = createOpenAICompatible({
        name: "openai-compatible",
        baseURL: required(config.OPENAI_COMPATIBLE_BASE_URL, spec.provider),
        apiKey: config.OPENAI_COMPATIBLE_API_KEY,
        // Without it the SDK sends only {"type":"json_object"} and the schema never reaches the model.
        supportsStructuredOutputs: true,
        fetch: opts.fetch,
      });
      return createAiSdkModel({
        provider: spec.provider,
        modelName,
        model: openai(modelName),
        ...settings,
        // Strict mode needs every property required and no free-form objects, which check params are;
        // off by default, the schema still reaches the model as guidance and zod still validates the reply.
        providerOptions: { openaiCompatible: { strictJsonSchema: config.OPENAI_COMPATIBLE_STRICT_JSON_SCHEMA } },
      });
    }
    case "anthropic": {
      const modelName = spec.model ?? config.ANTHROPIC_MODEL;
      const anthropic = createAnthropic({
        apiKey: required(config.ANTHROPIC_API_KEY, spec.provider),
        baseURL: config.ANTHROPIC_BASE_URL,
        fetch: opts.fetch,
      });
      return createAiSdkModel({ provider: spec.provider, modelName, model: anthropic(modelName), ...settings });
    }
    case "google": {
      const modelName = spec.model ?? config.GOOGLE_MODEL;
      const google = createGoogleGenerativeAI({
        apiKey: required(config.GOOGLE_GENERATIVE_AI_API_KEY, spec.provider),
        baseURL: config.GOOGLE_BASE_URL,
        fetch: opts.fetch,
      });
      return createAiSdkModel({ provider: spec.provider, modelName, model: google(modelName), ...settings });
    }
  }
}
