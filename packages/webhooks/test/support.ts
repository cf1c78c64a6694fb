import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { createGoal, createPrisma, createTenant, type PrismaClient } from "@loopsmith/db";
import { DATABASE_URL, REDIS_URL, testSecretBox } from "../../../tests/support/services";

// Real services, as everywhere in this repo: when one is missing the tests fail with what is missing.
export { closedPort, DATABASE_URL, randomPrefix, REDIS_URL, testSecretBox } from "../../../tests/support/services";

export function services(): { prisma: PrismaClient; redis: Redis } {
  return { prisma: createPrisma(DATABASE_URL), redis: new Redis(REDIS_URL, { maxRetriesPerRequest: null }) };
}

export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
}

export interface Received {
  method: string;
  /** The request's path (req.url). */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** When it arrived (Date.now()). */
  at: number;
}

/** A status, or a status with response headers (a Retry-After). */
export type Answer = number | { status: number; headers?: Record<string, string> };

export interface Receiver {
  /** http://127.0.0.1:<port>/hook */
  url: string;
  port: number;
  received: Received[];
  close: () => Promise<void>;
}

/**
 * A webhook receiver on loopback. `statuses[i]` answers the i-th request; the last one repeats.
 * Records every request with its raw body.
 */
export async function startReceiver(statuses: Answer[], port = 0): Promise<Receiver> {
  const received: Received[] = [];
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const answer = statuses[Math.min(received.length - 1, statuses.length - 1)]!;
      const { status, headers } = typeof answer === "number" ? { status: answer, headers: {} } : answer;
      res.writeHead(status, { "content-type": "text/plain", ...headers }).end(`status ${status}`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(port, "127.0.0.1", () => resolve());
  });
  const actual = (srv.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${actual}/hook`,
    port: actual,
    received,
    // Drops kept-alive sockets too, so that close() does not wait for the client to let go.
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}

/** A tenant and a goal of it (scripted model, never run) whose webhook points at `url`. */
export async function tenantWithGoal(prisma: PrismaClient, url: string | null) {
  const tenant = await createTenant(prisma, { name: `webhooks-test-${randomBytes(3).toString("hex")}`, secretBox: testSecretBox() });
  const goal = await createGoal(prisma, {
    tenantId: tenant.tenant_id,
    objective: "Summarise the CSV",
    success: null,
    checks: [],
    inputs: [],
    maxAttempts: 3,
    budgets: {},
    model: { provider: "scripted", script: { plan: {}, generate: {}, inspect: [], refine: [] } },
    webhook: url ? { url } : null,
  });
  return { tenant, goalId: goal.id };
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | null | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
