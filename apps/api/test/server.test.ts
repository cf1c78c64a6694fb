import { describe, expect, it } from "vitest";
import { spawnTs } from "../../../scripts/lib/proc";
import { spawnRunner } from "../../../tests/support/runner-process";
import { closedPort, DATABASE_URL, randomPrefix, REDIS_URL } from "../../../tests/support/services";

interface ReadyzBody {
  status: string;
  missing: string[];
  checks: Record<string, { ok: boolean; detail: string }>;
}

describe("api server process", () => {
  it("refuses to start on invalid config and names the variable", async () => {
    const p = spawnTs("apps/api/src/server.ts", { PORT: "not-a-port", DATABASE_URL: "mysql://x" });
    const { code } = await p.exited;
    expect(code).toBe(78);
    expect(p.output()).toMatch(/PORT/);
    expect(p.output()).toMatch(/DATABASE_URL/);
  });

  // Issue 28.6: readiness comes from the runners' heartbeats only. The API is not ready without a runner of
  // its queue prefix, ready once a real runner process has started and passed its sandbox self-check, and
  // not ready again once that runner has stopped.
  it("listens, is ready only while a runner of its queue prefix is, and stops cleanly on SIGTERM", async () => {
    const port = await closedPort();
    const prefix = randomPrefix("server");
    const api = spawnTs("apps/api/src/server.ts", { PORT: String(port), DATABASE_URL, REDIS_URL, QUEUE_PREFIX: prefix, LOG_LEVEL: "info" });
    const readyz = async (): Promise<{ status: number; body: ReadyzBody }> => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      return { status: res.status, body: (await res.json()) as ReadyzBody };
    };
    /** Polls /readyz until `until` holds (within a bound: the answer depends on other processes starting). */
    const readyzUntil = async (until: (r: { status: number; body: ReadyzBody }) => boolean, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      let r = await readyz();
      while (!until(r) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        r = await readyz();
      }
      return r;
    };
    let runner: ReturnType<typeof spawnRunner> | undefined;
    try {
      await api.waitFor(/Server listening/, 30_000);
      // Listening comes first; its Redis connection follows (a loaded machine showed "Stream isn't
      // writeable" for the first request).
      const alone = await readyzUntil((r) => r.body.checks.redis?.ok === true && r.body.checks.postgres?.ok === true, 15_000);
      expect(alone.status, JSON.stringify(alone.body)).toBe(503);
      expect(alone.body.missing).toEqual(["docker", "sandbox_image"]);

      // A runner that asks for a runtime the engine lacks stops at once, naming it (a configuration error).
      const wrong = spawnRunner({ prefix, id: `${prefix}-r0`, env: { SANDBOX_RUNTIME: "no-such-runtime" } });
      expect((await wrong.proc.exited).code).toBe(78);
      // (A freshly started engine also lists containerd's shims: io.containerd.runc.v2, ...)
      expect(wrong.output()).toMatch(/SANDBOX_RUNTIME=no-such-runtime: the Docker engine has no such runtime \(runtimes: ([^)]*, )?runc, runsc\)/);

      // The product's default: gVisor where the engine offers it, said once at start-up and in /readyz.
      runner = spawnRunner({ prefix, id: `${prefix}-r1`, env: { SANDBOX_RUNTIME: "auto" } });
      await runner.ready(120_000);
      expect(runner.output()).toMatch(/"msg":"sandboxes run under runsc"/);
      // The ready key follows the self-check, which runs beside the runner's start.
      const ready = await readyzUntil((r) => r.status === 200, 120_000);
      expect(ready.body.missing, JSON.stringify(ready.body)).toEqual([]);
      expect(ready.status).toBe(200);
      expect(ready.body.checks.docker!.detail).toBe("1 runner(s) alive (heartbeats)");
      expect(ready.body.checks.sandbox_image!.detail).toMatch(/^1 runner\(s\) passed the sandbox self-check \(image loopsmith\/sandbox-python:\w+, runtime runsc \(gVisor\)\)$/);

      expect((await runner.stop(10_000)).code).toBe(0);
      runner = undefined;
      const gone = await readyz();
      expect(gone.status).toBe(503);
      expect(gone.body.missing).toEqual(["docker", "sandbox_image"]);
    } finally {
      if (runner) await runner.kill();
      api.child.kill("SIGTERM");
    }
    const { code } = await api.exited;
    expect(code).toBe(0);
  });
});
