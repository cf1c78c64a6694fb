import { z } from "zod";
import { baseConfigSchema, parseConfig } from "@loopsmith/core";
import { modelConfigSchema } from "@loopsmith/models";
import { budgetConfigSchema, stepRetryConfigSchema } from "@loopsmith/schemas";
import { webhookConfigSchema } from "@loopsmith/webhooks";

export const apiConfigSchema = baseConfigSchema
  .extend(modelConfigSchema.shape)
  .extend(budgetConfigSchema.shape)
  .extend(stepRetryConfigSchema.shape)
  .extend(webhookConfigSchema.shape)
  .extend({
    BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(16 * 1024 * 1024),
    // A request body must arrive within this many ms of its headers (408 otherwise).
    BODY_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
    // Request bodies of 1 MiB or more read and parsed at once per API process; the rest wait (503 after BODY_TIMEOUT_MS).
    LARGE_BODY_CONCURRENCY: z.coerce.number().int().positive().default(2),
    HOST: z.string().min(1).default("127.0.0.1"),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    READY_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
    // Requests per tenant per minute (all routes but health); 0 disables the limit.
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
    // 401/403 answers per client address per minute before that address gets 429; 0 disables.
    AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(0).default(30),
    // Bearer key for /admin routes (dead letters); unset disables them.
    ADMIN_API_KEY: z.string().min(32, "use at least 32 characters").optional(),
    // What goals record as the LoopSmith that accepted them when the code is not a git checkout (an image).
    LOOPSMITH_VERSION: z.string().min(1).max(200).optional(),
  });
export type ApiConfig = z.output<typeof apiConfigSchema>;

export function loadApiConfig(env: Record<string, string | undefined>): Readonly<ApiConfig> {
  return parseConfig(apiConfigSchema, env);
}
