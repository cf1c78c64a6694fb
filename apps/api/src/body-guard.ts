// What a request body may cost the API process before it is parsed.
// - A deadline: the whole body must arrive within timeoutMs of the headers, or the request gets a 408
//   and its connection is closed (a client sending 1 byte a second would otherwise hold a socket forever).
// - Large bodies take a slot: at most `largeConcurrency` bodies of LARGE_BODY_BYTES or more (or of unknown
//   length) are read and parsed at once per API process; the others wait for a slot without being read
//   (TCP holds them back), and get a 503 with Retry-After when none frees up within timeoutMs. Each large
//   body costs a few times its size while it is decoded, parsed, validated, hashed and stored, so this is
//   what bounds the process's memory and keeps the event loop free for everyone else.
// Both hooks run after authentication (onRequest hooks run in order): a request without a valid key is
// answered before a byte of its body is read, and never takes a slot.
import { PassThrough } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { LoopSmithError } from "@loopsmith/core";

export const LARGE_BODY_BYTES = 1024 * 1024;

export interface BodyGuardSettings {
  timeoutMs: number;
  largeConcurrency: number;
}

declare module "fastify" {
  interface FastifyRequest {
    releaseBodySlot?: () => void;
  }
}

function hasBody(req: FastifyRequest): boolean {
  const len = req.headers["content-length"];
  return (len !== undefined && len !== "0") || req.headers["transfer-encoding"] !== undefined;
}

function isLarge(req: FastifyRequest): boolean {
  const len = Number(req.headers["content-length"]);
  return !Number.isFinite(len) || len >= LARGE_BODY_BYTES;
}

/** A counting semaphore whose waiters give up after a deadline. */
function slots(size: number) {
  let free = size;
  const waiting: (() => void)[] = [];
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else free++;
  };
  const acquire = (timeoutMs: number): Promise<boolean> => {
    if (free > 0) {
      free--;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(grant), 1);
        resolve(false);
      }, timeoutMs);
      waiting.push(grant);
    });
  };
  return { acquire, release, state: () => ({ free, waiting: waiting.length }) };
}

export function registerBodyGuard(app: FastifyInstance, settings: BodyGuardSettings): void {
  const large = slots(settings.largeConcurrency);

  app.addHook("onRequest", async (req, reply) => {
    if (!hasBody(req) || !isLarge(req) || req.routeOptions.url === undefined) return;
    if (!(await large.acquire(settings.timeoutMs))) {
      reply.header("retry-after", "1").header("connection", "close");
      throw new LoopSmithError("LS_ERR_BUSY", `This API process is already reading ${settings.largeConcurrency} large request bodies; retry shortly.`);
    }
    let released = false;
    req.releaseBodySlot = () => {
      if (released) return;
      released = true;
      large.release();
    };
  });
  // The slot is held until the request is answered (the parsed body lives until then) or abandoned.
  app.addHook("onResponse", async (req) => req.releaseBodySlot?.());
  app.addHook("onRequestAbort", async (req) => req.releaseBodySlot?.());

  app.addHook("preParsing", async (req, reply, payload) => {
    if (!hasBody(req)) return payload;
    const guarded = new PassThrough();
    const timer = setTimeout(() => {
      // Answered already (a refusal that left the rest of the body unread): nobody listens to the guarded
      // stream any more, and an error on it would be an uncaught exception. Drop the rest quietly.
      if (reply.sent || reply.raw.headersSent) {
        payload.unpipe(guarded);
        guarded.destroy();
        payload.resume();
        return;
      }
      // Answer now, on a connection that closes after the answer: the rest of the body is never read.
      reply.header("connection", "close");
      guarded.destroy(new LoopSmithError("LS_ERR_BODY_TIMEOUT", `The request body did not arrive within ${settings.timeoutMs} ms.`));
      payload.unpipe(guarded);
      payload.resume();
    }, settings.timeoutMs);
    const stop = () => clearTimeout(timer);
    payload.on("end", stop);
    payload.on("error", stop);
    payload.on("close", stop);
    guarded.on("close", stop);
    reply.raw.once("close", stop);
    payload.pipe(guarded);
    return guarded;
  });
}
