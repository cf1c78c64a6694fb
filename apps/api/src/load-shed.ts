// Load shedding (issue 25): at most `maxInFlight` requests of one API process are doing server-side work
// at once; one more is answered 503 LS_ERR_BUSY with Retry-After at once, before it touches the database.
// Without a bound, POST /goals at 100-200 req/s queued requests for the 10 pooled connections until
// Prisma's transactions gave up waiting (P2028) and half of them ended in 500s.
//
// A request holds its place only while the server works for it, never while it waits on its client:
// - from its first onRequest hook through authentication and the rate limit (the key lookup reads the
//   database); `pause` gives the place back before the body is read;
// - again from preHandler (its body in and valid) until its answer is handed to Fastify (onSend), or its
//   connection closes, whichever comes first.
// So a slow body, a large body waiting for its slot, or a slow reader of a large answer holds nothing,
// and a tenant cannot fill the places by sending bodies slowly.
// Not counted: /healthz and /readyz (load balancers must see the process while it sheds), unknown routes
// (404 without work), and event streams once they stream (they have their own limits, SSE_MAX_*).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { LoopSmithError } from "@loopsmith/core";

export const DEFAULT_MAX_IN_FLIGHT = 64;

const EXEMPT = new Set(["/healthz", "/readyz"]);

declare module "fastify" {
  interface FastifyRequest {
    /** Gives this request's in-flight place back; set while it holds one. */
    releaseInFlight?: () => void;
  }
}

function counted(req: FastifyRequest): boolean {
  const url = req.routeOptions.url;
  return url !== undefined && !EXEMPT.has(url);
}

/** A route that answers with an event stream (its 200 is documented as text/event-stream). */
function streams(req: FastifyRequest): boolean {
  const ok = (req.routeOptions.schema?.response as Record<string, { content?: Record<string, unknown> }> | undefined)?.[200];
  return ok?.content?.["text/event-stream"] !== undefined;
}

export interface LoadShedding {
  /** The requests holding a place now. */
  inFlight(): number;
  /** An onRequest hook to register after those that use the database and before any that waits on the client. */
  pause: (req: FastifyRequest) => Promise<void>;
}

/**
 * Registers the admission hooks; call it before any other onRequest hook that does work (hooks run in
 * order), and register the returned `pause` where the description above says. maxInFlight 0 disables.
 */
export function registerLoadShedding(app: FastifyInstance, maxInFlight: number): LoadShedding {
  let inFlight = 0;
  const take = (req: FastifyRequest, reply: FastifyReply) => {
    if (req.releaseInFlight) return;
    if (inFlight >= maxInFlight) {
      reply.header("retry-after", "1");
      throw new LoopSmithError("LS_ERR_BUSY", `This API process is already working on ${maxInFlight} requests; retry shortly.`, { in_flight_limit: maxInFlight });
    }
    inFlight++;
    let held = true;
    req.releaseInFlight = () => {
      if (!held) return;
      held = false;
      inFlight--;
      req.releaseInFlight = undefined;
    };
  };
  const release = async (req: FastifyRequest) => req.releaseInFlight?.();

  if (maxInFlight > 0) {
    app.addHook("onRequest", async (req, reply) => {
      if (!counted(req)) return;
      // Whatever way the exchange ends (answered, aborted, hijacked and closed), the place comes back.
      reply.raw.once("close", () => req.releaseInFlight?.());
      take(req, reply);
    });
    app.addHook("preHandler", async (req, reply) => {
      if (counted(req) && !streams(req)) take(req, reply);
    });
    app.addHook("onSend", async (req) => {
      req.releaseInFlight?.();
    });
  }
  return { inFlight: () => inFlight, pause: release };
}
