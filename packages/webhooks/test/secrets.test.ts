// Issue 17: webhook signing secrets are encrypted at rest (and rows from before are sealed without losing
// a secret), and rotation keeps a bounded number of secrets signing.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@loopsmith/core";
import {
  activeWebhookSecrets,
  createSecretBox,
  isSealed,
  MAX_VALID_WEBHOOK_SECRETS,
  newWebhookSecret,
  rotateWebhookSecret,
  sealWebhookSecrets,
} from "@loopsmith/db";
import { createDelivery, createDeliveryWorker, createWebhookQueue, DEFAULT_WEBHOOK_SECRET_KEY_FILE, enqueuePendingDeliveries, webhookConfigSchema, type WebhookConfig } from "../src/index";
import { deleteKeys, randomPrefix, services, startReceiver, tenantWithGoal, testSecretBox, waitFor, type Received } from "./support";

const { prisma, redis } = services();
const prefix = randomPrefix("secrets");
const log = createLogger({ name: "secrets-test", level: "silent" });
const tenants: string[] = [];
const cleanups: (() => Promise<unknown>)[] = [];
const cfg: WebhookConfig = webhookConfigSchema.parse({ WEBHOOK_ALLOW_CIDRS: "127.0.0.1/32", WEBHOOK_RETRY_SCHEDULE: "50ms", WEBHOOK_TIMEOUT_MS: "3000" });
const queue = createWebhookQueue(redis, prefix);

beforeAll(async () => {
  await redis.ping();
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  await queue.obliterate({ force: true });
  await queue.close();
  await deleteKeys(redis, prefix);
  if (tenants.length) await prisma.tenant.deleteMany({ where: { id: { in: tenants } } });
  await prisma.$disconnect();
  await redis.quit();
});

/** The stored column, read with plain SQL: what a database dump would show. */
async function storedSecrets(tenantId: string): Promise<string[]> {
  const rows = await prisma.$queryRaw<{ secret: string }[]>`SELECT secret FROM webhook_secrets WHERE tenant_id = ${tenantId}::uuid ORDER BY created_at`;
  return rows.map((r) => r.secret);
}

const headersOf = (r: Received) => r.headers as Record<string, string>;

/** A delivered webhook for a fresh goal of `tenant`, through a real worker and a loopback receiver. */
async function deliverOnce(opts: { now?: () => Date; url?: string } = {}) {
  const r = await startReceiver([200]);
  cleanups.push(r.close);
  const { tenant, goalId } = await tenantWithGoal(prisma, r.url);
  tenants.push(tenant.tenant_id);
  const worker = createDeliveryWorker({ prisma, connection: redis, prefix, config: cfg, secretBox: testSecretBox(), log, now: opts.now });
  cleanups.push(() => worker.close());
  const send = async () => {
    const goal = await prisma.goal.findUniqueOrThrow({ where: { id: goalId } });
    const deliveryId = (await prisma.$transaction((tx) => createDelivery(tx, goal, "goal.verified")))!;
    await enqueuePendingDeliveries(prisma, queue, cfg, goalId);
    await waitFor("delivered", async () => (await prisma.webhookDelivery.findUnique({ where: { id: deliveryId } }))?.status === "delivered");
    return r.received.at(-1)!;
  };
  return { tenant, send };
}

