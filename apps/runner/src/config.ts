import { z } from "zod";
import { baseConfigSchema, parseConfig } from "@loopsmith/core";
import { modelConfigSchema } from "@loopsmith/models";

export const runnerConfigSchema = baseConfigSchema.extend(modelConfigSchema.shape).extend({
  RUNNER_ID: z.string().regex(/^[a-zA-Z0-9_.-]+$/).optional(),
  RUNNER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(1),
  // How long SIGTERM waits for the job in hand before releasing it back to the queue.
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
  SELF_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
});
export type RunnerConfig = z.output<typeof runnerConfigSchema>;

export function loadRunnerConfig(env: Record<string, string | undefined>): Readonly<RunnerConfig> {
  return parseConfig(runnerConfigSchema, env);
}
