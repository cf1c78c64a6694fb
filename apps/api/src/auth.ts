// Bearer API keys. Every route except health, readiness, the docs and the receipt keys needs one; the tenant it belongs
// to scopes everything the request may see or change.
import type { FastifyInstance, FastifyRequest } from "fastify";
import { LoopSmithError } from "@loopsmith/core";
import { authenticate, type AuthenticatedTenant, type PrismaClient } from "@loopsmith/db";

declare module "fastify" {
  interface FastifyRequest {
    tenant?: AuthenticatedTenant;
  }
}

/** The request's tenant. Routes call this; it throws 401 if the auth hook did not set one. */
export function tenantOf(req: FastifyRequest): AuthenticatedTenant {
  if (!req.tenant) throw new LoopSmithError("LS_ERR_UNAUTHORIZED");
  return req.tenant;
}

// The receipt keys are public so that anyone handed a receipt can check it.
const PUBLIC = [/^\/healthz(\?|$)/, /^\/readyz(\?|$)/, /^\/docs(\/|\?|$)/, /^\/\.well-known\/loopsmith-receipt-keys(\?|$)/];

export function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== "string") return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

export function registerAuth(app: FastifyInstance, prisma: () => PrismaClient): void {
  app.addHook("onRequest", async (req) => {
    if (PUBLIC.some((p) => p.test(req.url))) return;
    // No such route: let the 404 say so (it reveals nothing a key would protect).
    if (req.routeOptions.url === undefined) return;
    if (req.url.startsWith("/admin/")) return; // admin routes check the admin key themselves
    const key = bearer(req);
    if (!key) throw new LoopSmithError("LS_ERR_UNAUTHORIZED");
    const tenant = await authenticate(prisma(), key);
    if (!tenant) throw new LoopSmithError("LS_ERR_UNAUTHORIZED", "The API key is unknown or revoked.");
    req.tenant = tenant;
  });
}
