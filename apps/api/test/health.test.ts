import { build as esbuild } from "esbuild";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPrisma } from "@loopsmith/db";
import { build } from "../src/app";
import { loadApiConfig } from "../src/config";
import { runnerReadiness } from "../src/readiness";
import { runnerHeartbeatKey, runnerReadyKey } from "@loopsmith/schemas";
import { repoRoot } from "../../../scripts/lib/proc";
import { closedPort, DATABASE_URL, randomPrefix, REDIS_URL } from "../../../tests/support/services";

const prisma = createPrisma(DATABASE_URL);
const redis = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
let deadRedis: Redis;

beforeAll(async () => {
  await redis.connect();
  deadRedis = new Redis({ port: await closedPort(), lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  deadRedis.on("error", () => undefined);
  deadRedis.connect().catch(() => undefined);
});
afterAll(async () => {
  await prisma.$disconnect();
  redis.disconnect();
  deadRedis.disconnect();
});

/** A queue prefix with one runner's keys in Redis, as a live runner whose self-check passed writes them. */
async function liveRunner(image = "loopsmith/sandbox-python:x"): Promise<{ prefix: string; gone: () => Promise<void> }> {
  const prefix = randomPrefix("readyz");
  await redis.set(runnerHeartbeatKey(prefix, "r1"), String(Date.now()), "PX", 30_000);
  await redis.set(runnerReadyKey(prefix, "r1"), image, "PX", 30_000);
  return { prefix, gone: async () => void (await redis.del(runnerHeartbeatKey(prefix, "r1"), runnerReadyKey(prefix, "r1"))) };
}

describe("GET /healthz", () => {
  it("answers 200 without touching any dependency", async () => {
    const app = await build({ logger: false, readiness: runnerReadiness({ prisma, redis: deadRedis, prefix: randomPrefix("healthz") }) });
    const res = await app.inject({ method: "GET", url: "/healthz" });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: "ok" });
    await app.close();
  });
});

describe("GET /readyz", () => {
  it("is 200 when Postgres and Redis answer and a runner is alive and has passed its sandbox self-check", async () => {
    const runner = await liveRunner();
    const app = await build({ logger: false, readiness: runnerReadiness({ prisma, redis, prefix: runner.prefix }) });
    try {
      const res = await app.inject({ method: "GET", url: "/readyz" });
      const body = res.json();
      expect(body.missing, JSON.stringify(body)).toEqual([]);
      expect(res.statusCode).toBe(200);
      expect(body.status).toBe("ready");
      for (const name of ["postgres", "redis", "docker", "sandbox_image"]) expect(body.checks[name].ok).toBe(true);
    } finally {
      await app.close();
      await runner.gone();
    }
  });

  it("is 503 naming Redis, and the runner checks it answers, when Redis is not there", async () => {
    const app = await build({ logger: false, readyCheckTimeoutMs: 1500, readiness: runnerReadiness({ prisma, redis: deadRedis, prefix: randomPrefix("readyz") }) });
    const res = await app.inject({ method: "GET", url: "/readyz" });
    expect(res.statusCode).toBe(503);
    const body = res.json();
    expect(body.status).toBe("not_ready");
    expect(body.missing.sort()).toEqual(["docker", "redis", "sandbox_image"]);
    expect(body.checks.postgres.ok).toBe(true);
    await app.close();
  });

  it("is 503 naming Postgres when the database is unreachable", async () => {
    const runner = await liveRunner();
    const deadPrisma = createPrisma(`postgresql://postgres:postgres@127.0.0.1:${await closedPort()}/loopsmith`);
    const app = await build({ logger: false, readiness: runnerReadiness({ prisma: deadPrisma, redis, prefix: runner.prefix }) });
    try {
      const res = await app.inject({ method: "GET", url: "/readyz" });
      expect(res.statusCode).toBe(503);
      expect(res.json().missing).toEqual(["postgres"]);
    } finally {
      await app.close();
      await deadPrisma.$disconnect();
      await runner.gone();
    }
  });

  // Issue 17: /readyz is public. It used to carry the raw error: Prisma's "Invalid `prisma.$queryRaw()`
  // invocation" text with the database's host and port, and Docker's socket path.
  it("shows codes and short messages, without paths, addresses or connection strings", async () => {
    const port = await closedPort();
    const deadPrisma = createPrisma(`postgresql://postgres:hunter2@127.0.0.1:${port}/loopsmith`);
    const noDb = createPrisma(DATABASE_URL.replace(/\/[^/]*$/, "/no_such_database_17"));
    try {
      for (const [db, expected] of [
        [deadPrisma, /^Prisma P\w+: database not reachable$/],
        [noDb, /^Prisma P\w+: /],
      ] as const) {
        const app = await build({ logger: false, readiness: runnerReadiness({ prisma: db, redis, prefix: randomPrefix("readyz") }) });
        const res = await app.inject({ method: "GET", url: "/readyz" });
        await app.close();
        expect(res.statusCode).toBe(503);
        const body = res.json();
        expect(body.missing.sort()).toEqual(["docker", "postgres", "sandbox_image"]);
        expect(body.checks.postgres).toMatchObject({ ok: false, code: "LS_ERR_DATABASE", detail: expect.stringMatching(expected) });
        expect(body.checks.docker).toMatchObject({ ok: false, code: "LS_ERR_SANDBOX_UNAVAILABLE", detail: expect.stringMatching(/^no runner heartbeat under queue prefix /) });
        expect(body.checks.redis).toMatchObject({ ok: true, code: null });
        const text = JSON.stringify(body);
        expect(text).not.toMatch(/invocation|hunter2|postgresql:|127\.0\.0\.1|docker\.sock|\/work\/|\.ts:\d|node_modules/);
        expect(text).not.toContain(String(port));
        for (const c of Object.values(body.checks) as { detail: string }[]) expect(c.detail.length).toBeLessThanOrEqual(300);
      }
    } finally {
      await deadPrisma.$disconnect();
      await noDb.$disconnect();
    }
  });
});

