// The credential lifecycle of a tenant (issue 15): API keys created, listed (prefix and metadata, never
// the key), revoked, expired and rotated with an overlap; webhook signing secrets listed and expired at
// once after a leak. Every read of a key goes to the database (see checkApiKey), so a change here applies
// to the next request.
import type { PrismaClient } from "./generated/client";
import type { SecretBox } from "./secret-box";
import { hashApiKey, MAX_VALID_WEBHOOK_SECRETS, newApiKey, newWebhookSecret } from "./tenants";

export type KeyStatus = "active" | "revoked" | "expired";

export interface ApiKeyInfo {
  id: string;
  prefix: string;
  name: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  status: KeyStatus;
}

export interface IssuedApiKey extends ApiKeyInfo {
  /** Shown once: only its sha256 is stored. */
  api_key: string;
}

type KeyRow = { id: string; prefix: string; name: string | null; createdAt: Date; expiresAt: Date | null; revokedAt: Date | null };

export function keyStatus(row: Pick<KeyRow, "expiresAt" | "revokedAt">, now: Date): KeyStatus {
  if (row.revokedAt) return "revoked";
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return "expired";
  return "active";
}

function info(row: KeyRow, now: Date): ApiKeyInfo {
  return {
    id: row.id,
    prefix: row.prefix,
    name: row.name,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
    status: keyStatus(row, now),
  };
}

const KEY_FIELDS = { id: true, prefix: true, name: true, createdAt: true, expiresAt: true, revokedAt: true } as const;

/** Null when the tenant does not exist. */
export async function issueApiKey(
  prisma: PrismaClient,
  tenantId: string,
  opts: { name?: string | null; expiresAt?: Date | null; now?: Date } = {},
): Promise<IssuedApiKey | null> {
  const now = opts.now ?? new Date();
  if (!(await prisma.tenant.findUnique({ where: { id: tenantId }, select: { id: true } }))) return null;
  const apiKey = newApiKey();
  const row = await prisma.apiKey.create({
    data: { tenantId, keyHash: hashApiKey(apiKey), prefix: apiKey.slice(0, 10), name: opts.name ?? null, expiresAt: opts.expiresAt ?? null, createdAt: now },
    select: KEY_FIELDS,
  });
  return { ...info(row, now), api_key: apiKey };
}

/** Newest first; null when the tenant does not exist. */
export async function listApiKeys(prisma: PrismaClient, tenantId: string, now = new Date()): Promise<ApiKeyInfo[] | null> {
  const tenant = await prisma.tenant.findUnique({
    where: { id: tenantId },
    select: { apiKeys: { orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: KEY_FIELDS } },
  });
  return tenant ? tenant.apiKeys.map((k) => info(k, now)) : null;
}

/** Revokes one of the tenant's keys (a second revoke keeps the first instant). Null: no such key of this tenant. */
export async function revokeApiKey(prisma: PrismaClient, tenantId: string, keyId: string, now = new Date()): Promise<ApiKeyInfo | null> {
  await prisma.apiKey.updateMany({ where: { id: keyId, tenantId, revokedAt: null }, data: { revokedAt: now } });
  const row = await prisma.apiKey.findFirst({ where: { id: keyId, tenantId }, select: KEY_FIELDS });
  return row ? info(row, now) : null;
}

/**
 * Rotation: a new key for the same tenant, and the old one keeps working for `overlapSeconds` (0: it stops
 * now), so that clients can switch without an outage. An old key that would expire sooner keeps its expiry.
 * Null: no such key of this tenant; a revoked or expired key cannot be rotated (`refused`).
 */
