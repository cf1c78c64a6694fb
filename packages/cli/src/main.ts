// loopsmith: the command line over @loopsmith/client. Effects (environment, files, network, clock, the
// two output streams) come in as one Io object, so main() runs the same in the binary and in tests.
import { readFile, writeFile } from "node:fs/promises";
import { createClient, type Goal, type LoopSmithClient } from "@loopsmith/client";
import { COMMAND_NAMES, EXIT, helpFor, parseCommand, UsageError, type Command, type GoalOptions } from "./args";
import { exitCodeFor, progressLine, type ProgressState, type TapeRow } from "./progress";
import { readEvents } from "./sse";

export interface Io {
  env: Record<string, string | undefined>;
  stdout: { write(s: string | Uint8Array): unknown };
  stderr: { write(s: string): unknown };
  readFile(path: string): Promise<Buffer>;
  writeFile(path: string, data: Uint8Array): Promise<void>;
  fetch: typeof globalThis.fetch;
  sleep(ms: number): Promise<void>;
  /** Calls `handler` on Ctrl-C (SIGINT) until the returned function is called. */
  onInterrupt(handler: () => void): () => void;
}

export function processIo(): Io {
  return {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    readFile: (p) => readFile(p),
    writeFile: (p, d) => writeFile(p, d),
    fetch: globalThis.fetch,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    onInterrupt(handler) {
      process.on("SIGINT", handler);
      return () => process.off("SIGINT", handler);
    },
  };
}

export const VERSION = "0.1.0";

/**
 * An answer that is not the one asked for: the HTTP status (none: the server could not be reached, or a
 * wait ran out) and the API's error code, which decide the exit code (EXIT) and JSON mode's error document.
 */
class ServerError extends Error {
  override readonly name = "ServerError";
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
    readonly details?: unknown,
  ) {
    super(message);
  }

  get exitCode(): number {
    const s = this.status;
    if (s === undefined || s === 429 || s >= 500) return EXIT.retryable;
    if (s === 401 || s === 403) return EXIT.auth;
    if (s === 404) return EXIT.notFound;
    return EXIT.refused;
  }
}

/** Ctrl-C while waiting: the goal is left running (or was cancelled, with --cancel-on-interrupt). */
class Interrupted extends Error {
  override readonly name = "Interrupted";
}

/** The error document JSON mode prints on stdout (always exactly one document). */
function errorDoc(code: string, message: string, extra: Record<string, unknown> = {}) {
  return { error: { code, message, ...extra } };
}

/** Whether the command line asks for JSON output, read without parsing it (for usage errors). */
const wantsJson = (argv: string[]) => argv.some((a, i) => a === "--output-format=json" || (a === "--output-format" && argv[i + 1] === "json"));

type ApiError = { error?: { code?: string; message?: string; details?: unknown } };

function describeError(status: number, body: unknown): string {
  const e = (body as ApiError | undefined)?.error;
  if (!e?.code) return `HTTP ${status}`;
  const paths = Array.isArray(e.details)
    ? (e.details as { path?: unknown; message?: unknown }[]).filter((d) => typeof d?.path === "string").map((d) => `${d.path}: ${String(d.message)}`)
    : [];
  return `${e.code} (HTTP ${status}): ${e.message ?? ""}${paths.length ? `\n  ${paths.join("\n  ")}` : ""}`;
}

/** The data of a successful call, or a ServerError naming the API's error code and fields. */
async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r;
  try {
    r = await call;
  } catch (e) {
    throw new ServerError(`cannot reach the API: ${(e as Error).message}${(e as { cause?: Error }).cause ? ` (${(e as { cause: Error }).cause.message})` : ""}`, undefined, "CLI_UNREACHABLE");
  }
  if (r.error !== undefined || !r.response.ok) throw serverError(r.response.status, r.error);
  return r.data as T;
}

function serverError(status: number, body: unknown): ServerError {
  const e = (body as ApiError | undefined)?.error;
  return new ServerError(describeError(status, body), status, e?.code ?? `HTTP_${status}`, e?.details ?? undefined);
}

