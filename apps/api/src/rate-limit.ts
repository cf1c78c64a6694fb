// Per-tenant request limit: a fixed one-minute window counted in Redis, so that every API instance
// shares one count. It runs after auth (it needs the tenant); admin requests count under "admin";
// requests without either (health, readiness, docs, unknown routes) are not counted.
// Failed authentication is limited too, per client address and before any key is looked at: an address
// that got more than authFailuresPerMinute 401/403 answers this minute gets 429 until the window ends.
import type { FastifyInstance } from "fastify";
import type { Redis } from "ioredis";
import { LoopSmithError } from "@loopsmith/core";
import { isPublic } from "./auth";

export interface RateLimitSettings {
  redis: Redis;
  /** Requests per tenant per minute; 0 or less disables the limit. */
  perMinute: number;
  /** Key prefix: the deployment's queue prefix, so that deployments sharing a Redis count apart (default "loopsmith"). */
  prefix?: string;
  /** How long to wait for Redis before letting the request through (default 1000 ms). */
  timeoutMs?: number;
  /** 401/403 answers per client address per minute before that address is refused (0 disables). */
  authFailuresPerMinute?: number;
}

export const RATE_WINDOW_MS = 60_000;

export function rateLimitKey(prefix: string, tenantId: string, windowStartMinute: number): string {
  return `${prefix}:rl:${tenantId}:${windowStartMinute}`;
}

export function authFailureKey(prefix: string, address: string, windowStartMinute: number): string {
  return `${prefix}:rl-authfail:${address}:${windowStartMinute}`;
}

/** What `reply` resolves with, or a rejection when Redis has not answered within timeoutMs. */
async function withinTimeout<T>(reply: Promise<T>, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from Redis within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([reply, timeout]);
  } finally {
    clearTimeout(timer);
    reply.catch(() => undefined); // a late failure after the timeout has nobody to tell
  }
}

/** Counts this request in the tenant's current window; resolves with the count so far (this one included). */
async function count(s: RateLimitSettings, key: string, timeoutMs: number): Promise<number> {
  // The key outlives its window by a full window after the last write, so instances whose clocks lag a
  // little still count into it; the window in the key name, not the TTL, is what bounds the count.
  const replies = await withinTimeout(s.redis.multi().incr(key).pexpire(key, RATE_WINDOW_MS).exec(), timeoutMs);
  if (!replies) throw new Error("the MULTI was aborted");
  const [incrErr, n] = replies[0] ?? [new Error("no INCR reply"), null];
  if (incrErr) throw incrErr;
  if (typeof n !== "number") throw new Error(`INCR answered ${String(n)}`);
  return n;
}

/** The count so far in a window, without counting (one GET: every authenticated request reads it). */
async function peek(s: RateLimitSettings, key: string, timeoutMs: number): Promise<number> {
  const v = await withinTimeout(s.redis.get(key), timeoutMs);
  const n = v === null ? 0 : Number(v);
  if (!Number.isSafeInteger(n)) throw new Error(`GET answered ${v}`);
  return n;
}

/** Registers the limiter as an onRequest hook. Call it after registerAuth: hooks run in order. */
export function registerRateLimit(app: FastifyInstance, settings: () => RateLimitSettings | undefined): void {
  app.addHook("onRequest", async (req, reply) => {
    const subject = req.tenant?.id ?? (req.admin ? "admin" : undefined);
    if (!subject) return;
    const s = settings();
    if (!s || s.perMinute <= 0) return;
    const now = Date.now();
    const window = Math.floor(now / RATE_WINDOW_MS);
    let n: number;
    try {
      n = await count(s, rateLimitKey(s.prefix ?? "loopsmith", subject, window), s.timeoutMs ?? 1000);
    } catch (err) {
      // The limiter protects the API; a Redis outage must not take the API down with it.
      req.log.warn({ err, subject }, "rate limiter unavailable; request let through");
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

/**
 * The failed-authentication limit. Register before registerAuth: its onRequest hook refuses an address
 * over the limit before the key is looked up; its onResponse hook counts the 401s and 403s.
 */
export function registerAuthFailureLimit(app: FastifyInstance, settings: () => RateLimitSettings | undefined): void {
  const enabled = () => {
    const s = settings();
    return s && (s.authFailuresPerMinute ?? 0) > 0 ? s : undefined;
  };
  app.addHook("onRequest", async (req, reply) => {
    const s = enabled();
    // Health, readiness, the docs and the receipt keys stay open: they need no key to fail.
    if (!s || isPublic(req)) return;
    const now = Date.now();
    const window = Math.floor(now / RATE_WINDOW_MS);
    let n: number;
    try {
      n = await peek(s, authFailureKey(s.prefix ?? "loopsmith", req.ip, window), s.timeoutMs ?? 1000);
    } catch (err) {
      req.log.warn({ err }, "auth failure limiter unavailable; request let through");
      return;
    }
    const limit = s.authFailuresPerMinute!;
    if (n >= limit) {
      const retryAfter = Math.max(1, Math.ceil(((window + 1) * RATE_WINDOW_MS - now) / 1000));
      reply.header("retry-after", String(retryAfter));
      throw new LoopSmithError("LS_ERR_RATE_LIMITED", `More than ${limit} failed authentications from this address this minute; retry in ${retryAfter} s.`, {
        limit,
        retry_after_seconds: retryAfter,
      });
    }
  });
  app.addHook("onResponse", async (req, reply) => {
    // Only answers to requests the auth hook turned away: an authenticated request refused for what it
    // asked is not a failed authentication.
    if ((reply.statusCode !== 401 && reply.statusCode !== 403) || req.tenant || req.admin) return;
    const s = enabled();
    if (!s) return;
    const window = Math.floor(Date.now() / RATE_WINDOW_MS);
    await count(s, authFailureKey(s.prefix ?? "loopsmith", req.ip, window), s.timeoutMs ?? 1000).catch((err: unknown) =>
      req.log.warn({ err }, "auth failure limiter unavailable; failure not counted"),
    );
  });
}
