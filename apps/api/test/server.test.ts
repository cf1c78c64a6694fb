import { describe, expect, it } from "vitest";
import { spawnTs } from "../../../scripts/lib/proc";
import { closedPort, DATABASE_URL, REDIS_URL } from "../../../tests/support/services";

describe("api server process", () => {
  it("refuses to start on invalid config and names the variable", async () => {
    const p = spawnTs("apps/api/src/server.ts", { PORT: "not-a-port", DATABASE_URL: "mysql://x" });
    const { code } = await p.exited;
    expect(code).toBe(78);
    expect(p.output()).toMatch(/PORT/);
    expect(p.output()).toMatch(/DATABASE_URL/);
  });

  it("listens, reports ready, and stops cleanly on SIGTERM", async () => {
    const port = await closedPort();
    const p = spawnTs("apps/api/src/server.ts", { PORT: String(port), DATABASE_URL, REDIS_URL, LOG_LEVEL: "info" });
    try {
      await p.waitFor(/Server listening/, 30_000);
      // Listening comes first; ready follows once its Redis connection is up (a loaded machine showed
      // "Stream isn't writeable" for the first request), so readiness is polled, within a bound.
      const deadline = Date.now() + 15_000;
      let res = await fetch(`http://127.0.0.1:${port}/readyz`);
      while (res.status !== 200 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        res = await fetch(`http://127.0.0.1:${port}/readyz`);
      }
      const body = (await res.json()) as { missing: string[] };
      expect(body.missing, JSON.stringify(body)).toEqual([]);
      expect(res.status).toBe(200);
    } finally {
      p.child.kill("SIGTERM");
    }
    const { code } = await p.exited;
    expect(code).toBe(0);
  });
});
