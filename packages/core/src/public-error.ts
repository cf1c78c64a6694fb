// What an error may say outside the server: on a tenant-readable tape row, in the public /readyz. Raw
// Prisma and Docker errors carry source paths, code frames (lines of our source), connection strings and
// internal addresses; those go to the log, and the outside gets a stable code and one short sentence.
import { ERROR_CATALOG, errorCodeOf, type ErrorCode } from "./errors";

export interface PublicError {
  code: ErrorCode;
  message: string;
}

export const PUBLIC_MESSAGE_MAX = 300;

/** Node's system errors, as words: their messages name the socket path or address they failed on. */
const SYSTEM_ERRORS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "name resolution failed",
  ETIMEDOUT: "timed out",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  EPIPE: "connection closed",
  ENOENT: "no such file or socket",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
};

type Loose = {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  syscall?: unknown;
  statusCode?: unknown;
  reason?: unknown;
  json?: unknown;
  clientVersion?: unknown;
  errorCode?: unknown;
  meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown } } };
};

function isPrisma(e: Loose): boolean {
  return (typeof e.name === "string" && e.name.startsWith("PrismaClient")) || typeof e.clientVersion === "string";
}

/** node-postgres's error for a statement Postgres refused: the server's severity beside its SQLSTATE. */
export function isPostgresError(e: unknown): e is Error & { code: string; severity: string } {
  const err = e as { severity?: unknown; code?: unknown } | null;
  return typeof err?.severity === "string" && typeof err.code === "string" && /^[0-9A-Z]{5}$/.test(err.code);
}

/** packages/db's wrapper of a statement whose connection or pool failed before Postgres answered. */
export function isDatabaseConnectionError(e: unknown): boolean {
  return (e as { name?: unknown } | null)?.name === "DatabaseConnectionError";
}

/** docker-modem's errors: "(HTTP code 404) no such container - No such container: abc". */
function isDocker(e: Loose): boolean {
  return (typeof e.statusCode === "number" && "json" in e) || (typeof e.message === "string" && e.message.startsWith("(HTTP code "));
}

/**
 * Removes what must not leave the server from one line of text: absolute paths (file:// or not, with
 * :line:col), URLs that carry credentials, and host:port pairs.
 */
export function scrubText(text: string): string {
  return text
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s/@]*@[^\s'"`)]*/gi, "<url>")
    .replace(/(?:file:\/\/)?(?:\/[\w.@+~-]+){2,}\/?(?::\d+){0,2}/g, "<path>")
    .replace(/\b[A-Za-z]:\\[^\s'"`)]+/g, "<path>")
    .replace(/\b\d{1,3}(?:\.\d{1,3}){3}:\d+\b/g, "<host>")
    .replace(/\s+/g, " ")
    .trim();
}

/**
 * The part of a (possibly multi-line) message that says what went wrong. Prisma puts it after a code frame
 * ("Invalid `prisma.goal.update()` invocation in /path:6:25", source lines, "→ 6 ..."): keep what follows
 * the frame. Elsewhere, stack lines ("    at fn (/path)") are dropped.
 */
function essence(message: string): string {
  const lines = message.split("\n").map((l) => l.trim());
  const frame = (l: string) => /^(?:→\s*)?\d+\s/.test(l) || /^Invalid `[^`]*` invocation/.test(l) || /^at\s/.test(l) || /^\/|^file:\/\//.test(l);
  let last = -1;
  lines.forEach((l, i) => {
    if (frame(l)) last = i;
  });
  const after = lines.slice(last + 1).filter((l) => l !== "" && !frame(l));
  const kept = after.length > 0 ? after : lines.filter((l) => l !== "" && !frame(l));
  return kept.join(" ");
}

function clip(text: string): string {
  return text.length > PUBLIC_MESSAGE_MAX ? text.slice(0, PUBLIC_MESSAGE_MAX - 1) + "…" : text;
}

/** "DatabaseNotReachable" -> "database not reachable". */
function words(kind: string): string {
  return kind.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
}

/**
 * A stable code and a short message for any error: ours keep their code and message; Prisma's become
 * LS_ERR_DATABASE with their Prisma code (P2025) and the sentence after the code frame, and Postgres's
 * through node-postgres with their SQLSTATE (23505); Docker's become
 * LS_ERR_SANDBOX_UNAVAILABLE with the engine's HTTP status and reason; system errors say which call failed
 * how, without the path or address. Everything passes scrubText and is at most PUBLIC_MESSAGE_MAX long.
 * Log the error itself next to it: this is what the outside sees, not what an operator needs.
 */
export function publicError(e: unknown): PublicError {
  const err = (typeof e === "object" && e !== null ? e : { message: String(e) }) as Loose;
  const message = typeof err.message === "string" ? err.message : String(e);
  const ours = errorCodeOf(e);

  if (isPrisma(err)) {
    const prismaCode = typeof err.code === "string" ? err.code : typeof err.errorCode === "string" ? err.errorCode : undefined;
    const cause = err.meta?.driverAdapterError?.cause;
    // Connection-level kinds carry host and port in the message: name the kind only.
    const kind = typeof cause?.kind === "string" && /NotReachable|AccessDenied|Authentication|Timeout|Closed/i.test(cause.kind) ? words(cause.kind) : undefined;
    const text = kind ?? scrubText(essence(message));
    return { code: ours ?? "LS_ERR_DATABASE", message: clip(`${prismaCode ? `Prisma ${prismaCode}: ` : ""}${text || "database error"}`) };
  }
  if (isPostgresError(err)) {
    return { code: ours ?? "LS_ERR_DATABASE", message: clip(`Postgres ${String(err.code)}: ${scrubText(essence(message)) || "database error"}`) };
  }
  // node-postgres's connection failed (ECONNREFUSED, the pool's timeout).
  if (isDatabaseConnectionError(err)) {
    const what = typeof err.code === "string" && err.code in SYSTEM_ERRORS ? `${SYSTEM_ERRORS[err.code]} (${err.code})` : scrubText(essence(message));
    return { code: ours ?? "LS_ERR_DATABASE", message: clip(`database connection: ${what || "failed"}`) };
  }
  if (isDocker(err)) {
    const json = err.json as { message?: unknown } | null | undefined;
    const detail = typeof json?.message === "string" ? json.message : typeof err.reason === "string" ? err.reason : essence(message);
    const status = typeof err.statusCode === "number" ? `HTTP ${err.statusCode}: ` : "";
    return { code: ours ?? "LS_ERR_SANDBOX_UNAVAILABLE", message: clip(`Docker engine ${status}${scrubText(detail)}`) };
  }
  if (typeof err.code === "string" && err.code in SYSTEM_ERRORS) {
    const call = typeof err.syscall === "string" ? `${err.syscall}: ` : "";
    return { code: ours ?? "LS_ERR_INTERNAL", message: `${call}${SYSTEM_ERRORS[err.code]} (${err.code})` };
  }
  const text = scrubText(essence(message));
  return { code: ours ?? "LS_ERR_INTERNAL", message: clip(text || ERROR_CATALOG[ours ?? "LS_ERR_INTERNAL"].message) };
}
