// Per-tenant request limit: a fixed one-minute window counted in Redis, so that every API instance
// shares one count. It runs after auth (it needs the tenant); requests without a tenant (health,
// readiness, docs, admin, unknown routes) are not counted.
import type { FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import { LoopSmithError } from "@loopsmith/core";

export interface RateLimitSettings {
  redis: Redis;
  /** Requests per tenant per minute; 0 or less disables the limit. */
  perMinute: number;
  /** Key prefix: the deployment's queue prefix, so that deployments sharing a Redis count apart (default "loopsmith"). */
  prefix?: string;
  /** How long to wait for Redis before letting the request through (default 1000 ms). */
  timeoutMs?: number;
}

export const RATE_WINDOW_MS = 60_000;

export function rateLimitKey(prefix: string, tenantId: string, windowStartMinute: number): string {
  return `${prefix}:rl:${tenantId}:${windowStartMinute}`;
}

/** Counts this request in the tenant's current window; resolves with the count so far (this one included). */
async function count(s: RateLimitSettings, key: string, timeoutMs: number): Promise<number> {
  // The key outlives its window by a full window after the last write, so instances whose clocks lag a
  // little still count into it; the window in the key name, not the TTL, is what bounds the count.
  const exec = s.redis.multi().incr(key).pexpire(key, RATE_WINDOW_MS).exec();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const replies = await Promise.race([exec, timeout]);
    if (!replies) throw new Error("the MULTI was aborted");
    const [incrErr, n] = replies[0] ?? [new Error("no INCR reply"), null];
    if (incrErr) throw incrErr;
    if (typeof n !== "number") throw new Error(`INCR answered ${String(n)}`);
    return n;
  } finally {
    clearTimeout(timer);
    exec.catch(() => undefined); // a late failure after the timeout has nobody to tell
  }
}

/** Registers the limiter as an onRequest hook. Call it after registerAuth: hooks run in order. */
export function registerRateLimit(app: FastifyInstance, settings: () => RateLimitSettings | undefined): void {
  app.addHook("onRequest", async (req, reply) => {
    const tenant = req.tenant;
    if (!tenant) return;
    const s = settings();
    if (!s || s.perMinute <= 0) return;
    const now = Date.now();
    const window = Math.floor(now / RATE_WINDOW_MS);
    let n: number;
    try {
      n = await count(s, rateLimitKey(s.prefix ?? "loopsmith", tenant.id, window), s.timeoutMs ?? 1000);
    } catch (err) {
      // The limiter protects the API; a Redis outage must not take the API down with it.
      req.log.warn({ err, tenantId: tenant.id }, "rate limiter unavailable; request let through");
      return;
    }
    reply.header("x-ratelimit-limit", String(s.perMinute));
    reply.header("x-ratelimit-remaining", String(Math.max(0, s.perMinute - n)));
    if (n > s.perMinute) {
      const retryAfter = Math.max(1, Math.ceil(((window + 1) * RATE_WINDOW_MS - now) / 1000));
      // Set on the reply before throwing: the error handler answers on this same reply, headers included.
      reply.header("retry-after", String(retryAfter));
      throw new LoopSmithError("LS_ERR_RATE_LIMITED", `More than ${s.perMinute} requests this minute; retry in ${retryAfter} s.`, {
        limit: s.perMinute,
        retry_after_seconds: retryAfter,
      });
    }
  });
}
