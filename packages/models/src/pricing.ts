// What a model call costs, from a price table per model (USD per million tokens). The scripted model
// costs nothing; a model missing from the table is priced at the configured fallback, so that a cost cap
// still holds for it (set the fallback to 0 to opt out).
import { z } from "zod";
import type { ModelProvider } from "@loopsmith/schemas";

export const modelPrice = z.object({ input_per_mtok: z.number().nonnegative(), output_per_mtok: z.number().nonnegative() }).strict();
export type ModelPrice = z.infer<typeof modelPrice>;

/** Public list prices when this table was written; override or extend with MODEL_PRICES. */
export const BUILTIN_PRICES: Readonly<Record<string, ModelPrice>> = {
  "claude-sonnet-4-5": { input_per_mtok: 3, output_per_mtok: 15 },
  "claude-haiku-4-5": { input_per_mtok: 1, output_per_mtok: 5 },
  "claude-opus-4-1": { input_per_mtok: 15, output_per_mtok: 75 },
  "gemini-2.5-flash": { input_per_mtok: 0.3, output_per_mtok: 2.5 },
  "gemini-2.5-pro": { input_per_mtok: 1.25, output_per_mtok: 10 },
  "gpt-4.1": { input_per_mtok: 2, output_per_mtok: 8 },
  "gpt-4.1-mini": { input_per_mtok: 0.4, output_per_mtok: 1.6 },
  "gpt-4o-mini": { input_per_mtok: 0.15, output_per_mtok: 0.6 },
};

/** Which provider serves each model of the built-in table: the default allow-list (see allowedModelNames). */
export const BUILTIN_MODELS: Readonly<Record<Exclude<ModelProvider, "scripted">, readonly string[]>> = {
  anthropic: ["claude-sonnet-4-5", "claude-haiku-4-5", "claude-opus-4-1"],
  google: ["gemini-2.5-flash", "gemini-2.5-pro"],
  "openai-compatible": ["gpt-4.1", "gpt-4.1-mini", "gpt-4o-mini"],
};

export const pricingConfigSchema = z.object({
  /** JSON: {"model-name": {"input_per_mtok": 3, "output_per_mtok": 15}, ...}, merged over the built-in table. */
  MODEL_PRICES: z
    .string()
    .transform((s, ctx) => {
      try {
        return z.record(z.string().min(1), modelPrice).parse(JSON.parse(s));
      } catch (e) {
        ctx.addIssue({ code: "custom", message: `MODEL_PRICES must be JSON {"model": {"input_per_mtok": n, "output_per_mtok": n}}: ${(e as Error).message}` });
        return z.NEVER;
      }
    })
    .optional(),
  DEFAULT_PRICE_INPUT_PER_MTOK: z.coerce.number().nonnegative().default(10),
  DEFAULT_PRICE_OUTPUT_PER_MTOK: z.coerce.number().nonnegative().default(30),
});
export type PricingConfig = z.output<typeof pricingConfigSchema>;

export function priceOf(provider: ModelProvider, modelName: string, config: PricingConfig): ModelPrice {
  if (provider === "scripted") return { input_per_mtok: 0, output_per_mtok: 0 };
  return (
    config.MODEL_PRICES?.[modelName] ??
    BUILTIN_PRICES[modelName] ?? { input_per_mtok: config.DEFAULT_PRICE_INPUT_PER_MTOK, output_per_mtok: config.DEFAULT_PRICE_OUTPUT_PER_MTOK }
  );
}

export function costUsd(price: ModelPrice, usage: { inputTokens: number; outputTokens: number }): number {
  return (usage.inputTokens * price.input_per_mtok + usage.outputTokens * price.output_per_mtok) / 1_000_000;
}
