// Operator routes for a tenant's credentials (issue 15): API keys issued, listed (prefix and metadata,
// never the key), revoked and rotated with an overlap; webhook signing secrets listed and expired at
// once after a leak. Guarded by ADMIN_API_KEY like the other /admin routes.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { LoopSmithError } from "@loopsmith/core";
import { expireWebhookSecret, issueApiKey, listApiKeys, listWebhookSecrets, revokeApiKey, rotateApiKey, UUID } from "@loopsmith/db";
import { errorBody } from "@loopsmith/schemas";
import { requireAdmin } from "../auth";
import type { Services } from "../services";

const MAX_KEY_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;
/** The longest a rotated key may keep working beside its successor. */
export const MAX_KEY_OVERLAP_SECONDS = 30 * 24 * 3600;
export const DEFAULT_KEY_OVERLAP_SECONDS = 24 * 3600;

export const apiKeyInfo = z
  .object({
    id: z.uuid(),
    prefix: z.string().describe("The key's first 10 characters, to tell keys apart."),
    name: z.string().nullable(),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
    status: z.enum(["active", "revoked", "expired"]),
  })
  .meta({ id: "ApiKeyInfo" });
const issuedKey = apiKeyInfo.extend({ api_key: z.string().describe("The key itself: shown once, stored only as its sha256.") }).meta({ id: "IssuedApiKey" });

const tenantParams = z.object({ tenant_id: z.string() });
const keyParams = tenantParams.extend({ key_id: z.string() });
const secretParams = tenantParams.extend({ secret_id: z.string() });

const newKeyBody = z
  .strictObject({
    name: z.string().trim().min(1).max(100).optional().describe('A label for listings, e.g. "ci".'),
    expires_in_seconds: z.int().min(1).max(MAX_KEY_LIFETIME_SECONDS).optional().describe("The key stops working this long from now (401 LS_ERR_KEY_EXPIRED); default: never."),
  })
  .meta({ id: "NewApiKey" });
const rotateKeyBody = newKeyBody
  .extend({
    overlap_seconds: z
      .int()
      .min(0)
      .max(MAX_KEY_OVERLAP_SECONDS)
      .default(DEFAULT_KEY_OVERLAP_SECONDS)
      .describe("How long the old key keeps working beside the new one (0: it stops now). Default one day."),
  })
  .meta({ id: "RotateApiKey" });

const webhookSecretInfo = z
  .object({ id: z.uuid(), created_at: z.string(), expires_at: z.string().nullable(), valid: z.boolean().describe("Signs deliveries right now.") })
  .meta({ id: "WebhookSecretInfo" });

