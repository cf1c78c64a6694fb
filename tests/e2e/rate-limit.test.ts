// The per-tenant rate limit (RATE_LIMIT_PER_MINUTE) on the real Redis: a fixed one-minute window per
// tenant, 429 with Retry-After past it, other tenants and health untouched, and Redis trouble never
// taking the API down.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ERROR_CATALOG } from "@loopsmith/core";
import { createTenant } from "@loopsmith/db";
import { build } from "../../apps/api/src/app";
import { RATE_WINDOW_MS, rateLimitKey } from "../../apps/api/src/rate-limit";
import { startLoop, type Loop } from "../support/loop";
import { closedPort, REDIS_URL } from "../support/services";

const LIMIT = 5;
let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ runner: false, env: { RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
});
afterAll(async () => {
  await loop?.close();
});

/** Waits out the end of a window when fewer than `needMs` remain, so a burst lands in one window. */
async function roomInWindow(needMs = 5_000) {
  const left = RATE_WINDOW_MS - (Date.now() % RATE_WINDOW_MS);
  if (left < needMs) await new Promise((r) => setTimeout(r, left + 50));
}

type ErrorBody = { error: { code: string; message: string; details: { limit: number; retry_after_seconds: number } } };

describe("RATE_LIMIT_PER_MINUTE", () => {
  it("answers a tenant's 6th request in the window with 429, Retry-After and LS_ERR_RATE_LIMITED", async () => {
    await roomInWindow();
    const answers = [];
    for (let i = 0; i < LIMIT; i++) answers.push(await loop.request("GET", "/goals"));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((a) => a.headers["x-ratelimit-limit"])).toEqual(Array(LIMIT).fill(String(LIMIT)));
    expect(answers.map((a) => a.headers["x-ratelimit-remaining"])).toEqual(["4", "3", "2", "1", "0"]);

    const sixth = await loop.request("GET", "/goals");
    expect(sixth.status).toBe(429);
    const body = sixth.body as unknown as ErrorBody;
    expect(body.error.code).toBe("LS_ERR_RATE_LIMITED");
    expect(ERROR_CATALOG.LS_ERR_RATE_LIMITED.status).toBe(429);
    const retryAfter = sixth.headers["retry-after"];
    expect(retryAfter).toMatch(/^\d+$/);
    const seconds = Number(retryAfter);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(60);
    expect(body.error.details).toEqual({ limit: LIMIT, retry_after_seconds: seconds });
    expect(sixth.headers["x-ratelimit-remaining"]).toBe("0");

    // The count lives in Redis under the tenant's window key and expires by itself.
    const redis = new Redis(REDIS_URL);
    try {
      const key = rateLimitKey(loop.prefix, loop.tenant.tenant_id, Math.floor(Date.now() / RATE_WINDOW_MS));
      expect(await redis.get(key)).toBe(String(LIMIT + 1));
      const ttl = await redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(RATE_WINDOW_MS);
    } finally {
      redis.disconnect();
    }

    // Every route a tenant calls counts, and the limit holds for them too.
    const post = await loop.post({ objective: "x" });
    expect(post.status).toBe(429);
    const one = await loop.request("GET", "/goals/00000000-0000-4000-8000-000000000000");
    expect(one.status).toBe(429);
  });

  it("counts each tenant on its own: another tenant is not limited", async () => {
    await roomInWindow();
    const other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
    // Spend this tenant's window (it may already be spent by the test above).
    for (let i = 0; i <= LIMIT; i++) await loop.request("GET", "/goals");
    expect((await loop.request("GET", "/goals")).status).toBe(429);
    for (let i = 0; i < LIMIT; i++) {
      const res = await loop.request("GET", "/goals", { key: other.api_key });
      expect(res.status, `other tenant request ${i + 1}`).toBe(200);
    }
    expect((await loop.request("GET", "/goals", { key: other.api_key })).status).toBe(429);
  });

  it("never limits /healthz, /readyz or requests without a valid key", async () => {
    await roomInWindow();
    for (let i = 0; i <= LIMIT; i++) await loop.request("GET", "/goals");
    expect((await loop.request("GET", "/goals")).status).toBe(429);
    for (let i = 0; i < 3 * LIMIT; i++) {
      const health = await loop.request("GET", "/healthz", { key: null });
      expect(health.status).toBe(200);
      expect(health.headers["x-ratelimit-limit"]).toBeUndefined();
      // Even with the limited tenant's key: health is not a tenant route.
      expect((await loop.request("GET", "/healthz")).status).toBe(200);
      expect((await loop.request("GET", "/readyz")).status).toBe(200);
      // An unknown key is a 401, not a 429: nothing is counted before the tenant is known.
      expect((await loop.request("GET", "/goals", { key: "lsk_unknown" })).status).toBe(401);
    }
  });

  it("lets requests through when Redis fails: the limiter must not take the API down", async () => {
    const dead = new Redis({ port: await closedPort(), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    dead.on("error", () => undefined);
    await dead.connect().catch(() => undefined);
    // A Redis that accepts commands but never answers (offline queue, never connects): the timeout lets it through.
    const hung = new Redis({ port: await closedPort(), lazyConnect: true, maxRetriesPerRequest: null, retryStrategy: () => 60_000 });
    hung.on("error", () => undefined);
    try {
      for (const redis of [dead, hung]) {
        const app = await build({
          logger: false,
          readiness: { postgres: async () => "", redis: async () => "", docker: async () => "", sandbox_image: async () => "" },
          services: {
            prisma: loop.prisma,
            enqueue: async () => undefined,
            models: { LOOPSMITH_SCRIPTED_MODEL: true } as never,
            budgets: {} as never,
            webhooks: {} as never,
            webhookQueue: loop.webhookQueue,
            secretBox: loop.secretBox,
            rateLimit: { redis, perMinute: 1 },
          },
        });
        try {
          const started = Date.now();
          for (let i = 0; i < 3; i++) {
            const res = await app.inject({ method: "GET", url: "/goals", headers: { authorization: `Bearer ${loop.tenant.api_key}` } });
            expect(res.statusCode, res.body).toBe(200);
            expect(res.headers["x-ratelimit-limit"]).toBeUndefined();
          }
          expect(Date.now() - started).toBeLessThan(10_000);
        } finally {
          await app.close();
        }
      }
    } finally {
      dead.disconnect();
      hung.disconnect();
    }
  });
});
