import { z } from "zod";

export const DEFAULT_DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:5432/loopsmith";
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/** Settings every process shares. Each app extends this with its own fields. */
export const baseConfigSchema = z.object({
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default(DEFAULT_DATABASE_URL),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).default(DEFAULT_REDIS_URL),
  // Unset means dockerode's default: DOCKER_HOST if set, else /var/run/docker.sock.
  DOCKER_HOST: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  QUEUE_PREFIX: z.string().regex(/^[a-zA-Z0-9:_-]+$/).default("loopsmith"),
  SANDBOX_IMAGE: z.string().min(1).optional(),
  /** issue 14: the image of JavaScript and TypeScript goals (default: the checkout's loopsmith/sandbox-node tag). */
  SANDBOX_NODE_IMAGE: z.string().min(1).optional(),
});

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration:\n${issues.map((i) => `  - ${i}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/**
 * Parse the environment once, at start-up, into a frozen object. Nothing else reads process.env.
 * Empty strings count as unset so that `FOO=` in a .env file means "use the default".
 */
export function parseConfig<S extends z.ZodType>(schema: S, env: Record<string, string | undefined>): Readonly<z.output<S>> {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`),
    );
  }
  return Object.freeze(result.data);
}

/** For entry points: a bad config stops the process with a message naming each variable (exit 78, EX_CONFIG). */
export function configOrExit<T>(processName: string, load: () => T): T {
  try {
    return load();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(`${processName}: ${e.message}`);
      process.exit(78);
    }
    throw e;
  }
}
