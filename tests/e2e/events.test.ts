// GET /goals/:id/events on a real socket: app.inject buffers the whole response, so these tests listen
// on a port and read the stream with fetch, the way a client does. The goals really run (Docker sandbox,
// scripted model), so the stream sees rows arrive while the goal is in flight.
import { randomUUID } from "node:crypto";
import Fastify from "fastify";
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, type PrismaClient } from "@loopsmith/db";
import { eventRoutes } from "../../apps/api/src/routes/events";
import { demoGoal } from "../../scripts/demo/scenario";
import { startLoop, type GoalView, type Loop } from "../support/loop";

type Transition = GoalView["transitions"][number];
type Frame = { kind: "event"; id: string | undefined; event: string; data: string } | { kind: "comment"; text: string };

/** A small SSE parser (the text/event-stream format): frames end with a blank line; `:` lines are comments. */
async function* frames(body: ReadableStream<Uint8Array>): AsyncGenerator<Frame> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
    let end: number;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id: string | undefined;
      let event = "message";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) {
          yield { kind: "comment", text: line.slice(1).trim() };
          continue;
        }
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") id = value;
        else if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (data.length) yield { kind: "event", id, event, data: data.join("\n") };
    }
  }
  if (buffer.trim()) throw new Error(`stream ended inside a frame: ${JSON.stringify(buffer)}`);
}

let loop: Loop;
let base: string;

interface Stream {
  res: Response;
  next: (timeoutMs?: number) => Promise<Frame | null>;
  close: () => void;
}

