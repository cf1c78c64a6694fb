// GET /goals/:id/events: a goal's tape as Server-Sent Events, for clients that want progress without
// polling GET /goals/:id. The stream reads the transitions table (seq > last sent) rather than listening to
// the runner, so it works whichever process writes the rows and resumes exactly with Last-Event-ID.
import type { ServerResponse } from "node:http";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { LoopSmithError } from "@loopsmith/core";
import { goalsOf, transitionRow, type PrismaClient } from "@loopsmith/db";
import { isState, isTerminal } from "@loopsmith/machine";
import { errorBody, goalIdParams } from "@loopsmith/schemas";
import { tenantOf } from "../auth";
import { DEFAULT_LIMITS, type ApiLimitsConfig } from "../config";

export interface EventRouteOptions {
  deps: () => { prisma: PrismaClient; limits?: ApiLimitsConfig };
  /** How often a stream looks for new tape rows (default 250 ms). */
  pollMs?: number;
  /** How often an idle stream sends a `: ping` comment, so proxies keep the connection (default 15 s). */
  heartbeatMs?: number;
}

/** Rows read per poll; a longer tape arrives over several polls without holding it all in memory. */
const BATCH = 200;
/** Reconnection delay suggested to EventSource clients (ms). */
const RETRY_MS = 1000;

const seq = z.string().regex(/^\d{1,9}$/, "a tape seq: a non-negative integer");

const streamDescription = [
  "One `transition` event per tape row, in seq order: `id: <seq>`, `event: transition`, `data: {seq, from, to, at, detail}`",
  "(the same objects as the goal's `transitions`). First the tape so far, then each row as it is written. After the row",
  "that reaches verified, failed or cancelled comes `event: end` with `data: {\"state\": ...}` and the server closes the",
  "stream. An idle stream gets a `: ping` comment every 15 s.",
].join(" ");

function isTerminalState(s: string): boolean {
  return isState(s) && isTerminal(s);
}

/**
 * Open streams, per tenant and in all (README "Tenant limits"). Counted in this process: the pool they
 * draw on is this instance's. take() checks and counts in one synchronous step, so concurrent opens
 * cannot both get the last place; the release it returns is idempotent.
 */
function streamCounter() {
  let total = 0;
  const byTenant = new Map<string, number>();
  return {
    take(tenantId: string, limits: ApiLimitsConfig): () => void {
      const mine = byTenant.get(tenantId) ?? 0;
      const refuse = (limit: number, scope: "tenant" | "server") =>
        new LoopSmithError(
          "LS_ERR_STREAM_LIMIT",
          scope === "tenant"
            ? `This tenant has ${limit} event streams open, its limit; close one (or poll GET /goals/:id).`
            : `This server has ${limit} event streams open, its limit; retry later (or poll GET /goals/:id).`,
          { limit, scope },
        );
      if (limits.SSE_MAX_STREAMS_PER_TENANT > 0 && mine >= limits.SSE_MAX_STREAMS_PER_TENANT) throw refuse(limits.SSE_MAX_STREAMS_PER_TENANT, "tenant");
      if (limits.SSE_MAX_STREAMS > 0 && total >= limits.SSE_MAX_STREAMS) throw refuse(limits.SSE_MAX_STREAMS, "server");
      total++;
      byTenant.set(tenantId, mine + 1);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const left = (byTenant.get(tenantId) ?? 1) - 1;
        if (left > 0) byTenant.set(tenantId, left);
        else byTenant.delete(tenantId);
      };
    },
  };
}

/**
 * At most `max` polls at once: the streams share these places, so that however many are open they never
 * hold more than `max` of the pool's connections. A place is handed straight to the next waiter.
 */
function pollGate(max: () => number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active < max()) active++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