export async function main(argv: string[], io: Io): Promise<number> {
  let cmd: Command;
  try {
    cmd = parseCommand(argv, io.env);
  } catch (e) {
    if (e instanceof UsageError) {
      // The problem and where help is, not the whole usage text.
      // A command's own help when the command exists; the whole usage for a mistyped one.
      const topic = argv[0] !== undefined && (COMMAND_NAMES as readonly string[]).includes(argv[0]) && argv[0] !== "help" ? `${argv[0]} ` : "";
      io.stderr.write(`loopsmith: ${e.message}\nRun 'loopsmith ${topic}--help' for usage.\n`);
      if (wantsJson(argv)) io.stdout.write(json(errorDoc("CLI_USAGE", e.message)));
      return EXIT.usage;
    }
    throw e;
  }
  if (cmd.kind === "help") {
    io.stdout.write(`${helpFor(cmd.topic)}\n`);
    return EXIT.ok;
  }
  if (cmd.kind === "version") {
    io.stdout.write(`${VERSION}\n`);
    return EXIT.ok;
  }
  const client = createClient({ url: cmd.url, apiKey: cmd.apiKey, fetch: io.fetch });
  const jsonMode = cmd.output === "json";
  try {
    return await run(cmd, client, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.stderr.write(`loopsmith: ${e.message}\n`);
      if (jsonMode) io.stdout.write(json(errorDoc("CLI_USAGE", e.message)));
      return EXIT.usage;
    }
    if (e instanceof ServerError) {
      io.stderr.write(`loopsmith: ${e.message}\n`);
      if (jsonMode) io.stdout.write(json(errorDoc(e.code ?? "CLI_ERROR", e.message, { ...(e.status !== undefined ? { status: e.status } : {}), ...(e.details ? { details: e.details } : {}) })));
      return e.exitCode;
    }
    if (e instanceof Interrupted) {
      io.stderr.write(`loopsmith: ${e.message}\n`);
      if (jsonMode) io.stdout.write(json(errorDoc("CLI_INTERRUPTED", e.message)));
      return EXIT.interrupted;
    }
    io.stderr.write(`loopsmith: ${(e as Error).stack ?? String(e)}\n`);
    if (jsonMode) io.stdout.write(json(errorDoc("CLI_INTERNAL", (e as Error).message ?? String(e))));
    return EXIT.retryable;
  }
}

const json = (v: unknown) => `${JSON.stringify(v, null, 2)}\n`;