describe("webhook secrets at rest (issue 17)", () => {
  it("stores no secret in plaintext, and a delivery still verifies with the secret the tenant was given", async () => {
    const { tenant, send } = await deliverOnce();
    const stored = await storedSecrets(tenant.tenant_id);
    expect(stored).toHaveLength(1);
    const keyPart = tenant.webhook_secret.slice("whsec_".length);
    expect(stored[0]).toMatch(/^lsenc:v1:[0-9a-f]{12}:[A-Za-z0-9_-]+$/);
    expect(stored[0]).not.toContain(keyPart);
    expect(stored[0]).not.toContain(Buffer.from(keyPart, "base64").toString("hex"));

    const got = await send();
    expect(new Webhook(tenant.webhook_secret).verify(got.body, headersOf(got))).toMatchObject({ type: "goal.verified" });

    // A rotated secret is sealed too.
    const rotated = await rotateWebhookSecret(prisma, tenant.tenant_id, { overlapSeconds: 3600, secretBox: testSecretBox() });
    const after = await storedSecrets(tenant.tenant_id);
    expect(after).toHaveLength(2);
    for (const s of after) {
      expect(isSealed(s)).toBe(true);
      expect(s).not.toContain(rotated.secret.slice("whsec_".length));
    }
  });

  it("seals rows stored in plaintext before encryption, losing none: at start-up and on read", async () => {
    const { tenant, send } = await deliverOnce();
    // Rows as the previous version wrote them: the `whsec_` secret itself.
    const legacy = newWebhookSecret();
    await prisma.$executeRaw`UPDATE webhook_secrets SET secret = ${legacy} WHERE tenant_id = ${tenant.tenant_id}::uuid`;
    expect(await storedSecrets(tenant.tenant_id)).toEqual([legacy]);

    // The read path upgrades the row it signs with.
    const got = await send();
    expect(new Webhook(legacy).verify(got.body, headersOf(got))).toBeTruthy();
    const [upgraded] = await storedSecrets(tenant.tenant_id);
    expect(isSealed(upgraded!)).toBe(true);
    expect(upgraded).not.toContain(legacy.slice("whsec_".length));

    // The start-up pass seals every plaintext row, whether or not anything reads it.
    const other = newWebhookSecret();
    await prisma.$executeRaw`UPDATE webhook_secrets SET secret = ${other} WHERE tenant_id = ${tenant.tenant_id}::uuid`;
    const { sealed } = await sealWebhookSecrets(prisma, testSecretBox());
    expect(sealed).toBeGreaterThanOrEqual(1);
    const [resealed] = await storedSecrets(tenant.tenant_id);
    expect(isSealed(resealed!)).toBe(true);
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, testSecretBox())).toEqual([other]);
    const again = await send();
    expect(new Webhook(other).verify(again.body, headersOf(again))).toBeTruthy();
  });

  it("the start-up pass moves rows under an older key it holds, and counts (leaves) rows it cannot open", async () => {
    const oldKey = randomBytes(32);
    const foreignKey = randomBytes(32);
    const testKey = Buffer.from(readFileSync(DEFAULT_WEBHOOK_SECRET_KEY_FILE, "utf8").trim(), "base64");
    // The suite's key first, so that whatever else this pass seals in the shared database is what every test reads.
    const box = createSecretBox([testKey, oldKey]);
    expect(box.keyIds).toEqual([testSecretBox().keyId, createSecretBox([oldKey]).keyId]);
    const rows = [];
    for (let i = 0; i < 3; i++) {
      const { tenant } = await tenantWithGoal(prisma, null);
      tenants.push(tenant.tenant_id);
      rows.push(tenant);
    }
    const [moved, tampered, foreign] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    const underOld = createSecretBox([oldKey]).seal(moved.webhook_secret, moved.tenant_id);
    // Sealed under the old key for another tenant: opens under no context but that tenant's.
    const misplaced = createSecretBox([oldKey]).seal(tampered.webhook_secret, moved.tenant_id);
    const underForeign = createSecretBox([foreignKey]).seal(foreign.webhook_secret, foreign.tenant_id);
    await prisma.webhookSecret.updateMany({ where: { tenantId: moved.tenant_id }, data: { secret: underOld } });
    await prisma.webhookSecret.updateMany({ where: { tenantId: tampered.tenant_id }, data: { secret: misplaced } });
    await prisma.webhookSecret.updateMany({ where: { tenantId: foreign.tenant_id }, data: { secret: underForeign } });

    const { sealed, unreadable } = await sealWebhookSecrets(prisma, box);
    expect(sealed).toBeGreaterThanOrEqual(1);
    // At least these two (other tests' rows under their own random keys count too).
    expect(unreadable).toBeGreaterThanOrEqual(2);
    const [resealed] = await storedSecrets(moved.tenant_id);
    expect(resealed!.startsWith(`lsenc:v1:${box.keyId}:`)).toBe(true);
    expect(await activeWebhookSecrets(prisma, moved.tenant_id, testSecretBox())).toEqual([moved.webhook_secret]);
    expect(await storedSecrets(tampered.tenant_id)).toEqual([misplaced]);
    expect(await storedSecrets(foreign.tenant_id)).toEqual([underForeign]);
    // With the foreign key held too, its row is no longer unreadable: the count is by the keys held.
    const holding = await sealWebhookSecrets(prisma, createSecretBox([testKey, oldKey, foreignKey]));
    expect(holding.unreadable).toBeLessThan(unreadable);
  });

  it("a new key seals, the old one listed after it still opens, and rows move to the new key as they are read", async () => {
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const before = createSecretBox([oldKey]);
    const rotatedBox = createSecretBox([newKey, oldKey]);
    const { tenant } = await tenantWithGoal(prisma, null);
    tenants.push(tenant.tenant_id);
    await prisma.webhookSecret.updateMany({ where: { tenantId: tenant.tenant_id }, data: { secret: before.seal(tenant.webhook_secret, tenant.tenant_id) } });
    await expect(activeWebhookSecrets(prisma, tenant.tenant_id, createSecretBox([newKey]))).rejects.toMatchObject({ code: "LS_ERR_CONFIG" });
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, rotatedBox)).toEqual([tenant.webhook_secret]);
    const [stored] = await storedSecrets(tenant.tenant_id);
    expect(stored!.startsWith(`lsenc:v1:${rotatedBox.keyId}:`)).toBe(true);
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, createSecretBox([newKey]))).toEqual([tenant.webhook_secret]);
  });
});

