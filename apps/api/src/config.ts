import { z } from "zod";
import { baseConfigSchema, parseConfig } from "@loopsmith/core";
import { modelConfigSchema } from "@loopsmith/models";

export const apiConfigSchema = baseConfigSchema.extend(modelConfigSchema.shape).extend({
  BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(16 * 1024 * 1024),
  HOST: z.string().min(1).default("127.0.0.1"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  READY_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
});
export type ApiConfig = z.output<typeof apiConfigSchema>;

export function loadApiConfig(env: Record<string, string | undefined>): Readonly<ApiConfig> {
  return parseConfig(apiConfigSchema, env);
}
