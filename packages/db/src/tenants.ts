// Tenants, their API keys and their webhook signing secrets. Keys are shown once, at creation, and stored
// as sha256: they are 256-bit random, so a slow password hash would add nothing but latency.
import { createHash, randomBytes, randomUUID } from "node:crypto";
import { sendStatement } from "./client";
import type { PrismaClient } from "./generated/client";
import { sealedPrefix, type SecretBox } from "./secret-box";

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
  opts: { name: string; approvalThresholdUsd?: number | null; secretBox: SecretBox },
): Promise<CreatedTenant> {
  const apiKey = newApiKey();
  const secret = newWebhookSecret();
  // The id is made here: the sealed secret is bound to it.
  const id = randomUUID();
  const tenant = await prisma.tenant.create({
    data: {
      id,
      name: opts.name,
      approvalThresholdUsd: opts.approvalThresholdUsd ?? null,
      apiKeys: { create: { keyHash: hashApiKey(apiKey), prefix: apiKey.slice(0, 10) } },
      webhookSecrets: { create: { secret: opts.secretBox.seal(secret, id) } },
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

/** The tenant a bearer key belongs to, or null for unknown, revoked and expired keys. */
export async function authenticate(prisma: PrismaClient, key: string, now = new Date()): Promise<AuthenticatedTenant | null> {
  const r = await checkApiKey(prisma, key, now);
  return r.ok ? r.tenant : null;
}

/**
 * A bearer key, read from the database on every call (no cache): a revocation or an expiry applies to
 * the very next request. Unknown and revoked keys are told apart only here, never to the caller.
 */
export async function checkApiKey(
  prisma: PrismaClient,
  key: string,
  now = new Date(),
): Promise<{ ok: true; tenant: AuthenticatedTenant; keyId: string } | { ok: false; reason: "unknown" | "revoked" | "expired" }> {
  if (!key.startsWith(API_KEY_PREFIX) || key.length > 200) return { ok: false, reason: "unknown" };
  // One statement on every request, past Prisma (sendStatement: a third of the CPU of a raw query through it).
  const [row] = await sendStatement<{ id: string; revoked_at: Date | null; expires_at: Date | null; tenant_id: string; name: string; approval_threshold_usd: number | null }>(
    prisma,
    `SELECT k."id"::text, k."revoked_at", k."expires_at", t."id"::text AS "tenant_id", t."name", t."approval_threshold_usd"
    FROM "api_keys" k JOIN "tenants" t ON t."id" = k."tenant_id" WHERE k."key_hash" = $1::text`,
    [hashApiKey(key)],
  );
  if (!row) return { ok: false, reason: "unknown" };
  if (row.revoked_at) return { ok: false, reason: "revoked" };
  if (row.expires_at && row.expires_at.getTime() <= now.getTime()) return { ok: false, reason: "expired" };
  return { ok: true, keyId: row.id, tenant: { id: row.tenant_id, name: row.name, approvalThresholdUsd: row.approval_threshold_usd === null ? null : Number(row.approval_threshold_usd) } };
}

/**
 * At most this many secrets sign a delivery: the current one and the two before it, each only inside its
 * overlap. A rotation past that retires the oldest at once, so rotating in a loop cannot grow the
 * signature header (or the table).
 */
export const MAX_VALID_WEBHOOK_SECRETS = 3;

/**
 * The secrets a webhook is signed with right now, newest first: the current one, plus those still inside
 * their overlap (never more than MAX_VALID_WEBHOOK_SECRETS). A row still in plaintext (written before
 * secrets were encrypted) or sealed under an older key is sealed under the current key as it is read.
 */
export async function activeWebhookSecrets(prisma: PrismaClient, tenantId: string, secretBox: SecretBox, now = new Date()): Promise<string[]> {
  const rows = await prisma.webhookSecret.findMany({
    where: { tenantId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: MAX_VALID_WEBHOOK_SECRETS,
  });
  const secrets: string[] = [];
  for (const r of rows) {
    const { plain, stale } = secretBox.open(r.secret, tenantId);
    // Compare-and-set on the stored value: a concurrent upgrade of the same row leaves one sealed value.
    if (stale) await prisma.webhookSecret.updateMany({ where: { id: r.id, secret: r.secret }, data: { secret: secretBox.seal(plain, tenantId) } });
    secrets.push(plain);
  }
  return secrets;
}

/**
 * Seals every webhook secret still stored in plaintext, or under an older key that is still configured (the
 * data migration for encryption at rest; the API and the runner run it at start-up). Rows sealed under a
 * key that is not configured are left as they are and counted: deliveries of their tenants fail saying so.
 */
export async function sealWebhookSecrets(prisma: PrismaClient, secretBox: SecretBox): Promise<{ sealed: number; unreadable: number }> {
  // Only rows this box can move are read: plaintext ones and those under an older key it holds. Rows under
  // keys it does not hold are counted, not fetched and tried one by one (a start-up pass, on every start).
  const older = secretBox.keyIds.filter((id) => id !== secretBox.keyId);
  const rows = await prisma.webhookSecret.findMany({
    where: { OR: [{ NOT: { secret: { startsWith: sealedPrefix() } } }, ...older.map((id) => ({ secret: { startsWith: sealedPrefix(id) } }))] },
    select: { id: true, tenantId: true, secret: true },
  });
  let sealed = 0;
  let unreadable = await prisma.webhookSecret.count({
    where: { AND: [{ secret: { startsWith: sealedPrefix() } }, ...secretBox.keyIds.map((id) => ({ NOT: { secret: { startsWith: sealedPrefix(id) } } }))] },
  });
  for (const r of rows) {
    let opened: { plain: string; stale: boolean };
    try {
      opened = secretBox.open(r.secret, r.tenantId);
    } catch {
      unreadable++;
      continue;
    }
    if (!opened.stale) continue;
    const res = await prisma.webhookSecret.updateMany({ where: { id: r.id, secret: r.secret }, data: { secret: secretBox.seal(opened.plain, r.tenantId) } });
    sealed += res.count;
  }
  return { sealed, unreadable };
}

/**
 * Rotation: a new secret becomes current; the one before it stays valid for `overlapSeconds`, so receivers
 * can switch without missing a delivery (each delivery is signed with every valid secret). Of the earlier
 * ones, only the newest MAX_VALID_WEBHOOK_SECRETS - 2 keep their (already shorter) overlap; the rest stop
 * signing now and are deleted, as are secrets whose overlap has ended.
 */
export async function rotateWebhookSecret(
  prisma: PrismaClient,
  tenantId: string,
  opts: { overlapSeconds: number; secretBox: SecretBox; now?: Date },
): Promise<{ secret: string; previous_valid_until: string }> {
  const now = opts.now ?? new Date();
  const secret = newWebhookSecret();
  const until = new Date(now.getTime() + opts.overlapSeconds * 1000);
  await prisma.$transaction(async (tx) => {
    // Concurrent rotations of one tenant take turns, so that the count below holds.
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR UPDATE`;
    const valid = await tx.webhookSecret.findMany({
      where: { tenantId, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      select: { id: true },
    });
    const keep = valid.slice(0, MAX_VALID_WEBHOOK_SECRETS - 1).map((r) => r.id);
    await tx.webhookSecret.deleteMany({ where: { tenantId, id: { notIn: keep } } });
    await tx.webhookSecret.updateMany({
      where: { tenantId, id: { in: keep }, OR: [{ expiresAt: null }, { expiresAt: { gt: until } }] },
      data: { expiresAt: until },
    });
    await tx.webhookSecret.create({ data: { tenantId, secret: opts.secretBox.seal(secret, tenantId), createdAt: now } });
  });
  return { secret, previous_valid_until: until.toISOString() };
}
