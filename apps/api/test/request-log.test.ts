// The API logs one line per request, when it is answered: method, URL, status and time together (Fastify's
// own two lines per request doubled the log's volume and the submit path's logging work).
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { build } from "../src/app";

describe("request logging", () => {
  it("writes one line per request, with the request and its answer", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: "info" }, { write: (s: string) => void lines.push(JSON.parse(s) as Record<string, unknown>) });
    const up = async () => "";
    const app = await build({ logger, readiness: { postgres: up, redis: up, docker: up, sandbox_image: up } });
    try {
      await app.inject({ method: "GET", url: "/healthz" });
      await app.inject({ method: "GET", url: "/no-such-route?x=1" });
      const requests = lines.filter((l) => l.req !== undefined || /request/.test(String(l.msg)));
      expect(requests.map((l) => l.msg)).toEqual(["request completed", "request completed"]);
      expect(requests[0]).toMatchObject({ req: { method: "GET", url: "/healthz" }, res: { statusCode: 200 } });
      expect(requests[1]).toMatchObject({ req: { method: "GET", url: "/no-such-route?x=1" }, res: { statusCode: 404 } });
      expect(typeof requests[0]!.responseTime).toBe("number");
    } finally {
      await app.close();
    }
  });
});
