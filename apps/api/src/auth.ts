// Bearer API keys. Every route except health, readiness, the docs and the receipt keys needs one; the tenant it belongs
// to scopes everything the request may see or change. /admin routes need ADMIN_API_KEY instead.
// Both are checked in an onRequest hook, before a byte of the request body is read.
//
// Who may call a route is decided by the route the router matched (its `config.access`), never by the raw
// URL: the router matches the percent-decoded path, so `/%61dmin/queues` reaches the dashboard while a
// test of `req.url` sees no "/admin/" (issue 25: any tenant key opened the queue dashboard that way).
// A route without `config.access` needs a tenant key: forgetting to declare one fails closed.
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyContextConfig, FastifyInstance, FastifyPluginAsync, FastifyPluginCallback, FastifyPluginOptions, FastifyRequest } from "fastify";
import { LoopSmithError } from "@loopsmith/core";
import { checkApiKey, type AuthenticatedTenant, type PrismaClient } from "@loopsmith/db";

/** public: no key; tenant: a tenant's API key; admin: ADMIN_API_KEY. */
export type Access = "public" | "tenant" | "admin";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Who may call the route (default tenant). */
    access?: Access;
    /** Admin routes a browser opens (the queue dashboard): the key may also come as a Basic password. */
    basicAuth?: boolean;
  }
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

/** The matched route's access; unmatched requests (404s) have none. */
export function accessOf(req: FastifyRequest): Access | undefined {
  const route = req.routeOptions.url;
  if (route === undefined) return undefined;
  // The matched route's template, not the URL: a route under /admin is an admin route even if its
  // registration forgot to say so.
  if (route === "/admin" || route.startsWith("/admin/")) return "admin";
  return req.routeOptions.config.access ?? "tenant";
}

// The receipt keys are public so that anyone handed a receipt can check it. /metrics checks its own token
// (METRICS_TOKEN, see routes/metrics.ts), never a tenant's key.
export function isPublic(req: FastifyRequest): boolean {
  return accessOf(req) === "public";
}

/**
 * Registers `plugin` so that every route it (and anything it registers) declares gets `access`: for
 * routes made by other packages (Swagger UI, the queue dashboard), whose options we do not write.
 */
export async function registerWithAccess<O extends FastifyPluginOptions>(app: FastifyInstance, access: Access, plugin: FastifyPluginAsync<O> | FastifyPluginCallback<O>, opts: O, extra: Omit<FastifyContextConfig, "access"> = {}): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook("onRoute", (route) => {
      route.config = { ...(route.config as object), ...extra, access };
    });
    await scope.register(plugin, opts);
  });
}

/** The password of `Authorization: Basic ...` (the user name is ignored), for the queue dashboard's pages. */
export function basicPassword(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  const m = typeof h === "string" ? /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(h) : null;
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : undefined;
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
    const access = accessOf(req);
    // No such route: let the 404 say so (it reveals nothing a key would protect).
    if (access === undefined || access === "public") return;
    if (access === "admin") {
      // The queue dashboard is opened in a browser, which can send the key only as a Basic password.
      const key = bearer(req) ?? (req.routeOptions.config.basicAuth === true ? basicPassword(req) : undefined);
      if (!key) throw new LoopSmithError("LS_ERR_UNAUTHORIZED", "Send the admin key: Authorization: Bearer <ADMIN_API_KEY>.");
      const want = settings().adminApiKey;
      if (!isAdminKey(key, want)) throw new LoopSmithError("LS_ERR_FORBIDDEN", want === undefined ? "Admin routes are disabled: ADMIN_API_KEY is not set." : "Not the admin key.");
      req.admin = true;
      return;
    }
    const key = bearer(req);
    if (!key) throw new LoopSmithError("LS_ERR_UNAUTHORIZED");
    // Read from the database on every request, never cached: a revocation or expiry applies to the next one.
    const checked = await checkApiKey(settings().prisma, key);
    if (!checked.ok && checked.reason === "expired") throw new LoopSmithError("LS_ERR_KEY_EXPIRED");
    if (!checked.ok) throw new LoopSmithError("LS_ERR_UNAUTHORIZED", "The API key is unknown or revoked.");
    req.tenant = checked.tenant;
  });
}
