// Bearer API keys. Every route except health, readiness, the docs and the receipt keys needs one; the tenant it belongs
// to scopes everything the request may see or change. /admin routes need ADMIN_API_KEY instead.
// Both are checked in an onRequest hook, before a byte of the request body is read.
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { LoopSmithError } from "@loopsmith/core";
import { checkApiKey, type AuthenticatedTenant, type PrismaClient } from "@loopsmith/db";

declare module "fastify" {
  interface FastifyRequest {
    tenant?: AuthenticatedTenant;
    /** Set when the request carried ADMIN_API_KEY (only /admin routes look). */
    admin?: boolean;
  }
}

/** The request's tenant. Routes call this; it throws 401 if the auth hook did not set one. */
export function tenantOf(req: FastifyRequest): AuthenticatedTenant {
  if (!req.tenant) throw new LoopSmithError("LS_ERR_UNAUTHORIZED");
  return req.tenant;
}

/** For /admin routes: throws unless the auth hook saw the admin key. */
export function requireAdmin(req: FastifyRequest): void {
  if (req.admin !== true) throw new LoopSmithError("LS_ERR_FORBIDDEN", "Not the admin key.");
}

// The receipt keys are public so that anyone handed a receipt can check it.
export const PUBLIC = [/^\/healthz(\?|$)/, /^\/readyz(\?|$)/, /^\/docs(\/|\?|$)/, /^\/\.well-known\/loopsmith-receipt-keys(\?|$)/];

export function isPublic(req: FastifyRequest): boolean {
  return PUBLIC.some((p) => p.test(req.url));
}

export function bearer(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== "string") return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m?.[1];
}

/**
 * Compares digests, not the strings: equal length whatever was sent, so any key (of any length, in any
 * characters) is simply wrong, and the time taken says nothing about the admin key's length or bytes.
 */
export function isAdminKey(given: string, want: string | undefined): boolean {
  if (want === undefined) return false;
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(given), digest(want));
}

export interface AuthSettings {
  prisma: PrismaClient;
  adminApiKey?: string;
}

export function registerAuth(app: FastifyInstance, settings: () => AuthSettings): void {
  app.addHook("onRequest", async (req) => {
    if (isPublic(req)) return;
    // No such route: let the 404 say so (it reveals nothing a key would protect).
    if (req.routeOptions.url === undefined) return;
    const key = bearer(req);
    if (req.url.startsWith("/admin/")) {
      if (!key) throw new LoopSmithError("LS_ERR_UNAUTHORIZED", "Send the admin key: Authorization: Bearer <ADMIN_API_KEY>.");
      const want = settings().adminApiKey;
      if (!isAdminKey(key, want)) throw new LoopSmithError("LS_ERR_FORBIDDEN", want === undefined ? "Admin routes are disabled: ADMIN_API_KEY is not set." : "Not the admin key.");
      req.admin = true;
      return;
    }
    if (!key) throw new LoopSmithError("LS_ERR_UNAUTHORIZED");
    // Read from the database on every request, never cached: a revocation or expiry applies to the next one.
    const checked = await checkApiKey(settings().prisma, key);
    if (!checked.ok && checked.reason === "expired") throw new LoopSmithError("LS_ERR_KEY_EXPIRED");
    if (!checked.ok) throw new LoopSmithError("LS_ERR_UNAUTHORIZED", "The API key is unknown or revoked.");
    req.tenant = checked.tenant;
  });
}
