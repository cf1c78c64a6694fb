// GET /metrics for Prometheus (README "Metrics"): behind METRICS_TOKEN, off without it, and not in the
// OpenAPI document (it is for operators' scrapers, not for clients).
import type { FastifyPluginAsync } from "fastify";
import { LoopSmithError } from "@loopsmith/core";
import { bearerToken, tokenMatches, type Exposition } from "@loopsmith/metrics";

export const metricsRoutes: FastifyPluginAsync<{ exposition: Exposition; token?: string }> = async (app, opts) => {
  app.get("/metrics", { config: { access: "public" }, schema: { hide: true } }, async (req, reply) => {
    if (opts.token === undefined) throw new LoopSmithError("LS_ERR_FORBIDDEN", "Metrics are off: set METRICS_TOKEN to serve them.");
    const given = bearerToken(req.headers.authorization);
    if (given === undefined) throw new LoopSmithError("LS_ERR_UNAUTHORIZED", "Send the metrics token: Authorization: Bearer <METRICS_TOKEN>.");
    if (!tokenMatches(given, opts.token)) throw new LoopSmithError("LS_ERR_FORBIDDEN", "Not the metrics token.");
    const body = await opts.exposition.text();
    return reply.header("content-type", opts.exposition.contentType).header("cache-control", "no-store").send(body);
  });
};