describe("the secret box", () => {
  const box = createSecretBox([randomBytes(32)]);
  const tenantA = "11111111-1111-4111-8111-111111111111";
  const tenantB = "22222222-2222-4222-8222-222222222222";

  it("round-trips, with a fresh IV every time", () => {
    const secret = newWebhookSecret();
    const a = box.seal(secret, tenantA);
    const b = box.seal(secret, tenantA);
    expect(a).not.toBe(b);
    expect(box.open(a, tenantA)).toEqual({ plain: secret, stale: false });
  });

  it("refuses a sealed secret moved to another tenant's row, an altered one, or one under an unknown key", () => {
    const sealed = box.seal(newWebhookSecret(), tenantA);
    expect(() => box.open(sealed, tenantB)).toThrow(/does not open/);
    const body = sealed.slice(sealed.lastIndexOf(":") + 1);
    const flipped = Buffer.from(body, "base64url");
    flipped[20] = flipped[20]! ^ 1;
    expect(() => box.open(sealed.slice(0, sealed.lastIndexOf(":") + 1) + flipped.toString("base64url"), tenantA)).toThrow(/does not open/);
    expect(() => createSecretBox([randomBytes(32)]).open(sealed, tenantA)).toThrow(/not configured/);
  });

  it("refuses keys that are not 32 bytes, and config that is not base64 of 32 bytes", () => {
    expect(() => createSecretBox([randomBytes(16)])).toThrow(/32 bytes/);
    expect(() => createSecretBox([])).toThrow(/WEBHOOK_SECRET_KEY/);
    expect(webhookConfigSchema.safeParse({ WEBHOOK_SECRET_KEY: randomBytes(16).toString("base64") }).success).toBe(false);
    expect(webhookConfigSchema.safeParse({ WEBHOOK_SECRET_KEY: "not base64!" }).success).toBe(false);
    const two = [randomBytes(32), randomBytes(32)];
    expect(webhookConfigSchema.parse({ WEBHOOK_SECRET_KEY: two.map((k) => k.toString("base64")).join(",") }).WEBHOOK_SECRET_KEY).toEqual(two);
  });
});

describe("rotation keeps a bounded number of secrets signing (issue 17)", () => {
  it("under rotate spam, at most MAX_VALID_WEBHOOK_SECRETS sign, the newest ones, and older rows are gone", async () => {
    const { tenant, send } = await deliverOnce();
    const issued = [tenant.webhook_secret];
    const t0 = Date.now();
    for (let i = 1; i <= 20; i++) {
      const r = await rotateWebhookSecret(prisma, tenant.tenant_id, { overlapSeconds: 3600, secretBox: testSecretBox(), now: new Date(t0 + i) });
      issued.push(r.secret);
    }
    expect(MAX_VALID_WEBHOOK_SECRETS).toBe(3);
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, testSecretBox())).toEqual(issued.slice(-3).reverse());
    expect(await storedSecrets(tenant.tenant_id)).toHaveLength(3);

    const got = await send();
    expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(3);
    for (const s of issued.slice(-3)) expect(new Webhook(s).verify(got.body, headersOf(got))).toBeTruthy();
    for (const s of issued.slice(0, -3)) expect(() => new Webhook(s).verify(got.body, headersOf(got))).toThrow(/No matching signature/);
  });

  it("concurrent rotations still leave at most MAX_VALID_WEBHOOK_SECRETS valid", async () => {
    const { tenant } = await tenantWithGoal(prisma, null);
    tenants.push(tenant.tenant_id);
    await Promise.all(Array.from({ length: 8 }, () => rotateWebhookSecret(prisma, tenant.tenant_id, { overlapSeconds: 3600, secretBox: testSecretBox() })));
    expect(await activeWebhookSecrets(prisma, tenant.tenant_id, testSecretBox())).toHaveLength(3);
    expect(await storedSecrets(tenant.tenant_id)).toHaveLength(3);
  });

  it("a rotated-away secret signs during the overlap and stops once it is over", async () => {
    const t0 = new Date();
    let clock = t0;
    const { tenant, send } = await deliverOnce({ now: () => clock });
    const rotated = await rotateWebhookSecret(prisma, tenant.tenant_id, { overlapSeconds: 60, secretBox: testSecretBox(), now: t0 });
    expect(rotated.previous_valid_until).toBe(new Date(t0.getTime() + 60_000).toISOString());

    clock = new Date(t0.getTime() + 59_000);
    const inside = await send();
    expect(String(inside.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(new Webhook(tenant.webhook_secret).verify(inside.body, headersOf(inside))).toBeTruthy();
    expect(new Webhook(rotated.secret).verify(inside.body, headersOf(inside))).toBeTruthy();

    clock = new Date(t0.getTime() + 61_000);
    const after = await send();
    expect(String(after.headers["webhook-signature"]).split(" ")).toHaveLength(1);
    expect(new Webhook(rotated.secret).verify(after.body, headersOf(after))).toBeTruthy();
    expect(() => new Webhook(tenant.webhook_secret).verify(after.body, headersOf(after))).toThrow(/No matching signature/);
  });
});
