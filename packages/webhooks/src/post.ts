// One HTTP attempt: POST to the address the SSRF guard approved, never to whatever DNS says now.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";

/** Receivers' answers are read (so the connection closes cleanly) and thrown away past this. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
export const USER_AGENT = "LoopSmith-Webhooks/1";

export interface PostResult {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  /** The receiver's Retry-After header, as sent (see parseRetryAfter); null without one. */
  retryAfter?: string | null;
}

export async function postPinned(opts: {
  url: string;
  address: string;
  family: 4 | 6;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}): Promise<PostResult> {
  const url = new URL(opts.url);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  // Node calls lookup with `all: true` when it tries several addresses (autoSelectFamily): answer both forms.
  const pinned = ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    if (options?.all) cb(null, [{ address: opts.address, family: opts.family }]);
    else cb(null, opts.address, opts.family);
  }) as unknown as LookupFunction;
  const body = Buffer.from(opts.body, "utf8");

  return new Promise<PostResult>((resolve) => {
    let settled = false;
    let retryAfter: string | null = null;
    const done = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ statusCode, latencyMs: elapsed(), error, retryAfter });
    };
    const req = (url.protocol === "https:" ? https : http).request(url, {
      method: "POST",
      // Host header and TLS SNI/certificate checks stay with the URL's host name.
      lookup: pinned,
      // A fresh connection per attempt: a pooled socket could point at an address checked for another URL.
      agent: false,
      headers: { ...opts.headers, "content-type": "application/json", "content-length": String(body.length), "user-agent": USER_AGENT },
    });
    let statusCode: number | null = null;
    // One deadline for the whole attempt, body included: a receiver that trickles bytes cannot hold a worker.
    const timer = setTimeout(() => {
      req.destroy(new Error(`timed out after ${opts.timeoutMs} ms`));
    }, opts.timeoutMs);
    req.on("response", (res) => {
      statusCode = res.statusCode ?? null;
      const header = res.headers["retry-after"];
      retryAfter = typeof header === "string" ? header.slice(0, 100) : null;
      let read = 0;
      const finish = () => done(statusCode, statusCode !== null && statusCode >= 200 && statusCode < 300 ? null : `HTTP ${statusCode}`);
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) {
          finish();
          res.destroy();
        }
      });
      res.on("end", finish);
      // The status is in hand; a body cut short (timeout, reset) does not change what the receiver said.
      res.on("error", finish);
      res.on("close", finish);
    });
    req.on("error", (e) => done(statusCode, statusCode === null ? describe(e) : `HTTP ${statusCode}`));
    req.end(body);
  });
}

function describe(e: unknown): string {
  const err = e as { code?: string; message?: string };
  if (err.code && err.message && !err.message.includes(err.code)) return `${err.code}: ${err.message}`;
  return err.message || err.code || String(e);
}
