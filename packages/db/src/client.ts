import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/client";

export interface CreatePrismaOptions {
  /** Upper bound on pooled connections (pg's default is 10). */
  maxConnections?: number;
  /**
   * How long a query may wait for a pooled connection, and a new connection may take to open, before it
   * fails (pg's connectionTimeoutMillis; unset waits forever). The API sets it so that a saturated pool
   * answers 503 instead of queueing requests without bound.
   */
  connectionTimeoutMs?: number;
}

/**
 * The one way to build a PrismaClient: Prisma 7's query compiler (no engine binary) over node-postgres.
 * The caller owns the client and must `$disconnect()` it.
 */
export function createPrisma(databaseUrl: string, options: CreatePrismaOptions = {}): PrismaClient {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: options.maxConnections, connectionTimeoutMillis: options.connectionTimeoutMs });
  return new PrismaClient({ adapter });
}

export type PingResult = { ok: true; latencyMs: number } | { ok: false; latencyMs: number; error: string };

/** Health probe for readiness checks: never throws. */
export async function pingDatabase(prisma: PrismaClient): Promise<PingResult> {
  const started = performance.now();
  try {
    await prisma.$queryRaw`SELECT 1`;
    return { ok: true, latencyMs: performance.now() - started };
  } catch (e) {
    return { ok: false, latencyMs: performance.now() - started, error: e instanceof Error ? e.message : String(e) };
  }
}
