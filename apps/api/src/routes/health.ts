import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { dependencyNames, healthzResponse, readyzResponse, type DependencyName, type ReadyzResponse } from "@loopsmith/schemas";

/** One probe per dependency: resolves with a short detail when reachable, throws saying why not. */
export type Readiness = Record<DependencyName, () => Promise<string>>;

async function probe(fn: () => Promise<string>, timeoutMs: number) {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const detail = await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { ok: true, latency_ms: Math.round(performance.now() - started), detail };
  } catch (e) {
    return { ok: false, latency_ms: Math.round(performance.now() - started), detail: (e as Error).message || String(e) };
  } finally {
    clearTimeout(timer);
  }
}

export const healthRoutes: FastifyPluginAsyncZod<{ readiness: Readiness; timeoutMs: number }> = async (app, opts) => {
  app.get(
    "/healthz",
    { schema: { summary: "The process is up", tags: ["health"], security: [], response: { 200: healthzResponse } } },
    async () => ({ status: "ok" as const }),
  );

  app.get(
    "/readyz",
    {
      schema: {
        summary: "Postgres, Redis, the Docker engine and the sandbox image are all reachable",
        tags: ["health"],
        security: [],
        response: { 200: readyzResponse, 503: readyzResponse },
      },
    },
    async (_req, reply) => {
      const results = await Promise.all(dependencyNames.map((n) => probe(opts.readiness[n], opts.timeoutMs)));
      const checks = Object.fromEntries(dependencyNames.map((n, i) => [n, results[i]])) as ReadyzResponse["checks"];
      const missing = dependencyNames.filter((n) => !checks[n].ok);
      const body: ReadyzResponse = { status: missing.length ? "not_ready" : "ready", checks, missing };
      return reply.status(missing.length ? 503 : 200).send(body);
    },
  );
};