describe("GET /readyz from the runners' heartbeats (issue 13)", () => {
  it("needs no Docker engine: the sandbox is ready once a runner is alive and has passed its self-check", async () => {
    const prefix = randomPrefix("readyz");
    const app = await build({ logger: false, readiness: runnerReadiness({ prisma, redis, prefix }) });
    try {
      const none = await app.inject({ method: "GET", url: "/readyz" });
      expect(none.statusCode).toBe(503);
      expect(none.json().missing).toEqual(["docker", "sandbox_image"]);
      expect(none.json().checks.docker).toMatchObject({ ok: false, code: "LS_ERR_SANDBOX_UNAVAILABLE", detail: expect.stringMatching(/no runner heartbeat/) });

      // Alive, still in its start-up self-check.
      await redis.set(runnerHeartbeatKey(prefix, "r1"), String(Date.now()), "PX", 10_000);
      const starting = await app.inject({ method: "GET", url: "/readyz" });
      expect(starting.json().missing).toEqual(["sandbox_image"]);
      expect(starting.json().checks.sandbox_image.detail).toMatch(/no runner has passed its sandbox self-check/);

      await redis.set(runnerReadyKey(prefix, "r1"), JSON.stringify({ image: "loopsmith/sandbox-python:x", runtime: "runsc", reason: "gVisor (runsc), offered by the engine" }), "PX", 10_000);
      const ready = await app.inject({ method: "GET", url: "/readyz" });
      expect(ready.statusCode).toBe(200);
      expect(ready.json().checks.docker.detail).toBe("1 runner(s) alive (heartbeats)");
      expect(ready.json().checks.sandbox_image.detail).toBe("1 runner(s) passed the sandbox self-check (image loopsmith/sandbox-python:x, runtime runsc (gVisor))");
      // A runner without gVisor says why, once, here (and in its start-up log).
      await redis.set(runnerReadyKey(prefix, "r1"), JSON.stringify({ image: "i", runtime: "runc", reason: "the engine offers no gVisor runtime (runsc)" }), "PX", 10_000);
      expect((await app.inject({ method: "GET", url: "/readyz" })).json().checks.sandbox_image.detail).toBe(
        "1 runner(s) passed the sandbox self-check (image i, runtime runc: the engine offers no gVisor runtime (runsc))",
      );
      // An older runner's value: the image alone.
      await redis.set(runnerReadyKey(prefix, "r1"), "loopsmith/sandbox-python:x", "PX", 10_000);
      expect((await app.inject({ method: "GET", url: "/readyz" })).json().checks.sandbox_image.detail).toBe(
        "1 runner(s) passed the sandbox self-check (image loopsmith/sandbox-python:x, runtime runc)",
      );
      // Another prefix's runners do not count.
      const other = await build({ logger: false, readiness: runnerReadiness({ prisma, redis, prefix: `${prefix}-other` }) });
      expect((await other.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(503);
      await other.close();
    } finally {
      await redis.del(runnerHeartbeatKey(prefix, "r1"), runnerReadyKey(prefix, "r1"));
      await app.close();
    }
  });
});

// Issue 28.6: the API's readiness never asks the Docker engine, so the setting that chose between the engine
// and the runners is gone; a deployment that still sets it is told so at start, whichever value it has.
describe("READY_SANDBOX_FROM", () => {
  it("is refused with a config error that says what /readyz reads instead", () => {
    for (const value of ["docker", "runners"]) {
      expect(() => loadApiConfig({ READY_SANDBOX_FROM: value })).toThrow(/READY_SANDBOX_FROM: no longer read: \/readyz always answers from the runners' heartbeats/);
    }
    expect(() => loadApiConfig({})).not.toThrow();
  });
});

// Issue 28.6: the API never runs code, so nothing it loads reaches the sandbox package or a Docker client
// (compose gives it no socket). Bundled as scripts/build.ts bundles it: the workspace in, npm packages named.
describe("the API's module graph", () => {
  it("holds neither @loopsmith/sandbox nor dockerode", async () => {
    const npmImports = new Set<string>();
    const { metafile } = await esbuild({
      absWorkingDir: repoRoot,
      entryPoints: ["apps/api/src/server.ts"],
      bundle: true,
      write: false,
      metafile: true,
      outdir: "out",
      platform: "node",
      format: "esm",
      logLevel: "silent",
      plugins: [
        {
          name: "record-npm-imports",
          setup(b) {
            b.onResolve({ filter: /^[^./]/ }, (args) => {
              if (args.path.startsWith("@loopsmith/")) return undefined;
              npmImports.add(args.path);
              return { path: args.path, external: true };
            });
          },
        },
      ],
    });
    const files = Object.keys(metafile.inputs);
    expect(files).toContain("apps/api/src/readiness.ts");
    expect(files.filter((f) => f.startsWith("packages/sandbox/"))).toEqual([]);
    expect([...npmImports].filter((n) => /^(dockerode|docker-modem)(\/|$)/.test(n))).toEqual([]);
  });
});

describe("errors", () => {
  it("an unknown route is a 404 with the error shape", async () => {
    const app = await build({ logger: false, readiness: runnerReadiness({ prisma, redis, prefix: randomPrefix("health") }) });
    const res = await app.inject({ method: "GET", url: "/nope" });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: { code: "LS_ERR_NOT_FOUND", message: "No route GET /nope.", details: null } });
    await app.close();
  });
});

describe("GET /docs", () => {
  it("serves Swagger UI and the OpenAPI document it renders", async () => {
    const app = await build({ logger: false, readiness: runnerReadiness({ prisma, redis, prefix: randomPrefix("health") }) });
    const page = await app.inject({ method: "GET", url: "/docs/" });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain("swagger");
    const doc = await app.inject({ method: "GET", url: "/docs/json" });
    expect(doc.statusCode).toBe(200);
    expect(Object.keys(doc.json().paths)).toContain("/readyz");
    await app.close();
  });
});
