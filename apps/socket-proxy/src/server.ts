import http from "node:http";
import type { Duplex } from "node:stream";
import { checkCreateBody, engineInfoShown, IGNORED_BODY_MAX_BYTES, isFullId, isSandboxContainer, refusalBody, refused, routeRequest, type Allowed, type Call, type Policy, type Refused } from "./policy";

export interface ProxyLogEntry {
  method: string;
  url: string;
  call?: Call;
  status: number;
  /** The refusal's message, for requests the proxy answered itself. */
  refused?: string;
}

export interface SocketProxyOptions {
  /** The engine's unix socket. */
  socketPath: string;
  policy: Policy;
  /** Called once per request, when it is answered (for a hijacked attach: when the engine agrees to it). */
  log?: (entry: ProxyLogEntry) => void;
  /**
   * How long a container found to be a sandbox is remembered by its full id. Labels are fixed at creation
   * and ids are never reused, so the answer cannot go stale; the bound only keeps the map small.
   */
  labelCacheMs?: number;
}

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection", "te", "trailer"]);
const CACHE_MAX = 10_000;
// An inspect answer is a few KiB; a container with a huge config is not ours anyway.
const INSPECT_MAX_BYTES = 4 * 1024 * 1024;
// dockerode repeats a create's whole body in its query string (the engine ignores it there), so a request
// line is far longer than Node's default 16 KiB allows; Go's server, the engine's, accepts 1 MiB.
const MAX_HEADER_BYTES = 1024 * 1024;

/**
 * A TCP front for the Docker engine's socket that passes only LoopSmith's sandbox calls (policy.ts).
 * Bodies stream both ways, and attach's hijacked connection (`Upgrade: tcp`) becomes a plain byte pipe
 * once the engine has agreed to it.
 */