async function run(cmd: Exclude<Command, { kind: "help" | "version" }>, client: LoopSmithClient, io: Io): Promise<number> {
  const out = (text: string, doc: unknown) => io.stdout.write(cmd.output === "json" ? json(doc) : text);
  const path = (id: string) => ({ params: { path: { id } } });
  switch (cmd.kind) {
    case "goal": {
      const body = await goalBody(cmd, io);
      const accepted = await ok(client.POST("/goals", { body: body as never, params: { header: cmd.idempotencyKey ? { "idempotency-key": cmd.idempotencyKey } : {} } }));
      if (!cmd.wait) {
        out(`${accepted.id}\n`, accepted);
        return 0;
      }
      io.stderr.write(`goal ${accepted.id} accepted\n`);
      const goal = await followInterruptibly(client, accepted.id, io, cmd.waitTimeoutMs, cmd.cancelOnInterrupt === true);
      out(summary(goal), goal);
      return exitCodeFor(goal.state);
    }
    case "goals-tail": {
      const goal = await followInterruptibly(client, cmd.id, io, cmd.waitTimeoutMs, cmd.cancelOnInterrupt === true);
      out(summary(goal), goal);
      return exitCodeFor(goal.state);
    }
    case "goals-list": {
      const list = await ok(client.GET("/goals", { params: { query: { limit: cmd.limit ?? 20, ...(cmd.state ? { state: cmd.state as never } : {}), ...(cmd.cursor ? { cursor: cmd.cursor } : {}) } } }));
      const rows = list.goals.map((g) => `${g.id}  ${g.state.padEnd(17)}  ${String(g.attempts).padStart(2)} att  ${g.created_at}  ${g.objective.replace(/\s+/g, " ").slice(0, 60)}`);
      out(rows.join("\n") + (rows.length ? "\n" : "") + (list.next_cursor ? `next page: --cursor ${list.next_cursor}\n` : ""), list);
      return 0;
    }
    case "goals-show": {
      const goal = await ok(client.GET("/goals/{id}", path(cmd.id)));
      out(summary(goal), goal);
      return 0;
    }
    case "goals-export": {
      // The document is JSON in either output format: to the file, or as stdout's one document.
      const script = await ok(client.GET("/goals/{id}/script", path(cmd.id)));
      const text = Buffer.from(JSON.stringify(script, null, 2) + "\n");
      if (cmd.out) {
        await io.writeFile(cmd.out, text);
        out(`wrote ${cmd.out} (${text.length} bytes, goal ${cmd.id} ${script.original.state})\n`, { path: cmd.out, size: text.length, goal_id: cmd.id, state: script.original.state });
      } else io.stdout.write(text);
      return 0;
    }
    case "goals-cancel": {
      const goal = await ok(client.POST("/goals/{id}/cancel", path(cmd.id)));
      out(summary(goal), goal);
      return 0;
    }
    case "goals-reject": {
      const goal = await ok(client.POST("/goals/{id}/reject", path(cmd.id)));
      out(summary(goal), goal);
      return 0;
    }
    case "goals-approve": {
      const goal = await ok(client.POST("/goals/{id}/approve", { ...path(cmd.id), body: cmd.threshold === undefined ? {} : { approval_threshold_usd: cmd.threshold } }));
      out(summary(goal), goal);
      return 0;
    }
    case "artifacts-list": {
      const list = await ok(client.GET("/goals/{id}/artifacts", { params: { path: { id: cmd.id }, query: cmd.attempt ? { attempt: cmd.attempt } : {} } }));
      const lines = [
        ...list.artifacts.map((a) => `attempt ${a.attempt}  ${String(a.size).padStart(9)} B  ${a.sha256.slice(0, 12)}  ${a.name}`),
        ...list.programs.map((p) => `attempt ${p.attempt}  ${String(p.size).padStart(9)} B  ${p.sha256.slice(0, 12)}  (program: loopsmith artifacts program ${cmd.id} ${p.attempt})`),
        ...list.checker_files.map((f) => `checker  ${String(f.size).padStart(9)} B  ${f.sha256.slice(0, 12)}  ${f.name}`),
      ];
      out(lines.join("\n") + (lines.length ? "\n" : ""), list);
      return 0;
    }
    case "artifacts-get":
    case "artifacts-program": {
      const res =
        cmd.kind === "artifacts-get"
          ? await bytesOf(client.GET("/goals/{id}/artifacts/{name}", { params: { path: { id: cmd.id, name: cmd.name }, query: cmd.attempt ? { attempt: cmd.attempt } : {} }, parseAs: "arrayBuffer" }))
          : await bytesOf(client.GET("/goals/{id}/attempts/{n}/program", { params: { path: { id: cmd.id, n: cmd.attempt } }, parseAs: "arrayBuffer" }));
      const name = cmd.kind === "artifacts-get" ? cmd.name : "program";
      const attempt = cmd.kind === "artifacts-get" ? Number(res.headers.get("artifact-attempt")) : cmd.attempt;
      const sha256 = (res.headers.get("etag") ?? "").replace(/"/g, "");
      if (cmd.out) {
        await io.writeFile(cmd.out, res.bytes);
        out(`wrote ${cmd.out} (${res.bytes.length} bytes, attempt ${attempt}, sha256 ${sha256})\n`, { name, attempt, size: res.bytes.length, sha256, path: cmd.out });
      } else if (cmd.output === "json") {
        throw new UsageError("with --output-format json, give -o FILE: stdout carries the JSON document, not the bytes");
      } else io.stdout.write(res.bytes);
      return 0;
    }
    case "checks": {
      const cat = await ok(client.GET("/checks"));
      out(cat.checks.map((c) => `${c.id.padEnd(24)} ${c.description.split("\n")[0]}`).join("\n") + "\n", cat);
      return 0;
    }
  }
}

async function bytesOf(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<{ bytes: Uint8Array; headers: Headers }> {
  let r;
  try {
    r = await call;
  } catch (e) {
    throw new ServerError(`cannot reach the API: ${(e as Error).message}`, undefined, "CLI_UNREACHABLE");
  }
  if (!r.response.ok) {
    // parseAs arrayBuffer leaves a JSON error as bytes.
    let body: unknown = r.error;
    if (r.error instanceof ArrayBuffer) {
      try {
        body = JSON.parse(Buffer.from(r.error).toString("utf8"));
      } catch {
        body = undefined;
      }
    }
    throw serverError(r.response.status, body);
  }
  return { bytes: new Uint8Array(r.data as ArrayBuffer), headers: r.response.headers };
}

/** The body of POST /goals from the flags (and --body FILE, --script FILE, the input files). */
export async function goalBody(o: GoalOptions, io: Pick<Io, "readFile">): Promise<Record<string, unknown>> {
  const readJson = async (flag: string, p: string) => {
    const text = (await readAt(flag, p, io)).toString("utf8");
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw new UsageError(`${flag} ${p}: not JSON (${(e as Error).message})`);
    }
  };
  const base = o.bodyPath ? await readJson("--body", o.bodyPath) : {};
  if (!base || typeof base !== "object" || Array.isArray(base)) throw new UsageError(`--body ${o.bodyPath}: must hold a JSON object`);
  const body: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  if (o.objective) body.objective = o.objective;
  if (o.success !== undefined) body.success = o.success;
  if (o.checks.length) body.checks = [...((body.checks as unknown[] | undefined) ?? []), ...o.checks];
  const files = async (flag: string, list: { name: string; path: string }[]) =>
    Promise.all(list.map(async (f) => fileEntry(f.name, await readAt(flag, f.path, io))));
  if (o.inputs.length) body.inputs = [...((body.inputs as unknown[] | undefined) ?? []), ...(await files("--input", o.inputs))];
  if (o.checkerFiles.length) body.checker_files = [...((body.checker_files as unknown[] | undefined) ?? []), ...(await files("--checker-file", o.checkerFiles))];
  if (o.maxAttempts !== undefined) body.max_attempts = o.maxAttempts;
  if (o.deliverable !== undefined) body.deliverable = o.deliverable;
  if (o.scriptPath) body.model = { provider: "scripted", script: await readJson("--script", o.scriptPath) };
  else if (o.model) body.model = o.model;
  return body;
}

async function readAt(flag: string, p: string, io: Pick<Io, "readFile">): Promise<Buffer> {
  try {
    return await io.readFile(p);
  } catch (e) {
    throw new UsageError(`${flag} ${p}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

/** Text when the bytes are UTF-8 without NULs (readable in the API's views), else base64. */
export function fileEntry(name: string, content: Buffer): { name: string; text: string } | { name: string; content_base64: string } {
  const text = content.toString("utf8");
  return !text.includes("\u0000") && Buffer.from(text, "utf8").equals(content) ? { name, text } : { name, content_base64: content.toString("base64") };
}

function summary(g: Goal): string {
  const lines = [`goal ${g.id}: ${g.state}${g.failure_reason ? ` (${g.failure_reason})` : ""}`, `tape: ${g.tape}`, `attempts: ${g.attempts}/${g.max_attempts}  spend: $${g.cost.cost_usd.toFixed(4)}`];
  if (g.deliverable.artifact) lines.push(`deliverable: ${g.deliverable.artifact.name} (attempt ${g.deliverable.artifact.attempt}, ${g.deliverable.artifact.size} bytes): loopsmith artifacts get ${g.id} ${g.deliverable.artifact.name}`);
  if (g.failure_report) lines.push(`why: ${g.failure_report.message}`);
  return `${lines.join("\n")}\n`;
}

const RECONNECTS = 5;

/**
 * follow(), and on Ctrl-C: stop following; with `cancel`, cancel the goal first; either way say what became
 * of the goal and how to go on (Interrupted, exit 130).
 */
async function followInterruptibly(client: LoopSmithClient, id: string, io: Io, timeoutMs: number | undefined, cancel: boolean): Promise<Goal> {
  const stop = new AbortController();
  const off = io.onInterrupt(() => stop.abort());
  try {
    return await follow(client, id, io, timeoutMs, stop.signal);
  } catch (e) {
    if (!stop.signal.aborted) throw e;
    if (cancel) {
      const res = await client.POST("/goals/{id}/cancel", { params: { path: { id } } }).catch(() => undefined);
      if (res?.response.ok) throw new Interrupted(`interrupted: goal ${id} was cancelled (--cancel-on-interrupt)`);
      throw new Interrupted(`interrupted: goal ${id} could not be cancelled${res ? ` (${describeError(res.response.status, res.error)})` : ""}; cancel it with: loopsmith goals cancel ${id}`);
    }
    throw new Interrupted(`interrupted: goal ${id} keeps running. Follow it with: loopsmith goals tail ${id}   Cancel it with: loopsmith goals cancel ${id}`);
  } finally {
    off();
  }
}

/**
 * Follows the goal's tape over SSE until it ends (the server's `end` event), printing one progress line
 * per row on stderr; resumes after a dropped connection with Last-Event-ID. Returns the final goal.
 */
async function follow(client: LoopSmithClient, id: string, io: Io, timeoutMs?: number, interrupt?: AbortSignal): Promise<Goal> {
  const path = { params: { path: { id } } };
  const start = await ok(client.GET("/goals/{id}", path));
  const state: ProgressState = { attempt: 0 };
  const deadline = timeoutMs === undefined ? undefined : Date.now() + timeoutMs;
  const abort = new AbortController();
  const timer = deadline === undefined ? undefined : setTimeout(() => abort.abort(), timeoutMs);
  // An interrupt that came while the goal was fetched above has already fired its event.
  if (interrupt?.aborted) abort.abort();
  else interrupt?.addEventListener("abort", () => abort.abort(), { once: true });
  let last: number | undefined;
  let failures = 0;
  try {
    for (;;) {
      let res;
      try {
        res = await client.GET("/goals/{id}/events", {
          params: { path: { id }, header: last === undefined ? {} : { "last-event-id": String(last) } },
          parseAs: "stream",
          signal: abort.signal,
        });
      } catch (e) {
        if (abort.signal.aborted) throw interrupt?.aborted ? new Interrupted("interrupted") : new ServerError(`goal ${id} did not end within ${timeoutMs! / 1000} s`, undefined, "CLI_WAIT_TIMEOUT");
        if (++failures > RECONNECTS) throw new ServerError(`lost the event stream: ${(e as Error).message}`, undefined, "CLI_STREAM_LOST");
        await io.sleep(1000);
        continue;
      }
      if (!res.response.ok || !res.response.body) {
        const text = res.response.body ? await res.response.text() : "";
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        throw serverError(res.response.status, body);
      }
      let ended = false;
      try {
        for await (const ev of readEvents(res.response.body as AsyncIterable<Uint8Array>)) {
          if (ev.event === "end") {
            ended = true;
            break;
          }
          if (ev.event !== "transition") continue;
          const row = JSON.parse(ev.data) as TapeRow;
          last = row.seq;
          failures = 0;
          const now = await client.GET("/goals/{id}", path).catch(() => undefined);
          io.stderr.write(`${progressLine(row, { state, maxAttempts: start.max_attempts, createdAt: start.created_at, costUsd: now?.data?.cost.cost_usd ?? null })}\n`);
        }
      } catch (e) {
        if (abort.signal.aborted) throw interrupt?.aborted ? new Interrupted("interrupted") : new ServerError(`goal ${id} did not end within ${timeoutMs! / 1000} s`, undefined, "CLI_WAIT_TIMEOUT");
        if (++failures > RECONNECTS) throw new ServerError(`lost the event stream: ${(e as Error).message}`, undefined, "CLI_STREAM_LOST");
      }
      if (ended) break;
      await io.sleep(500);
    }
  } finally {
    if (timer) clearTimeout(timer);
  }
  return ok(client.GET("/goals/{id}", path));
}