export const eventRoutes: FastifyPluginAsyncZod<EventRouteOptions> = async (app, opts) => {
  const pollMs = opts.pollMs ?? 250;
  const heartbeatMs = opts.heartbeatMs ?? 15_000;
  // Open streams would keep app.close() waiting forever: end them first. Clients resume elsewhere with Last-Event-ID.
  const open = new Set<() => void>();
  app.addHook("preClose", async () => {
    for (const stop of open) stop();
  });
  const limits = () => opts.deps().limits ?? DEFAULT_LIMITS;
  const counter = streamCounter();
  const gate = pollGate(() => limits().SSE_MAX_CONCURRENT_POLLS);

  app.get(
    "/goals/:id/events",
    {
      schema: {
        operationId: "streamGoalEvents",
        summary: "Live progress: the goal's tape as Server-Sent Events",
        description:
          `${streamDescription} To resume after a disconnect, send \`Last-Event-ID: <seq>\` (EventSource does so by itself) ` +
          "or `?last_event_id=<seq>`: the stream starts with the row after that seq, so no row is lost or repeated. " +
          "The header wins when both are given. Errors (unknown goal, bad key) are answered as JSON before any streaming.",
        tags: ["goals"],
        params: goalIdParams,
        headers: z.object({
          "last-event-id": seq.optional().describe("Resume after this tape seq (the id of the last event received)."),
        }),
        querystring: z.object({
          last_event_id: seq.optional().describe("Same as the Last-Event-ID header, for clients that cannot set headers."),
        }),
        response: {
          200: {
            description: "The event stream (text/event-stream).",
            content: { "text/event-stream": { schema: z.string().describe(streamDescription) } },
          },
          400: errorBody,
          401: errorBody,
          404: errorBody,
          429: errorBody,
          500: errorBody,
        },
      },
    },
    async (req, reply) => {
      const tenant = tenantOf(req);
      const { prisma } = opts.deps();
      const id = req.params.id;
      const goal = await goalsOf(prisma, tenant.id).find(id);
      if (!goal) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${id}.`);
      const resume = req.headers["last-event-id"] ?? req.query.last_event_id;
      // Refused as JSON, like every error before the stream starts; from here the place is this stream's.
      const release = counter.take(tenant.id, limits());

      // From here on the response is ours: Fastify neither serializes nor sends it. Headers set earlier
      // on the reply (rate limit) are carried over by hand.
      reply.hijack();
      const res = reply.raw;
      const carried = Object.entries(reply.getHeaders()).filter((e): e is [string, string | number | string[]] => e[1] !== undefined);
      res.writeHead(200, {
        ...Object.fromEntries(carried),
        "content-type": "text/event-stream",
        "cache-control": "no-cache",
        // nginx buffers proxied responses unless told not to; a buffered event stream is no stream.
        "x-accel-buffering": "no",
      });
      if (req.method === "HEAD") {
        release();
        res.end();
        return;
      }
      await streamTape(res, {
        release,
        gate,
        prisma,
        goalId: goal.id,
        after: resume === undefined ? -1 : Number(resume),
        pollMs,
        heartbeatMs,
        open,
        warn: (err, msg) => req.log.warn({ err, goalId: goal.id }, msg),
      });
    },
  );
};

async function streamTape(
  res: ServerResponse,
  o: {
    prisma: PrismaClient;
    goalId: string;
    after: number;
    pollMs: number;
    heartbeatMs: number;
    open: Set<() => void>;
    warn: (err: unknown, msg: string) => void;
    /** Gives the stream's place back (called once the stream is over, whichever way it ends). */
    release: () => void;
    gate: <T>(fn: () => Promise<T>) => Promise<T>;
  },
): Promise<void> {
  let closed = false;
  let wake = () => {};
  const stop = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    o.release();
    o.open.delete(stop);
    wake();
    if (!res.writableEnded) res.end();
  };
  res.on("close", stop);
  o.open.add(stop);
  const heartbeat = setInterval(() => {
    if (!closed) res.write(": ping\n\n");
  }, o.heartbeatMs);
  // A client gone before the stream began (while the goal was looked up) has fired its close already.
  if (res.destroyed) stop();
  const write = async (chunk: string) => {
    if (res.write(chunk) || res.destroyed) return;
    // A slow reader: wait until the socket drains (or goes away) before reading more rows.
    await new Promise<void>((resolve) => {
      const done = () => {
        res.off("drain", done);
        res.off("close", done);
        resolve();
      };
      res.on("drain", done);
      res.on("close", done);
    });
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  let last = o.after;
  try {
    await write(`retry: ${RETRY_MS}\n\n`);
    while (!closed) {
      // The goal's state and the rows after `last` in one read: the state and the terminal row are written
      // in one transaction, so a terminal state here means every row is visible to the row query too.
      const goal = await o.gate(() =>
        o.prisma.goal.findUnique({
          where: { id: o.goalId },
          select: { state: true, transitions: { where: { seq: { gt: last } }, orderBy: { seq: "asc" }, take: BATCH } },
        }),
      );
      if (!goal) break; // deleted under us: nothing more will come
      let end: string | undefined;
      for (const row of goal.transitions) {
        if (closed) return;
        await write(`id: ${row.seq}\nevent: transition\ndata: ${JSON.stringify(transitionRow(row))}\n\n`);
        last = row.seq;
        if (isTerminalState(row.toState)) end = row.toState;
      }
      // Resuming after the terminal row (or beyond the tape) finds no rows: the goal's state says it is over.
      if (!end && goal.transitions.length < BATCH && isTerminalState(goal.state)) end = goal.state;
      if (end) {
        if (!closed) await write(`event: end\ndata: ${JSON.stringify({ state: end })}\n\n`);
        break;
      }
      if (goal.transitions.length < BATCH) await sleep(o.pollMs);
    }
  } catch (err) {
    // The client reconnects (EventSource does so by itself) and resumes from its last id: nothing is lost.
    o.warn(err, "event stream failed; closing it");
  } finally {
    stop();
  }
}
