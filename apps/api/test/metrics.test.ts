// Issue 13: GET /metrics, behind METRICS_TOKEN (off without it), not in the OpenAPI document, and every
// request timed by its route template.
import { describe, expect, it } from "vitest";
import { createPromMetrics } from "@loopsmith/metrics";
import { sample } from "../../../packages/metrics/test/parse";
import { build } from "../src/app";

const ok = async () => "ok";
const readiness = { postgres: ok, redis: ok, docker: ok, sandbox_image: ok };
const token = "metrics-token-".padEnd(40, "x");

describe("GET /metrics", () => {
  it("needs the metrics token (not a tenant key), and counts requests by route template, method and status", async () => {
    const metrics = createPromMetrics({ app: "api", defaultMetrics: false });
    const app = await build({ logger: false, readiness, metrics: { metrics, exposition: metrics, token } });
    try {
      expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
      expect((await app.inject({ method: "GET", url: "/goals/11111111-1111-4111-8111-111111111111" })).statusCode).toBe(401);
      expect((await app.inject({ method: "GET", url: "/no/such/route" })).statusCode).toBe(404);

      const none = await app.inject({ method: "GET", url: "/metrics" });
      expect(none.statusCode).toBe(401);
      expect(none.json()).toMatchObject({ error: { code: "LS_ERR_UNAUTHORIZED" } });
      const wrong = await app.inject({ method: "GET", url: "/metrics", headers: { authorization: "Bearer lsk_a-tenant-key-is-not-it" } });
      expect(wrong.statusCode).toBe(403);
      expect(wrong.json()).toMatchObject({ error: { code: "LS_ERR_FORBIDDEN" } });

      const res = await app.inject({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = res.body;
      const count = (labels: Record<string, string>) => sample(text, "loopsmith_http_request_duration_seconds_count", labels);
      expect(count({ route: "/healthz", method: "GET", status_code: "200" })).toBe(1);
      // The template, not the goal id.
      expect(count({ route: "/goals/:id", method: "GET", status_code: "401" })).toBe(1);
      expect(text).not.toContain("11111111-1111");
      expect(count({ route: "unmatched", method: "GET", status_code: "404" })).toBe(1);
      expect(count({ route: "/metrics", method: "GET", status_code: "401" })).toBe(1);
      expect(count({ route: "/metrics", method: "GET", status_code: "403" })).toBe(1);
    } finally {
      await app.close();
    }
  });

  it("is off (403) without METRICS_TOKEN, absent without metrics, and never in the OpenAPI document", async () => {
    const metrics = createPromMetrics({ app: "api", defaultMetrics: false });
    const off = await build({ logger: false, readiness, metrics: { metrics, exposition: metrics } });
    const res = await off.inject({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${token}` } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: { code: "LS_ERR_FORBIDDEN", message: expect.stringMatching(/METRICS_TOKEN/) } });
    await off.ready();
    expect(Object.keys((off.swagger() as { paths: Record<string, unknown> }).paths)).not.toContain("/metrics");
    await off.close();

    const bare = await build({ logger: false, readiness });
    expect((await bare.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(404);
    await bare.close();
  });
});