async function open(url: string, o: { key?: string | null; headers?: Record<string, string>; base?: string } = {}): Promise<Stream> {
  const key = o.key === undefined ? loop.tenant.api_key : o.key;
  const ctl = new AbortController();
  const res = await fetch(`${o.base ?? base}${url}`, {
    headers: { accept: "text/event-stream", ...(key ? { authorization: `Bearer ${key}` } : {}), ...o.headers },
    signal: ctl.signal,
  });
  const it = res.body ? frames(res.body) : null;
  return {
    res,
    next: async (timeoutMs = 60_000) => {
      if (!it) throw new Error(`no body (status ${res.status})`);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no frame within ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        const r = await Promise.race([it.next(), timeout]);
        return r.done ? null : r.value;
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => ctl.abort(),
  };
}

/** Reads `transition` events until `end` (returned) and the server closing the stream. */
async function readToEnd(s: Stream, seen: { id: string | undefined; row: Transition }[] = []) {
  for (;;) {
    const f = await s.next();
    if (f === null) throw new Error(`the stream closed without an end event after ${seen.length} rows`);
    if (f.kind === "comment") continue;
    if (f.event === "transition") seen.push({ id: f.id, row: JSON.parse(f.data) as Transition });
    else if (f.event === "end") {
      const rest = await s.next(5_000);
      expect(rest, "the server closes the stream after end").toBeNull();
      return { seen, end: JSON.parse(f.data) as { state: string } };
    } else throw new Error(`unexpected event ${f.event}`);
  }
}

async function submit(): Promise<string> {
  const res = await loop.post(demoGoal());
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
}

beforeAll(async () => {
  loop = await startLoop();
  base = await loop.app.listen({ port: 0, host: "127.0.0.1" });
});
afterAll(async () => {
  // Node's fetch (undici) opens a spare connection after an aborted request; server.close() does not count
  // a connection that never sent a request as idle and would wait for it until headersTimeout.
  loop?.app.server.closeAllConnections();
  await loop?.close();
});

describe("GET /goals/:id/events", () => {
  it("streams every transition of a running goal once, in seq order, then end, and closes", async () => {
    const id = await submit();
    const s = await open(`/goals/${id}/events`);
    expect(s.res.status).toBe(200);
    expect(s.res.headers.get("content-type")).toBe("text/event-stream");
    expect(s.res.headers.get("cache-control")).toBe("no-cache");
    expect(s.res.headers.get("x-accel-buffering")).toBe("no");
    const { seen, end } = await readToEnd(s);
    expect(end).toEqual({ state: "verified" });

    const view = await loop.get(id);
    expect(view.body.state).toBe("verified");
    // The same rows as GET /goals/:id, each exactly once, ids being the seqs.
    expect(seen.map((e) => e.row)).toEqual(view.body.transitions);
    expect(seen.map((e) => e.id)).toEqual(view.body.transitions.map((t) => String(t.seq)));
    expect(seen.map((e) => e.row.seq)).toEqual(seen.map((_, i) => i));
    expect(seen.at(-1)!.row.to).toBe("verified");
    expect(seen.map((e) => e.row.to).join(" → ")).toBe(view.body.tape);
  });

  it("resumes after Last-Event-ID mid-run with exactly the rows after it: no gap, no repeat", async () => {
    const id = await submit();
    const first = await open(`/goals/${id}/events`);
    const before: { id: string | undefined; row: Transition }[] = [];
    while (before.length < 3) {
      const f = await first.next();
      if (f === null) throw new Error("the stream closed early");
      if (f.kind === "event" && f.event === "transition") before.push({ id: f.id, row: JSON.parse(f.data) as Transition });
    }
    first.close();
    const atDisconnect = await loop.get(id);
    expect(["verified", "failed", "cancelled"], "the goal must still be running when the client drops").not.toContain(atDisconnect.body.state);

    const lastId = before.at(-1)!.id!;
    expect(lastId).toBe("2");
    const second = await open(`/goals/${id}/events`, { headers: { "last-event-id": lastId } });
    expect(second.res.status).toBe(200);
    const { seen: after, end } = await readToEnd(second);
    expect(end.state).toBe("verified");
    expect(after[0]!.row.seq).toBe(3);

    const view = await loop.get(id);
    const all = [...before, ...after].map((e) => e.row);
    expect(all).toEqual(view.body.transitions);
    expect(all.map((t) => t.seq)).toEqual(view.body.transitions.map((_, i) => i));

    // ?last_event_id= does the same for clients that cannot set headers; the header wins when both are given.
    const byQuery = await readToEnd(await open(`/goals/${id}/events?last_event_id=7`));
    expect(byQuery.seen.map((e) => e.row.seq)).toEqual(view.body.transitions.filter((t) => t.seq > 7).map((t) => t.seq));
    const both = await readToEnd(await open(`/goals/${id}/events?last_event_id=1`, { headers: { "last-event-id": "9" } }));
    expect(both.seen.map((e) => e.row.seq)).toEqual(view.body.transitions.filter((t) => t.seq > 9).map((t) => t.seq));

    // Resuming after the terminal row gets only the end.
    const lastSeq = view.body.transitions.at(-1)!.seq;
    const done = await readToEnd(await open(`/goals/${id}/events`, { headers: { "last-event-id": String(lastSeq) } }));
    expect(done.seen).toEqual([]);
    expect(done.end).toEqual({ state: "verified" });
  });

  it("is 404 JSON, before any streaming, for another tenant's goal, an unknown id and a non-id", async () => {
    const id = await submit();
    const other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
    const cases: [string, string][] = [
      [`/goals/${id}/events`, other.api_key],
      [`/goals/${randomUUID()}/events`, loop.tenant.api_key],
      ["/goals/not-a-uuid/events", loop.tenant.api_key],
    ];
    for (const [url, key] of cases) {
      const res = await fetch(`${base}${url}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status, url).toBe(404);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(await res.json()).toMatchObject({ error: { code: "LS_ERR_NOT_FOUND" } });
    }
    // The owner still sees it (the 404 above is the tenant scope, not a broken goal).
    const own = await open(`/goals/${id}/events`);
    expect(own.res.status).toBe(200);
    own.close();
    await loop.waitForEnd(id);
  });

  it("is 401 without a key and 400 for a Last-Event-ID that is not a seq", async () => {
    const id = await submit();
    const none = await fetch(`${base}/goals/${id}/events`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: "LS_ERR_UNAUTHORIZED" } });
    const wrong = await fetch(`${base}/goals/${id}/events`, { headers: { authorization: "Bearer lsk_nope" } });
    expect(wrong.status).toBe(401);
    const bad = await fetch(`${base}/goals/${id}/events`, { headers: { authorization: `Bearer ${loop.tenant.api_key}`, "last-event-id": "abc" } });
    expect(bad.status).toBe(400);
    const body = (await bad.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe("LS_ERR_VALIDATION");
    expect(body.error.details.map((d) => d.path)).toContain("headers.last-event-id");
    const badQuery = await fetch(`${base}/goals/${id}/events?last_event_id=-1`, { headers: { authorization: `Bearer ${loop.tenant.api_key}` } });
    expect(badQuery.status).toBe(400);
    await loop.waitForEnd(id);
  });
});

describe("an idle stream", () => {
  // The route on its own, with short timers, over a goal nobody runs (it stays in plan): heartbeats,
  // disconnects and shutdown are about timing, not about the loop.
  let parked: Loop;
  beforeAll(async () => {
    parked = await startLoop({ runner: false });
  });
  afterAll(async () => {
    await parked?.close();
  });

  /** The first frame that is not a heartbeat: the first poll may take longer than one (100 ms) on a busy machine. */
  async function firstEvent(s: { next(timeoutMs?: number): Promise<Frame | null> }) {
    let f = await s.next();
    while (f?.kind === "comment") f = await s.next();
    return f;
  }

  async function miniApp() {
    let polls = 0;
    const prisma = parked.prisma;
    const counting = new Proxy(prisma, {
      get(target, prop, receiver) {
        if (prop !== "goal") return Reflect.get(target, prop, receiver) as unknown;
        const goal = target.goal;
        return new Proxy(goal, {
          get(g, p, r) {
            if (p === "findUnique")
              return (...args: Parameters<typeof goal.findUnique>) => {
                polls++;
                return g.findUnique(...args);
              };
            return Reflect.get(g, p, r) as unknown;
          },
        });
      },
    }) as PrismaClient;
    // forceCloseConnections: see the note on closeAllConnections above.
    const app = Fastify({ logger: false, forceCloseConnections: true }).withTypeProvider<ZodTypeProvider>();
    app.setValidatorCompiler(validatorCompiler);
    app.setSerializerCompiler(serializerCompiler);
    app.addHook("onRequest", async (req) => {
      req.tenant = { id: parked.tenant.tenant_id, name: "t", approvalThresholdUsd: null };
    });
    await app.register(eventRoutes, { deps: () => ({ prisma: counting }), pollMs: 20, heartbeatMs: 100 });
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    return { app, url, polls: () => polls };
  }

  it("sends `: ping` heartbeats and stops polling when the client disconnects", async () => {
    const res = await parked.post(demoGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const mini = await miniApp();
    try {
      const s = await open(`/goals/${id}/events`, { base: mini.url });
      expect(await firstEvent(s)).toMatchObject({ kind: "event", id: "0", event: "transition" });
      let pings = 0;
      while (pings < 2) {
        const f = await s.next(2_000);
        expect(f, "no transition can come: nobody runs the goal").toEqual({ kind: "comment", text: "ping" });
        pings++;
      }
      expect(mini.polls()).toBeGreaterThan(3);
      s.close();
      // A poll already in flight may still land (late, on a busy machine); after that, none for well over
      // 25 poll intervals (20 ms each here), twice in a row. A stream that kept polling never goes quiet.
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
      const deadline = Date.now() + 5_000;
      let quiet = 0;
      let last = mini.polls();
      while (quiet < 2 && Date.now() < deadline) {
        await sleep(600);
        const now = mini.polls();
        quiet = now === last ? quiet + 1 : 0;
        last = now;
      }
      expect(quiet, "polling goes on after the client left").toBe(2);
    } finally {
      await mini.app.close();
    }
  });

  it("ends open streams when the app closes, so shutdown does not hang", async () => {
    const res = await parked.post(demoGoal());
    const id = res.body.id as string;
    const mini = await miniApp();
    const s = await open(`/goals/${id}/events`, { base: mini.url });
    expect(await firstEvent(s)).toMatchObject({ kind: "event", event: "transition" });
    const started = Date.now();
    await mini.app.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    let f: Frame | null;
    do f = await s.next(2_000);
    while (f !== null && f.kind === "comment");
    expect(f, "the stream ends without an end event: the goal did not end").toBeNull();
  });
});
