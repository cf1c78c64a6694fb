// Tenants, their API keys and their webhook signing secrets. Keys are shown once, at creation, and stored
// as sha256: they are 256-bit random, so a slow password hash would add nothing but latency.
import { createHash, randomBytes } from "node:crypto";
import type { PrismaClient } from "./generated/client";

export const API_KEY_PREFIX = "lsk_";

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function newApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString("base64url");
}

/** A Standard Webhooks secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return "whsec_" + randomBytes(32).toString("base64");
}

export interface CreatedTenant {
  tenant_id: string;
  name: string;
  api_key: string;
  webhook_secret: string;
}

export async function createTenant(
  prisma: PrismaClient,
  opts: { name: string; approvalThresholdUsd?: number | null },
): Promise<CreatedTenant> {
  const apiKey = newApiKey();
  const secret = newWebhookSecret();
  const tenant = await prisma.tenant.create({
    data: {
      name: opts.name,
      approvalThresholdUsd: opts.approvalThresholdUsd ?? null,
      apiKeys: { create: { keyHash: hashApiKey(apiKey), prefix: apiKey.slice(0, 10) } },
      webhookSecrets: { create: { secret } },
    },
  });
  return { tenant_id: tenant.id, name: tenant.name, api_key: apiKey, webhook_secret: secret };
}

/** Adds another key to a tenant (keys are independent; revoke one without touching the others). */
export async function createApiKey(prisma: PrismaClient, tenantId: string): Promise<string> {
  const apiKey = newApiKey();
  await prisma.apiKey.create({ data: { tenantId, keyHash: hashApiKey(apiKey), prefix: apiKey.slice(0, 10) } });
  return apiKey;
}

export interface AuthenticatedTenant {
  id: string;
  name: string;
  approvalThresholdUsd: number | null;
}

/** The tenant a bearer key belongs to, or null for unknown and revoked keys. */
export async function authenticate(prisma: PrismaClient, key: string): Promise<AuthenticatedTenant | null> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return null;
  const row = await prisma.apiKey.findUnique({ where: { keyHash: hashApiKey(key) }, include: { tenant: true } });
  if (!row || row.revokedAt) return null;
  return { id: row.tenant.id, name: row.tenant.name, approvalThresholdUsd: row.tenant.approvalThresholdUsd };
}

/** The secrets a webhook is signed with right now: the current one, plus any still inside its overlap. */
export async function activeWebhookSecrets(prisma: PrismaClient, tenantId: string, now = new Date()): Promise<string[]> {
  const rows = await prisma.webhookSecret.findMany({
    where: { tenantId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    orderBy: { createdAt: "desc" },
  });
  return rows.map((r) => r.secret);
}

/**
 * Rotation: a new secret becomes current; the ones before it stay valid for `overlapSeconds`, so receivers
 * can switch without missing a delivery (each delivery is signed with every valid secret).
 */
export async function rotateWebhookSecret(
  prisma: PrismaClient,
  tenantId: string,
  overlapSeconds: number,
  now = new Date(),
): Promise<{ secret: string; previous_valid_until: string }> {
  const secret = newWebhookSecret();
  const until = new Date(now.getTime() + overlapSeconds * 1000);
  await prisma.$transaction([
    prisma.webhookSecret.updateMany({
      where: { tenantId, OR: [{ expiresAt: null }, { expiresAt: { gt: until } }] },
      data: { expiresAt: until },
    }),
    prisma.webhookSecret.create({ data: { tenantId, secret } }),
  ]);
  return { secret, previous_valid_until: until.toISOString() };
}
