import Fastify, { LogController, type FastifyError, type FastifyHttpOptions, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import type { Server } from "node:http";
import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import {
  hasZodFastifySchemaValidationErrors,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { LoopSmithError, type Logger, type Metrics } from "@loopsmith/core";
import type { Exposition } from "@loopsmith/metrics";
import type { Queue } from "bullmq";
import { registerAuth, registerWithAccess } from "./auth";
import { registerBodyGuard } from "./body-guard";
import { clientErrorHandler } from "./client-errors";
import { consoleRoutes } from "./console";
import { registerJsonBody } from "./json-body";
import { DEFAULT_MAX_IN_FLIGHT, registerLoadShedding } from "./load-shed";
import { openApiTransform, openApiTransformObject } from "./openapi-docs";
import { registerAuthFailureLimit, registerRateLimit } from "./rate-limit";
import { actionRoutes } from "./routes/actions";
import { adminRoutes } from "./routes/admin";
import { adminKeyRoutes } from "./routes/admin-keys";
import { artifactRoutes } from "./routes/artifacts";
import { checkRoutes } from "./routes/checks";
import { deliveryRoutes } from "./routes/deliveries";
import { eventRoutes } from "./routes/events";
import { goalRoutes } from "./routes/goals";
import { scheduleRoutes } from "./routes/schedules";
import { healthRoutes, type Readiness } from "./routes/health";
import { metricsRoutes } from "./routes/metrics";
import { queueDashboardRoutes } from "./routes/queues";
import { receiptRoutes } from "./routes/receipts";
import { replayRoutes } from "./routes/replay";
import type { Services } from "./services";
import { unavailable } from "./unavailable";

export interface ApiDeps {
  readiness: Readiness;
  readyCheckTimeoutMs?: number;
  /** A pino logger, or false to keep tests quiet. */
  logger?: Logger | false;
  /** Database, queues and settings for every route but health; without them those routes answer 503. */
  services?: Services;
  /** Whose X-Forwarded-For to believe for req.ip (TRUST_PROXY; default false: the socket's peer). */
  trustProxy?: boolean | number | string[];
  /** Largest request body accepted (default 16 MiB: inputs are capped at 10 MiB, base64 adds a third). */
  bodyLimit?: number;
  /** How long a request body may take to arrive, from its headers (default 30 s). */
  bodyTimeoutMs?: number;
  /** Bodies of 1 MiB or more read and parsed at once; the others wait for a slot (default 2). */
  largeBodyConcurrency?: number;
  /** Requests worked on at once; one more is a 503 LS_ERR_BUSY (default 64; 0: no bound). See load-shed.ts. */
  maxInFlight?: number;
  /** How long a request's headers may take to arrive (default 30 s); then a 408 LS_ERR_HEADERS_TIMEOUT. */
  headersTimeoutMs?: number;
  /**
   * Request durations go to `metrics`; with an exposition, GET /metrics serves it to holders of `token`
   * (without a token it answers 403). Unset: no /metrics route.
   */
  metrics?: { metrics: Metrics; exposition?: Exposition; token?: string };
  /** Where the console's built files are (default apps/console/dist). */
  consoleDir?: string;
  /** The queues the dashboard at /admin/queues shows (behind ADMIN_API_KEY); unset: no dashboard. */
  dashboardQueues?: readonly Queue[];
}

export const DEFAULT_BODY_LIMIT = 16 * 1024 * 1024;
export const DEFAULT_BODY_TIMEOUT_MS = 30_000;
export const DEFAULT_LARGE_BODY_CONCURRENCY = 2;
export const DEFAULT_HEADERS_TIMEOUT_MS = 30_000;

export const API_VERSION = "0.1.0";

/** Fastify's request lines, as one: the completed line carries the request's method and URL too. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { req: request, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, "request errored");
    else reply.log.info(line, "request completed");
  }
}

const trustHops = (n: number) => (_address: string, hop: number) => hop < n;

/** Build the Fastify instance without listening: tests use app.inject(), server.ts calls listen(). */
export async function build(deps: ApiDeps) {
  const headersTimeoutMs = deps.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
  const options: FastifyHttpOptions<Server> = {
    bodyLimit: deps.bodyLimit ?? DEFAULT_BODY_LIMIT,
    // A hop count as the function Fastify makes of one (its types take no number): trust the n nearest hops.
    trustProxy: typeof deps.trustProxy === "number" ? trustHops(deps.trustProxy) : (deps.trustProxy ?? false),
    // Open SSE streams and idle keep-alive sockets must not hold up a shutdown.
    forceCloseConnections: true,
    // One log line per request, when it is answered (Fastify's "incoming request" line said nothing more).
    logController: new OneLinePerRequest(),
    // Errors the router raises before any route runs (an over-long or malformed URL) get our shape too.
    frameworkErrors: (err: FastifyError, _req: FastifyRequest, reply: FastifyReply) => {
      const path = "params";
      reply.status(400).send(new LoopSmithError("LS_ERR_VALIDATION", `The request URL is invalid: ${err.message}`, [{ path, message: err.message }]).toBody());
    },
    // And those Node's HTTP parser raises before Fastify sees a request (431, 408, 400): see client-errors.ts.
    clientErrorHandler,
    http: {
      headersTimeout: headersTimeoutMs,
      // Node looks for expired headers only this often (30 s by default, which would double the timeout).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
    },
  };
  const base: FastifyInstance = deps.logger
    ? (Fastify({ loggerInstance: deps.logger, ...options }) as unknown as FastifyInstance)
    : Fastify({ logger: false, ...options });
  const app = base.withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerJsonBody(app);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: "3.1.0",
      components: {
        securitySchemes: {
          bearerAuth: { type: "http", scheme: "bearer", description: "A tenant API key (lsk_...)." },
          adminKey: { type: "http", scheme: "bearer", description: "ADMIN_API_KEY, for /admin routes." },
        },
      },
      security: [{ bearerAuth: [] }],
      info: {
        title: "LoopSmith",
        version: API_VERSION,
        description: "Closed-loop goal executor: plan, write a program, run it in a sandbox, verify, repeat.",
      },
    },
    transform: openApiTransform,
    transformObject: openApiTransformObject,
  });
  await registerWithAccess(app, "public", fastifySwaggerUi, { routePrefix: "/docs" });

  app.setErrorHandler((err, req, reply) => {
    // Refused before its body was read (no key, over a limit, too large, too slow): close the connection
    // rather than read and discard the rest of a body nobody wants.
    if (!req.raw.complete) reply.header("connection", "close");
    if (hasZodFastifySchemaValidationErrors(err)) {
      const details = err.validation.map((v) => ({
        path: [err.validationContext ?? "body", ...v.instancePath.split("/").filter(Boolean)].join("."),
        message: v.message ?? "invalid",
      }));
      return reply.status(400).send(new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", details).toBody());
    }
    if (err instanceof LoopSmithError) {
      // Every 503 says when to come back; a more precise delay set earlier (a busy slot: 1 s) stands.
      if (err.status === 503 && !reply.hasHeader("retry-after")) reply.header("retry-after", "5");
      return reply.status(err.status).send(err.toBody());
    }
    // Fastify's own client errors (malformed JSON, oversize or non-JSON bodies) keep their 4xx status.
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 413) return reply.status(413).send(new LoopSmithError("LS_ERR_PAYLOAD_TOO_LARGE", `The request body exceeds ${deps.bodyLimit ?? DEFAULT_BODY_LIMIT} bytes.`).toBody());
    if (status === 415) return reply.status(415).send(new LoopSmithError("LS_ERR_UNSUPPORTED_MEDIA_TYPE").toBody());
    if (status !== undefined && status >= 400 && status < 500)
      return reply.status(400).send(new LoopSmithError("LS_ERR_VALIDATION", (err as Error).message, [{ path: "body", message: (err as Error).message }]).toBody());
    // The database or another dependency down or saturated: a 503 to retry, not a 500 (issue 25).
    const outage = unavailable(err);
    if (outage) {
      req.log.warn({ err, code: outage.error.code }, "dependency unavailable");
      return reply.status(503).header("retry-after", String(outage.retryAfterSeconds)).send(outage.error.toBody());
    }
    req.log.error({ err }, "unhandled error");
    return reply.status(500).send(new LoopSmithError("LS_ERR_INTERNAL").toBody());
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(new LoopSmithError("LS_ERR_NOT_FOUND", `No route ${req.method} ${req.url}.`).toBody());
  });

  const metrics = deps.metrics;
  if (metrics) {
    // The route's template (/goals/:id), never the URL itself: label values stay a small, fixed set.
    app.addHook("onResponse", async (req, reply) => {
      metrics.metrics.httpRequest({ route: req.routeOptions.url ?? "unmatched", method: req.method, statusCode: reply.statusCode, seconds: reply.elapsedTime / 1000 });
    });
  }

  const services = () => {
    if (!deps.services) throw new LoopSmithError("LS_ERR_NOT_READY", "Goal storage is not configured in this instance.");
    return deps.services;
  };
  // onRequest hooks run in this order: take an in-flight place (or 503 at once), refuse an address that keeps
  // failing to authenticate, authenticate, count the request against its tenant's limit, give the place
  // back while the body arrives, and only then admit its body.
  const rateLimit = () => deps.services?.rateLimit && { ...deps.services.rateLimit, prefix: deps.services.queuePrefix };
  const shedding = registerLoadShedding(app, deps.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
  registerAuthFailureLimit(app, rateLimit);
  registerAuth(app, () => ({ prisma: services().prisma, adminApiKey: services().adminApiKey }));
  registerRateLimit(app, rateLimit);
  app.addHook("onRequest", shedding.pause);
  registerBodyGuard(app, {
    timeoutMs: deps.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    largeConcurrency: deps.largeBodyConcurrency ?? DEFAULT_LARGE_BODY_CONCURRENCY,
  });

  await app.register(healthRoutes, { readiness: deps.readiness, timeoutMs: deps.readyCheckTimeoutMs ?? 2000 });
  await app.register(goalRoutes, { deps: services });
  await app.register(checkRoutes);
  await app.register(actionRoutes, { deps: services });
  await app.register(deliveryRoutes, { deps: services });
  await app.register(scheduleRoutes, { deps: services });
  await app.register(eventRoutes, { deps: services });
  await app.register(adminRoutes, { deps: services });
  await app.register(adminKeyRoutes, { deps: services });
  await app.register(receiptRoutes, { deps: services });
  await app.register(replayRoutes, { deps: services });
  await app.register(artifactRoutes, { deps: services });
  if (metrics?.exposition) await app.register(metricsRoutes, { exposition: metrics.exposition, token: metrics.token });
  // The console's files are public (the page holds no data; it asks for a key and uses the API).
  await registerWithAccess(app, "public", consoleRoutes, { dir: deps.consoleDir });
  if (deps.dashboardQueues) await registerWithAccess(app, "admin", queueDashboardRoutes, { queues: deps.dashboardQueues }, { basicAuth: true });
  return app;
}
