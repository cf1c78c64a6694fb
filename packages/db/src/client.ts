import { isPostgresError } from "@loopsmith/core";
import { PrismaPg } from "@prisma/adapter-pg";
import { clearLogs } from "@prisma/debug";
import pg from "pg";
import { PrismaClient, type Prisma } from "./generated/client";

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

/** The connection pool under each client createPrisma made (sendStatement's way past Prisma). */
const pools = new WeakMap<PrismaClient, pg.Pool>();

/**
 * The one way to build a PrismaClient: Prisma 7's query compiler (no engine binary) over node-postgres.
 * The caller owns the client and must `$disconnect()` it (which also ends its pool).
 */
export function createPrisma(databaseUrl: string, options: CreatePrismaOptions = {}): PrismaClient {
  // allowExitOnIdle: $disconnect() ends the pool only once Prisma itself connected; idle connections left
  // by sendStatement alone must not hold a finished process open.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.maxConnections, connectionTimeoutMillis: options.connectionTimeoutMs, allowExitOnIdle: true });
  // An idle connection that breaks (Postgres restarted) is dropped by the pool and the next query reports
  // it; without a listener its 'error' event would end the process before Prisma first connects and adds one.
  pool.on("error", () => undefined);
  // Prisma's driver adapter keeps its last 100 queries with their parameters for a bug report we never
  // send (see sendStatement): forgotten whenever a query or transaction gives its connection back.
  pool.on("release", () => clearLogs());
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool, { disposeExternalPool: true }) });
  pools.set(prisma, pool);
  return prisma;
}

/**
 * One statement with numbered parameters (`$1::cast`), its rows returned as node-postgres reads them.
 * On a client from createPrisma it goes to that client's pool directly; inside a transaction, through it.
 *
 * Why not always `$queryRawUnsafe`: Prisma keeps the arguments of its last 100 debug calls whether or not
 * debugging is on, and for a raw query those are the statement's text and every parameter, in the client's
 * own copy of that history (which nothing clears) and in the driver adapter's (cleared on release, above).
 * A goal's statement carries its files and a step's its artifacts, so each process held the last hundred
 * statements' payloads: a megabyte or more past every young-generation collection, which promoted it, on a
 * submit path that allocates ~200 KB per request. Errors from this path are node-postgres's (a SQLSTATE in
 * `code`), which callers match beside Prisma's.
 */
export async function sendStatement<T>(db: PrismaClient | Prisma.TransactionClient, sql: string, params: unknown[]): Promise<T[]> {
  const pool = pools.get(db as PrismaClient);
  if (!pool) return db.$queryRawUnsafe<T[]>(sql, ...params);
  try {
    return (await pool.query<T & pg.QueryResultRow>(sql, params)).rows;
  } catch (e) {
    // Postgres's own answer (a DatabaseError: severity, SQLSTATE) says where it came from; a socket's or
    // the pool's error does not, so it is wrapped to say it was the database's connection. A RangeError or
    // TypeError is the parameters' (too long, not serialisable) and stays what it is.
    if (e instanceof Error && !isPostgresError(e) && !(e instanceof RangeError) && !(e instanceof TypeError)) throw new DatabaseConnectionError(e);
    throw e;
  }
}

/** A statement that never got Postgres's answer: the connection or the pool failed (`cause`, whose `code` it keeps). */
export class DatabaseConnectionError extends Error {
  override name = "DatabaseConnectionError";
  readonly code: unknown;
  constructor(cause: Error) {
    super(cause.message, { cause });
    this.code = (cause as { code?: unknown }).code;
  }
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
