import type { FastifyBaseLogger } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError, publicError, type ErrorCode } from "@loopsmith/core";
import { dependencyNames, healthzResponse, readyzResponse, type DependencyName, type ReadyzResponse } from "@loopsmith/schemas";

/** One probe per dependency: resolves with a short detail when reachable, throws saying why not. */
export type Readiness = Record<DependencyName, () => Promise<string>>;

/** A failure without a more specific code gets its dependency's. */
const DEPENDENCY_CODE: Record<DependencyName, ErrorCode> = {
  postgres: "LS_ERR_DATABASE",
  redis: "LS_ERR_NOT_READY",
  docker: "LS_ERR_SANDBOX_UNAVAILABLE",
  sandbox_image: "LS_ERR_SANDBOX_UNAVAILABLE",
};

/**
 * /readyz is public: a failed probe shows a code and a short message (publicError), never the raw error,
 * whose text carries source paths, code frames, connection strings and internal addresses. The raw error
 * goes to the log.
 */
async function probe(name: DependencyName, fn: () => Promise<string>, timeoutMs: number, log: FastifyBaseLogger) {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new LoopSmithError("LS_ERR_NOT_READY", `no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started), detail, code: null };
  } catch (e) {
    log.warn({ dependency: name, err: e }, "readiness probe failed");
    const shown = publicError(e);
    const code = shown.code === "LS_ERR_INTERNAL" ? DEPENDENCY_CODE[name] : shown.code;
    return { ok: false, latency_ms: Math.round(performance.now() - started), detail: shown.message, code };
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncZod<{ readiness: Readiness; timeoutMs: number }> = async (app, opts) => {
  app.get(
    "/healthz",
    { config: { access: "public" }, schema: { operationId: "getHealthz", summary: "The process is up", tags: ["health"], security: [], response: { 200: healthzResponse } } },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      config: { access: "public" },
      schema: {
        operationId: "getReadyz",
        summary: "Postgres and Redis answer, and a runner is alive whose sandbox self-check passed",
        tags: ["health"],
        security: [],
        response: { 200: readyzResponse, 503: readyzResponse },
      },
    },
    async (req, reply) => {
      const results = await Promise.all(dependencyNames.map((n) => probe(n, opts.readiness[n], opts.timeoutMs, req.log)));
      const checks = Object.fromEntries(dependencyNames.map((n, i) => [n, results[i]])) as ReadyzResponse["checks"];
      const missing = dependencyNames.filter((n) => !checks[n].ok);
      const body: ReadyzResponse = { status: missing.length ? "not_ready" : "ready", checks, missing };
      return reply.status(missing.length ? 503 : 200).send(body);
    },
  );
};