export async function rotateApiKey(
  prisma: PrismaClient,
  tenantId: string,
  keyId: string,
  opts: { overlapSeconds: number; name?: string | null; expiresAt?: Date | null; now?: Date },
): Promise<{ key: IssuedApiKey; previous: ApiKeyInfo } | { refused: KeyStatus } | null> {
  const now = opts.now ?? new Date();
  const until = new Date(now.getTime() + opts.overlapSeconds * 1000);
  return prisma.$transaction(async (tx) => {
    // Two rotations of one key take turns: the second sees the first's expiry.
    const rows = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM api_keys WHERE id = ${keyId}::uuid AND tenant_id = ${tenantId}::uuid FOR UPDATE`;
    if (rows.length === 0) return null;
    const old = await tx.apiKey.findUniqueOrThrow({ where: { id: keyId }, select: KEY_FIELDS });
    const status = keyStatus(old, now);
    if (status !== "active") return { refused: status };
    const apiKey = newApiKey();
    const created = await tx.apiKey.create({
      data: {
        tenantId,
        keyHash: hashApiKey(apiKey),
        prefix: apiKey.slice(0, 10),
        name: opts.name === undefined ? old.name : opts.name,
        expiresAt: opts.expiresAt ?? null,
        createdAt: now,
      },
      select: KEY_FIELDS,
    });
    const previous =
      old.expiresAt && old.expiresAt.getTime() <= until.getTime()
        ? old
        : await tx.apiKey.update({ where: { id: keyId }, data: { expiresAt: until }, select: KEY_FIELDS });
    return { key: { ...info(created, now), api_key: apiKey }, previous: info(previous, now) };
  });
}

export interface WebhookSecretInfo {
  id: string;
  created_at: string;
  expires_at: string | null;
  /** Signs deliveries right now (at most MAX_VALID_WEBHOOK_SECRETS do). */
  valid: boolean;
}

/** The tenant's webhook secrets, newest first, without their values. Null when the tenant does not exist. */
export async function listWebhookSecrets(prisma: PrismaClient, tenantId: string, now = new Date()): Promise<WebhookSecretInfo[] | null> {
  const tenant = await prisma.tenant.findUnique({
    where: { id: tenantId },
    select: { webhookSecrets: { orderBy: [{ createdAt: "desc" }, { id: "desc" }], select: { id: true, createdAt: true, expiresAt: true } } },
  });
  if (!tenant) return null;
  let validLeft = MAX_VALID_WEBHOOK_SECRETS;
  return tenant.webhookSecrets.map((s) => {
    // The same rule activeWebhookSecrets applies: unexpired, and among the newest three of those.
    const valid = (s.expiresAt === null || s.expiresAt.getTime() > now.getTime()) && validLeft-- > 0;
    return { id: s.id, created_at: s.createdAt.toISOString(), expires_at: s.expiresAt?.toISOString() ?? null, valid };
  });
}

/**
 * After a leak: the secret stops signing now, whatever its overlap said. When it was the last valid one, a
 * new secret is issued in the same transaction (returned once), so deliveries keep being signed.
 * Null: no such secret of this tenant.
 */
export async function expireWebhookSecret(
  prisma: PrismaClient,
  tenantId: string,
  secretId: string,
  opts: { secretBox: SecretBox; now?: Date },
): Promise<{ expired: WebhookSecretInfo; new_secret: string | null } | null> {
  const now = opts.now ?? new Date();
  return prisma.$transaction(async (tx) => {
    // Serialised with rotations of the same tenant (rotateWebhookSecret takes the same lock).
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
    const row = await tx.webhookSecret.findFirst({ where: { id: secretId, tenantId }, select: { id: true, createdAt: true, expiresAt: true } });
    if (!row) return null;
    const expiresAt = row.expiresAt && row.expiresAt.getTime() <= now.getTime() ? row.expiresAt : now;
    await tx.webhookSecret.update({ where: { id: row.id }, data: { expiresAt } });
    const stillValid = await tx.webhookSecret.count({ where: { tenantId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] } });
    let fresh: string | null = null;
    if (stillValid === 0) {
      fresh = newWebhookSecret();
      await tx.webhookSecret.create({ data: { tenantId, secret: opts.secretBox.seal(fresh, tenantId), createdAt: now } });
    }
    return { expired: { id: row.id, created_at: row.createdAt.toISOString(), expires_at: expiresAt.toISOString(), valid: false }, new_secret: fresh };
  });
}
