// Who is signed in, and how the page talks to the API. The key lives in sessionStorage: this tab only,
// gone when the tab closes, never in a URL or a cookie. Every request sends it as a bearer header.
import { createClient, type ApiError, type LoopSmithClient } from "@loopsmith/client";

const KEY = "loopsmith.console.key";
const ROLE = "loopsmith.console.role";

export type Role = "tenant" | "admin";

export interface Session {
  key: string;
  role: Role;
  client: LoopSmithClient;
}

function make(key: string, role: Role): Session {
  return { key, role, client: createClient({ url: location.origin, apiKey: key }) };
}

export function restore(): Session | null {
  const key = sessionStorage.getItem(KEY);
  const role = sessionStorage.getItem(ROLE);
  return key && (role === "tenant" || role === "admin") ? make(key, role) : null;
}

export function forget(): void {
  sessionStorage.removeItem(KEY);
  sessionStorage.removeItem(ROLE);
}

/** The message of an API error body, or of whatever else went wrong. */
export function errorText(error: unknown, status?: number): string {
  const e = (error as ApiError | undefined)?.error;
  if (e && typeof e.message === "string") return `${e.message} (${e.code}${status ? `, HTTP ${status}` : ""})`;
  if (error instanceof Error) return error.message;
  return status ? `HTTP ${status}` : String(error);
}

/**
 * Signs in with `key`: a tenant key reads the tenant's goals, the admin key the dead letters. Answers the
 * session, or the reason the key was refused.
 */
export async function signIn(raw: string): Promise<Session | string> {
  const key = raw.trim();
  if (!key) return "Enter an API key.";
  const asTenant = make(key, "tenant");
  const t = await asTenant.client.GET("/goals", { params: { query: { limit: 1 } } });
  let session: Session | null = t.response.ok ? asTenant : null;
  if (!session) {
    const asAdmin = make(key, "admin");
    const a = await asAdmin.client.GET("/admin/dead-letters");
    if (a.response.ok) session = asAdmin;
    else if (t.response.status === 429 || a.response.status === 429) return errorText(t.error ?? a.error, 429);
  }
  if (!session) return "The key was refused: it is not a tenant's API key nor the admin key, or it was revoked or expired.";
  sessionStorage.setItem(KEY, session.key);
  sessionStorage.setItem(ROLE, session.role);
  return session;
}

/** A GET of the API that answers bytes (artifacts, programs), with the key. */
export async function fetchBytes(session: Session, path: string): Promise<Blob> {
  const res = await fetch(path, { headers: { authorization: `Bearer ${session.key}` } });
  if (!res.ok) {
    let body: unknown = null;
    try {
      body = await res.json();
    } catch {
      // not JSON
    }
    throw new Error(errorText(body, res.status));
  }
  return res.blob();
}

/** Saves `blob` as a file named `name` (a download, through an object URL: the key never in a URL). */
export function saveAs(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name.split("/").pop() ?? name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Follows a goal's tape over its server-sent events (GET /goals/:id/events), read with fetch so that the
 * key goes in a header (EventSource cannot send one). Calls `onRow` per transition and `onEnd` at the end;
 * reconnects from the last seq until stopped. Answers the stop function.
 */
export function follow(session: Session, goalId: string, handlers: { onRow: (seq: number) => void; onEnd: () => void }): () => void {
  const abort = new AbortController();
  let last: string | null = null;
  const run = async () => {
    while (!abort.signal.aborted) {
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${session.key}`, accept: "text/event-stream" };
        if (last !== null) headers["last-event-id"] = last;
        const res = await fetch(`/goals/${encodeURIComponent(goalId)}/events`, { headers, signal: abort.signal });
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let cut: number;
          while ((cut = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, cut);
            buffer = buffer.slice(cut + 2);
            const fields = new Map<string, string>();
            for (const line of block.split("\n")) {
              const colon = line.indexOf(":");
              if (colon <= 0) continue;
              fields.set(line.slice(0, colon), line.slice(colon + 1).replace(/^ /, ""));
            }
            const event = fields.get("event");
            if (fields.has("id")) last = fields.get("id")!;
            if (event === "transition") handlers.onRow(Number(last));
            if (event === "end") {
              handlers.onEnd();
              return;
            }
          }
        }
      } catch {
        if (abort.signal.aborted) return;
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  void run();
  return () => abort.abort();
}