function uuidOr404(value: string, what: string): void {
  if (!UUID.test(value)) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No ${what} ${value}.`);
}
const noTenant = (id: string) => new LoopSmithError("LS_ERR_NOT_FOUND", `No tenant ${id}.`);
const expiry = (seconds: number | undefined, now: Date) => (seconds === undefined ? null : new Date(now.getTime() + seconds * 1000));
const admin = { tags: ["admin"], security: [{ adminKey: [] }] };

export const adminKeyRoutes: FastifyPluginAsyncZod<{ deps: () => Services }> = async (app, opts) => {
  app.post(
    "/admin/tenants/:tenant_id/api-keys",
    {
      config: { access: "admin" },
      schema: {
        ...admin,
        summary: "Issue another API key for a tenant (shown once)",
        params: tenantParams,
        body: newKeyBody,
        response: { 201: issuedKey, 400: errorBody, 401: errorBody, 403: errorBody, 404: errorBody },
      },
    },
    async (req, reply) => {
      requireAdmin(req);
      uuidOr404(req.params.tenant_id, "tenant");
      const now = new Date();
      const key = await issueApiKey(opts.deps().prisma, req.params.tenant_id, { name: req.body.name, expiresAt: expiry(req.body.expires_in_seconds, now), now });
      if (!key) throw noTenant(req.params.tenant_id);
      return reply.status(201).send(key);
    },
  );

  app.get(
    "/admin/tenants/:tenant_id/api-keys",
    {
      config: { access: "admin" },
      schema: {
        ...admin,
        summary: "A tenant's API keys: prefix and metadata, never the key",
        params: tenantParams,
        response: { 200: z.object({ api_keys: z.array(apiKeyInfo) }), 401: errorBody, 403: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      requireAdmin(req);
      uuidOr404(req.params.tenant_id, "tenant");
      const keys = await listApiKeys(opts.deps().prisma, req.params.tenant_id);
      if (!keys) throw noTenant(req.params.tenant_id);
      return { api_keys: keys };
    },
  );

  app.post(
    "/admin/tenants/:tenant_id/api-keys/:key_id/revoke",
    {
      config: { access: "admin" },
      schema: {
        ...admin,
        summary: "Revoke an API key: its next request is a 401",
        params: keyParams,
        response: { 200: apiKeyInfo, 401: errorBody, 403: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      requireAdmin(req);
      uuidOr404(req.params.tenant_id, "tenant");
      uuidOr404(req.params.key_id, "key");
      const key = await revokeApiKey(opts.deps().prisma, req.params.tenant_id, req.params.key_id);
      if (!key) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No key ${req.params.key_id} of tenant ${req.params.tenant_id}.`);
      return key;
    },
  );

  app.post(
    "/admin/tenants/:tenant_id/api-keys/:key_id/rotate",
    {
      config: { access: "admin" },
      schema: {
        ...admin,
        summary: "Rotate an API key: a new key now, the old one works until the overlap ends",
        params: keyParams,
        body: rotateKeyBody,
        response: {
          201: z.object({ key: issuedKey, previous: apiKeyInfo }).meta({ id: "RotatedApiKey" }),
          400: errorBody,
          401: errorBody,
          403: errorBody,
          404: errorBody,
          409: errorBody,
        },
      },
    },
    async (req, reply) => {
      requireAdmin(req);
      uuidOr404(req.params.tenant_id, "tenant");
      uuidOr404(req.params.key_id, "key");
      const now = new Date();
      const rotated = await rotateApiKey(opts.deps().prisma, req.params.tenant_id, req.params.key_id, {
        overlapSeconds: req.body.overlap_seconds,
        name: req.body.name,
        expiresAt: expiry(req.body.expires_in_seconds, now),
        now,
      });
      if (!rotated) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No key ${req.params.key_id} of tenant ${req.params.tenant_id}.`);
      if ("refused" in rotated)
        throw new LoopSmithError("LS_ERR_KEY_INACTIVE", `The key is ${rotated.refused}: issue a new key instead.`, [{ path: "params.key_id", message: `the key is ${rotated.refused}` }]);
      return reply.status(201).send(rotated);
    },
  );

  app.get(
    "/admin/tenants/:tenant_id/webhook-secrets",
    {
      config: { access: "admin" },
      schema: {
        ...admin,
        summary: "A tenant's webhook signing secrets: ids and validity, never the secret",
        params: tenantParams,
        response: { 200: z.object({ webhook_secrets: z.array(webhookSecretInfo) }), 401: errorBody, 403: errorBody, 404: errorBody },
      },
    },
    async (req) => {
      requireAdmin(req);
      uuidOr404(req.params.tenant_id, "tenant");
      const secrets = await listWebhookSecrets(opts.deps().prisma, req.params.tenant_id);
      if (!secrets) throw noTenant(req.params.tenant_id);
      return { webhook_secrets: secrets };
    },
  );

  app.post(
    "/admin/tenants/:tenant_id/webhook-secrets/:secret_id/expire",
    {
      config: { access: "admin" },
      schema: {
        ...admin,
        summary: "Expire a webhook signing secret now (after a leak), overlap or not",
        description: "The next delivery is no longer signed with it. When it was the last valid secret, a new one is issued and returned once in new_secret.",
        params: secretParams,
        response: {
          200: z.object({ expired: webhookSecretInfo, new_secret: z.string().nullable() }).meta({ id: "ExpiredWebhookSecret" }),
          401: errorBody,
          403: errorBody,
          404: errorBody,
        },
      },
    },
    async (req) => {
      requireAdmin(req);
      uuidOr404(req.params.tenant_id, "tenant");
      uuidOr404(req.params.secret_id, "secret");
      const s = opts.deps();
      const res = await expireWebhookSecret(s.prisma, req.params.tenant_id, req.params.secret_id, { secretBox: s.secretBox });
      if (!res) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No webhook secret ${req.params.secret_id} of tenant ${req.params.tenant_id}.`);
      return res;
    },
  );
};
