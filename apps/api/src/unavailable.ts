// Which errors mean "a dependency is down or saturated" rather than "a bug in this request": the one place
// that decides (issue 25). With Postgres stopped every authenticated request was a 500 (the key lookup
// threw P1001) while /readyz said 503; with the pool saturated, POST /goals was a 500 (P2028, no
// transaction could start within maxWait). Both are a 503 the client may retry: LS_ERR_NOT_READY when the
// database cannot be reached, LS_ERR_BUSY when it can but has no connection free in time.
//
// Matched by code, never by instanceof: the errors come from Prisma (P-codes, and the driver adapter's
// error kinds under meta), from Postgres through pg (SQLSTATEs), from Node (system error codes), and from
// pg-pool, whose two pool errors carry no code at all and are matched by their fixed messages.
import { isDatabaseConnectionError, isPostgresError, LoopSmithError } from "@loopsmith/core";

export interface Unavailable {
  error: LoopSmithError;
  /** Seconds a client should wait before retrying (sent as Retry-After). */
  retryAfterSeconds: number;
}

type Kind = "down" | "busy";

/** Prisma's codes: P1001 can't reach, P1002 reached but timed out, P1008 operation timed out, P1017 server closed the connection; P2024 no pool connection in time, P2028 no transaction could start in time (maxWait), P2037 too many connections. */
const PRISMA: Record<string, Kind> = { P1001: "down", P1002: "down", P1008: "down", P1017: "down", P2024: "busy", P2028: "busy", P2037: "busy" };
/** The driver adapter's error kinds (meta.driverAdapterError.cause.kind): a $queryRaw wraps them in P2010. */
const ADAPTER_KINDS: Record<string, Kind> = { DatabaseNotReachable: "down", ConnectionClosed: "down", SocketTimeout: "down", TooManyConnections: "busy" };
/** Postgres SQLSTATEs: class 08 (connection exception), shutdowns and start-up (57P01-57P03), too many connections (53300). */
const SQLSTATE: Record<string, Kind> = { "57P01": "down", "57P02": "down", "57P03": "down", "53300": "busy" };
/** Node's system errors on a connection to a dependency. */
const SYSTEM: Record<string, Kind> = {
  ECONNREFUSED: "down",
  ECONNRESET: "down",
  ETIMEDOUT: "down",
  ENOTFOUND: "down",
  EAI_AGAIN: "down",
  EHOSTUNREACH: "down",
  ENETUNREACH: "down",
  EPIPE: "down",
};
/** pg-pool's errors, which have no code: the first is a full pool whose queue waited connectionTimeoutMillis. */
const PG_MESSAGES: Record<string, Kind> = {
  "timeout exceeded when trying to connect": "busy",
  "Connection terminated due to connection timeout": "down",
  "Connection terminated unexpectedly": "down",
};

type Loose = { code?: unknown; message?: unknown; cause?: unknown; clientVersion?: unknown; meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown; code?: unknown } } } };

function kindOf(e: Loose): Kind | undefined {
  const code = typeof e.code === "string" ? e.code : undefined;
  const adapter = e.meta?.driverAdapterError?.cause;
  const sqlstate = typeof adapter?.originalCode === "string" ? adapter.originalCode : typeof adapter?.code === "string" ? adapter.code : code;
  return (
    (code && (PRISMA[code] ?? SYSTEM[code])) ||
    (typeof adapter?.kind === "string" ? ADAPTER_KINDS[adapter.kind] : undefined) ||
    (sqlstate && (SQLSTATE[sqlstate] ?? (/^08[0-9A-Z]{3}$/.test(sqlstate) ? "down" : undefined))) ||
    (typeof e.message === "string" ? PG_MESSAGES[e.message] : undefined)
  );
}

function fromDatabase(e: Loose): boolean {
  return isPostgresError(e) || isDatabaseConnectionError(e) || typeof e.clientVersion === "string" || (typeof e.code === "string" && /^P\d{4}$/.test(e.code)) || e.meta?.driverAdapterError !== undefined || (typeof e.message === "string" && e.message in PG_MESSAGES);
}

/** A 503 for an error that says a dependency is down or saturated (looking through `cause`); undefined for any other error. */
export function unavailable(err: unknown): Unavailable | undefined {
  let e: unknown = err;
  for (let hops = 0; hops < 5 && typeof e === "object" && e !== null; hops++, e = (e as Loose).cause) {
    const kind = kindOf(e as Loose);
    if (!kind) continue;
    const what = fromDatabase(e as Loose) || fromDatabase(err as Loose) ? "The database" : "A service this API depends on";
    return kind === "busy"
      ? { error: new LoopSmithError("LS_ERR_BUSY", `${what} has no free connection right now; retry shortly.`), retryAfterSeconds: 1 }
      : { error: new LoopSmithError("LS_ERR_NOT_READY", `${what} cannot be reached right now; retry shortly.`), retryAfterSeconds: 5 };
  }
  return undefined;
}