export function createSocketProxy(opts: SocketProxyOptions): http.Server {
  const { socketPath, policy } = opts;
  const cacheMs = opts.labelCacheMs ?? 60_000;
  const agent = new http.Agent({ keepAlive: true });
  const sandboxes = new Map<string, number>();

  const remember = (id: string) => {
    sandboxes.delete(id);
    sandboxes.set(id, Date.now() + cacheMs);
    if (sandboxes.size > CACHE_MAX) sandboxes.delete(sandboxes.keys().next().value!);
  };

  function engine(method: string, path: string, headers: Record<string, string>, reqAgent: http.Agent | false = agent): http.ClientRequest {
    return http.request({ socketPath, method, path, headers: { host: "docker", ...headers }, agent: reqAgent });
  }

  function inspect(ref: string): Promise<{ status: number; body: unknown }> {
    return new Promise((resolve, reject) => {
      const req = engine("GET", `/containers/${ref}/json`, {});
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > INSPECT_MAX_BYTES) req.destroy(new Error("container inspect answer too large"));
          else chunks.push(c);
        });
        res.on("end", () => {
          let body: unknown;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 502, body });
        });
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end();
    });
  }

  /** The full ids of the route's containers, each checked to be a sandbox; or the answer to give instead. */
  async function resolve(route: Allowed): Promise<string[] | Refused> {
    const ids: string[] = [];
    for (const ref of route.containers) {
      const until = isFullId(ref) ? sandboxes.get(ref) : undefined;
      if (until !== undefined && until > Date.now()) {
        ids.push(ref);
        continue;
      }
      const found = await inspect(ref);
      const message = (found.body as { message?: unknown } | undefined)?.message;
      if (found.status !== 200) {
        // The engine's own answer (404 No such container is what a removal race looks like to the sandbox).
        return { ok: false, status: found.status, message: typeof message === "string" ? message : `No such container: ${ref}` };
      }
      if (!isSandboxContainer(found.body)) return refused(`${route.call} of container ${ref}`, "it is not a LoopSmith sandbox container (no loopsmith.sandbox=1 label)");
      const id = (found.body as { Id: string }).Id;
      if (!isFullId(id)) return refused(`${route.call} of container ${ref}`, "the engine answered without a container id", 502);
      remember(id);
      ids.push(id);
    }
    return ids;
  }

  function answer(res: http.ServerResponse, r: Refused, close = false): void {
    const body = refusalBody(r);
    res.writeHead(r.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...(close ? { connection: "close" } : {}) });
    res.end(body);
  }

  /** Reads a request body of at most `limit` bytes; undefined when it is longer (the rest is not read). */
  function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer | undefined> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const onData = (c: Buffer) => {
        size += c.length;
        if (size > limit) {
          // Read on and drop the rest, so that the client, still sending, gets to read the refusal.
          req.off("data", onData);
          req.resume();
          resolve(undefined);
        } else chunks.push(c);
      };
      req.on("data", onData);
      req.on("end", () => resolve(Buffer.concat(chunks)));
      req.on("error", reject);
    });
  }

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, note: (e: Partial<ProxyLogEntry>) => void): Promise<void> {
    const method = req.method ?? "GET";
    const route = routeRequest(method, req.url ?? "", policy);
    if (!route.ok) {
      note({ refused: route.message });
      // The body was never read: the connection cannot be reused.
      return answer(res, route, true);
    }
    note({ call: route.call });
    const limit = route.body ? policy.maxBodyBytes : IGNORED_BODY_MAX_BYTES;
    const raw = await readBody(req, limit);
    if (raw === undefined) {
      const r = refused(route.call, `the body is over ${limit} bytes`, 413);
      note({ refused: r.message });
      return answer(res, r, true);
    }
    let body: Buffer | undefined;
    if (route.body) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw.toString("utf8"));
      } catch {
        const r = refused(route.call, "the body is not JSON", 400);
        note({ refused: r.message });
        return answer(res, r);
      }
      const why = checkCreateBody(parsed, policy);
      if (why) {
        const r = refused(route.call, `not a LoopSmith sandbox: ${why}`);
        note({ refused: r.message });
        return answer(res, r);
      }
      // What was checked is what the engine gets: re-serialised, so a duplicate key can no longer mean
      // one thing here and another to the engine's decoder.
      body = Buffer.from(JSON.stringify(parsed));
    }
    const ids = await resolve(route);
    if (!Array.isArray(ids)) {
      if (ids.status === 403) note({ refused: ids.message });
      return answer(res, ids);
    }

    const headers: Record<string, string> = body
      ? { "content-type": "application/json", "content-length": String(body.length) }
      : method === "GET" || method === "HEAD"
        ? {}
        : { "content-length": "0" };
    // Only a create's checked body is sent: API versions before 1.24 read a HostConfig from a start's body.
    const up = engine(method, route.target(ids), headers);
    res.on("close", () => {
      // The client left (or the answer is done): a wait or an event stream must not outlive it.
      if (!res.writableFinished) up.destroy();
    });
    up.on("response", (er) => {
      const status = er.statusCode ?? 502;
      if (route.call === "container create" && status === 201) {
        const chunks: Buffer[] = [];
        er.on("data", (c: Buffer) => chunks.push(c));
        er.on("end", () => {
          try {
            const id = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { Id?: unknown }).Id;
            if (typeof id === "string" && isFullId(id)) remember(id);
          } catch {
            // Not cached: the next call on it asks the engine.
          }
        });
      }
      if (route.call === "container remove" && status < 300) sandboxes.delete(ids[0]!);
      note({ status });
      if (route.call === "info" && status === 200) {
        // Only what a runner reads (which runtimes the engine offers): not the engine's paths, kernel,
        // registries, counts or names.
        const chunks: Buffer[] = [];
        er.on("data", (c: Buffer) => chunks.push(c));
        er.on("end", () => {
          let shown: string;
          try {
            shown = JSON.stringify(engineInfoShown(JSON.parse(Buffer.concat(chunks).toString("utf8"))));
          } catch {
            return answer(res, { ok: false, status: 502, message: "loopsmith socket proxy: the engine's info is not JSON" });
          }
          res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(shown) });
          res.end(shown);
        });
        er.on("error", () => res.destroy());
        return;
      }
      const out: Record<string, string | string[]> = {};
      for (const [k, v] of Object.entries(er.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = v;
      res.writeHead(status, out);
      er.pipe(res);
      er.on("error", () => res.destroy());
    });
    up.on("error", (e) => {
      if (res.headersSent) res.destroy();
      else answer(res, { ok: false, status: 502, message: `loopsmith socket proxy: the engine did not answer ${route.call}: ${e.message}` });
    });
    up.end(body);
  }

  /** attach with `Upgrade: tcp`: after the engine's 101, the two connections are one byte pipe. */
  async function upgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer, note: (e: Partial<ProxyLogEntry>) => void): Promise<void> {
    const rawAnswer = (r: Refused) => {
      const body = refusalBody(r);
      socket.end(`HTTP/1.1 ${r.status} ${http.STATUS_CODES[r.status] ?? ""}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    };
    const method = req.method ?? "GET";
    let decided: Allowed | Refused = routeRequest(method, req.url ?? "", policy);
    if (decided.ok && !decided.upgrade) decided = refused(decided.call, "only attach may upgrade its connection");
    if (decided.ok && (req.headers.upgrade ?? "").toLowerCase() !== "tcp") decided = refused(decided.call, "only Upgrade: tcp is accepted");
    if (!decided.ok) {
      note({ refused: decided.message, status: decided.status });
      return rawAnswer(decided);
    }
    const route = decided;
    note({ call: route.call });
    const ids = await resolve(route);
    if (!Array.isArray(ids)) {
      note({ status: ids.status, ...(ids.status === 403 ? { refused: ids.message } : {}) });
      return rawAnswer(ids);
    }
    // dockerode sends attach's options as a body before the stream: those bytes are not stdin.
    const length = Number(req.headers["content-length"] ?? 0);
    if (!Number.isSafeInteger(length) || length < 0 || length > IGNORED_BODY_MAX_BYTES) {
      const r = refused(route.call, `the body is over ${IGNORED_BODY_MAX_BYTES} bytes`, 413);
      note({ refused: r.message, status: r.status });
      return rawAnswer(r);
    }
    const stdin = await skip(socket, head, length);
    // A connection of its own (no agent): it becomes the tunnel and is never reused.
    const up = engine(method, route.target(ids), { connection: "Upgrade", upgrade: "tcp", "content-length": "0" }, false);
    socket.on("error", () => up.destroy());
    up.on("upgrade", (er, engineSocket, engineHead) => {
      note({ status: er.statusCode ?? 101 });
      const lines = [`HTTP/1.1 ${er.statusCode} ${er.statusMessage ?? ""}`];
      for (let i = 0; i + 1 < er.rawHeaders.length; i += 2) lines.push(`${er.rawHeaders[i]}: ${er.rawHeaders[i + 1]}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (engineHead.length > 0) socket.write(engineHead);
      if (stdin.length > 0) engineSocket.write(stdin);
      // Half-closes pass through (stdin's end reaches the container), so neither side is destroyed on end.
      engineSocket.pipe(socket);
      socket.pipe(engineSocket);
      engineSocket.on("error", () => socket.destroy());
      socket.on("error", () => engineSocket.destroy());
      socket.on("close", () => engineSocket.destroy());
    });
    up.on("response", (er) => {
      // The engine refused the attach (no such container, stopped): pass its answer on.
      const chunks: Buffer[] = [];
      er.on("data", (c: Buffer) => chunks.push(c));
      er.on("end", () => {
        const body = Buffer.concat(chunks);
        note({ status: er.statusCode ?? 502 });
        socket.write(`HTTP/1.1 ${er.statusCode} ${er.statusMessage ?? ""}\r\ncontent-type: ${er.headers["content-type"] ?? "application/json"}\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n`);
        socket.end(body);
      });
    });
    up.on("error", (e) => rawAnswer({ ok: false, status: 502, message: `loopsmith socket proxy: the engine did not answer ${route.call}: ${e.message}` }));
    up.end();
  }

  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES });
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    const entry: ProxyLogEntry = { method: req.method ?? "", url: short(req.url), status: 0 };
    const note = (e: Partial<ProxyLogEntry>) => Object.assign(entry, e);
    res.on("finish", () => opts.log?.({ ...entry, status: entry.status || res.statusCode }));
    handle(req, res, note).catch((e: unknown) => {
      if (res.headersSent) res.destroy();
      else answer(res, { ok: false, status: 502, message: `loopsmith socket proxy: ${(e as Error).message}` });
    });
  });
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const entry: ProxyLogEntry = { method: req.method ?? "", url: short(req.url), status: 0 };
    let logged = false;
    const note = (e: Partial<ProxyLogEntry>) => {
      Object.assign(entry, e);
      if (entry.status && !logged) {
        logged = true;
        opts.log?.({ ...entry });
      }
    };
    upgrade(req, socket, head, note).catch(() => socket.destroy());
  });
  server.on("close", () => agent.destroy());
  return server;
}

/** A request target for the log: dockerode's can be tens of KiB (see MAX_HEADER_BYTES). */
function short(url: string | undefined): string {
  const u = url ?? "";
  return u.length > 300 ? `${u.slice(0, 300)}...` : u;
}

/** The bytes after the first `n` of a connection (head first, then what the socket brings). */
function skip(socket: Duplex, head: Buffer, n: number): Promise<Buffer> {
  if (head.length >= n) return Promise.resolve(head.subarray(n));
  let need = n - head.length;
  return new Promise((resolve, reject) => {
    const done = (rest: Buffer) => {
      socket.off("data", onData);
      socket.off("error", reject);
      socket.off("end", onEnd);
      socket.pause();
      resolve(rest);
    };
    const onData = (c: Buffer) => {
      if (c.length < need) need -= c.length;
      else done(c.subarray(need));
    };
    const onEnd = () => reject(new Error("the connection ended inside the request body"));
    socket.on("data", onData);
    socket.on("error", reject);
    socket.on("end", onEnd);
  });
}
