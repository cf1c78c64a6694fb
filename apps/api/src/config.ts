import { isIP } from "node:net";
import { z } from "zod";
import { baseConfigSchema, parseConfig } from "@loopsmith/core";
import { metricsConfigSchema } from "@loopsmith/metrics";
import { modelConfigSchema } from "@loopsmith/models";
import { budgetConfigSchema, stepRetryConfigSchema } from "@loopsmith/schemas";
import { webhookConfigSchema } from "@loopsmith/webhooks";

/**
 * Per-tenant caps of the API (README "Tenant limits"); 0 turns one off. Streams are counted per API
 * instance: each instance has its own database pool to protect.
 */
export const apiLimitsConfigSchema = z.object({
  // Goals of one tenant that have not ended (working, awaiting approval, errored); a submit past it is a
  // 429 LS_ERR_GOAL_LIMIT. Bounds the backlog a tenant can pile up (the runner bounds how much of it runs).
  TENANT_MAX_OPEN_GOALS: z.coerce.number().int().min(0).default(200),
  // Open event streams of one tenant, and of everyone, on this instance (429 LS_ERR_STREAM_LIMIT past them).
  SSE_MAX_STREAMS_PER_TENANT: z.coerce.number().int().min(0).default(10),
  SSE_MAX_STREAMS: z.coerce.number().int().min(0).default(200),
  // Stream polls that may hold a database connection at once (the pool has 10): however many streams are
  // open, the other routes keep the rest of the pool; streams only poll less often.
  SSE_MAX_CONCURRENT_POLLS: z.coerce.number().int().min(1).default(3),
  // Schedules of one tenant (409 LS_ERR_SCHEDULE_LIMIT past it), and the shortest time between two ticks a
  // schedule may ask for (every_seconds, or the gaps of a cron expression): each tick costs a transaction
  // and, unpinned, a goal's worth of model calls.
  TENANT_MAX_SCHEDULES: z.coerce.number().int().min(0).default(100),
  SCHEDULE_MIN_INTERVAL_SECONDS: z.coerce.number().int().min(1).default(60),
});
export type ApiLimitsConfig = z.output<typeof apiLimitsConfigSchema>;
/** What build() applies when its caller passes no limits. */
export const DEFAULT_LIMITS: Readonly<ApiLimitsConfig> = parseConfig(apiLimitsConfigSchema, {});

/** TRUST_PROXY, as Fastify's trustProxy option takes it. */
export const trustProxySchema = z
  .string()
  .trim()
  .optional()
  .transform((v, ctx): boolean | number | string[] => {
    if (v === undefined || v === "" || v === "false") return false;
    if (v === "true") return true;
    if (/^\d+$/.test(v)) return Number(v);
    const list = v.split(",").map((x) => x.trim());
    const bad = list.find((x) => !isAddressOrCidr(x));
    if (bad !== undefined) {
      ctx.addIssue({ code: "custom", message: `"${bad}" is not an IP address or CIDR (TRUST_PROXY: false, true, a hop count, or a comma list of addresses/CIDRs)` });
      return z.NEVER;
    }
    return list;
  });

function isAddressOrCidr(x: string): boolean {
  const [addr, bits, ...rest] = x.split("/");
  const family = isIP(addr ?? "");
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  return /^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

export const apiConfigSchema = baseConfigSchema
  .extend(modelConfigSchema.shape)
  .extend(budgetConfigSchema.shape)
  .extend(stepRetryConfigSchema.shape)
  .extend(webhookConfigSchema.shape)
  .extend(apiLimitsConfigSchema.shape)
  .extend(metricsConfigSchema.shape)
  .extend({
    BODY_LIMIT_BYTES: z.coerce.number().int().positive().default(16 * 1024 * 1024),
    // A request body must arrive within this many ms of its headers (408 otherwise).
    BODY_TIMEOUT_MS: z.coerce.number().int().positive().default(30_000),
    // Request bodies of 1 MiB or more read and parsed at once per API process; the rest wait (503 after BODY_TIMEOUT_MS).
    LARGE_BODY_CONCURRENCY: z.coerce.number().int().positive().default(2),
    // Requests one API process works on at once (auth, database, handler); one more is answered 503
    // LS_ERR_BUSY with Retry-After at once instead of queueing for the database pool. 0 disables.
    API_MAX_IN_FLIGHT: z.coerce.number().int().min(0).default(64),
    // How long a request's headers may take to arrive (408 LS_ERR_HEADERS_TIMEOUT after it). Node refuses
    // more than its request timeout (300 s).
    HEADERS_TIMEOUT_MS: z.coerce.number().int().positive().max(300_000).default(30_000),
    // The API process's pooled database connections.
    DATABASE_POOL_SIZE: z.coerce.number().int().positive().default(10),
    // How long a query waits for one of them before its request is answered 503 LS_ERR_BUSY; also bounds
    // opening a connection (then 503 LS_ERR_NOT_READY).
    DATABASE_POOL_TIMEOUT_MS: z.coerce.number().int().positive().default(5000),
    HOST: z.string().min(1).default("127.0.0.1"),
    PORT: z.coerce.number().int().min(0).max(65535).default(3000),
    READY_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(2000),
    // Gone: /readyz always reads the runners' heartbeats and self-check results in Redis. Refused rather
    // than ignored: whoever still sets it may still hand the API a Docker socket it no longer uses, and
    // "docker" would otherwise silently stop meaning what it said.
    READY_SANDBOX_FROM: z
      .undefined({
        error:
          "no longer read: /readyz always answers from the runners' heartbeats in Redis (same QUEUE_PREFIX as the runners); remove it, and any Docker socket given to the API",
      })
      .optional(),
    // Requests per tenant per minute (all routes but health); 0 disables the limit.
    RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(0).default(600),
    // 401/403 answers per client address per minute before that address gets 429; 0 disables.
    AUTH_FAILURES_PER_MINUTE: z.coerce.number().int().min(0).default(30),
    // Which proxies' X-Forwarded-For to believe for the client's address (the auth-failure limit counts
    // per address): unset or "false", none (the socket's peer is the client); "true", every hop; a
    // number, that many hops; otherwise a comma list of proxy addresses or CIDRs.
    TRUST_PROXY: trustProxySchema,
    // Bearer key for /admin routes (dead letters); unset disables them.
    ADMIN_API_KEY: z.string().min(32, "use at least 32 characters").optional(),
    // What goals record as the LoopSmith that accepted them when the code is not a git checkout (an image).
    LOOPSMITH_VERSION: z.string().min(1).max(200).optional(),
  });
export type ApiConfig = z.output<typeof apiConfigSchema>;

export function loadApiConfig(env: Record<string, string | undefined>): Readonly<ApiConfig> {
  return parseConfig(apiConfigSchema, env);
}
