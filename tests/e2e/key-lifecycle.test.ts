// API keys and webhook secrets have a lifecycle (issue 15): issued, listed without the key, revoked,
// expired, rotated with an overlap, through the admin API and the tenant CLI; a leaked webhook secret
// expires at once. No runner: every case is a request and the data it reads.
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { activeWebhookSecrets, checkApiKey } from "@loopsmith/db";
import { signWebhook } from "@loopsmith/webhooks";
import { tenantCommand } from "../../apps/api/src/tenant-commands";
import { startLoop, type Loop } from "../support/loop";

const ADMIN = "admin-key-lifecycle-test";
let loop: Loop;

beforeAll(async () => {
  loop = await startLoop({ runner: false, env: { ADMIN_API_KEY: ADMIN, SANDBOX_POOL_SIZE: "0" } });
}, 60_000);
afterAll(async () => {
  await loop?.close();
});

const admin = (method: "GET" | "POST", url: string, body?: unknown) => loop.request(method, url, { key: ADMIN, body });
type Key = { id: string; api_key: string; prefix: string; status: string; expires_at: string | null; name: string | null };

describe("API keys through the admin API", () => {
  const keys = () => `/admin/tenants/${loop.tenant.tenant_id}/api-keys`;

  it("issues a key shown once, lists prefix and metadata only, and a revoked key gets 401 on its next request", async () => {
    const made = await admin("POST", keys(), { name: "ci" });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const key = made.body as unknown as Key;
    expect(key.api_key).toMatch(/^lsk_/);
    expect(key).toMatchObject({ name: "ci", status: "active", expires_at: null, prefix: key.api_key.slice(0, 10) });
    expect((await loop.request("GET", "/goals", { key: key.api_key })).status).toBe(200);

    const listed = await admin("GET", keys());
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(key.api_key);
    expect(JSON.stringify(listed.body)).not.toContain(loop.tenant.api_key);
    const row = (listed.body.api_keys as Key[]).find((k) => k.id === key.id);
    expect(row).toMatchObject({ prefix: key.prefix, name: "ci", status: "active" });
    expect(row).not.toHaveProperty("api_key");

    const revoked = await admin("POST", `${keys()}/${key.id}/revoke`);
    expect(revoked.body).toMatchObject({ id: key.id, status: "revoked" });
    const next = await loop.request("GET", "/goals", { key: key.api_key });
    expect(next.status).toBe(401);
    expect(next.body).toMatchObject({ error: { code: "LS_ERR_UNAUTHORIZED" } });
    // The tenant's other key is untouched; a revoked key cannot be rotated back to life.
    expect((await loop.request("GET", "/goals")).status).toBe(200);
    expect((await admin("POST", `${keys()}/${key.id}/rotate`, { overlap_seconds: 60 })).body).toMatchObject({ error: { code: "LS_ERR_KEY_INACTIVE" } });
  });

  it("an expired key is a 401 LS_ERR_KEY_EXPIRED; expiry is checked against the clock on every request", async () => {
    const made = (await admin("POST", keys(), { expires_in_seconds: 3600 })).body as unknown as Key;
    expect(new Date(made.expires_at!).getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect((await loop.request("GET", "/goals", { key: made.api_key })).status).toBe(200);
    // An hour later (the clock injected, no sleeping): refused.
    expect(await checkApiKey(loop.prisma, made.api_key, new Date(Date.now() + 3601_000))).toEqual({ ok: false, reason: "expired" });
    // And through the API: a key whose expiry has passed.
    await loop.prisma.apiKey.update({ where: { id: made.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    const res = await loop.request("GET", "/goals", { key: made.api_key });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { code: "LS_ERR_KEY_EXPIRED" } });
    expect(((await admin("GET", keys())).body.api_keys as Key[]).find((k) => k.id === made.id)?.status).toBe("expired");
  });

  it("rotation: both keys work during the overlap; with overlap 0 the old key stops at once", async () => {
    const old = (await admin("POST", keys(), { name: "svc" })).body as unknown as Key;
    const rotated = await admin("POST", `${keys()}/${old.id}/rotate`, { overlap_seconds: 3600 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    const { key: fresh, previous } = rotated.body as unknown as { key: Key; previous: Key };
    expect(fresh).toMatchObject({ name: "svc", status: "active" });
    expect(new Date(previous.expires_at!).getTime()).toBeGreaterThan(Date.now() + 3500_000);
    expect((await loop.request("GET", "/goals", { key: old.api_key })).status).toBe(200);
    expect((await loop.request("GET", "/goals", { key: fresh.api_key })).status).toBe(200);

    const again = (await admin("POST", `${keys()}/${fresh.id}/rotate`, { overlap_seconds: 0 })).body as unknown as { key: Key };
    expect((await loop.request("GET", "/goals", { key: fresh.api_key })).body).toMatchObject({ error: { code: "LS_ERR_KEY_EXPIRED" } });
    expect((await loop.request("GET", "/goals", { key: again.key.api_key })).status).toBe(200);
  });

  it("refuses bad input with a field path, unknown tenants and keys with 404, tenant keys with 403", async () => {
    const bad = await admin("POST", keys(), { expires_in_seconds: 0 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: "LS_ERR_VALIDATION", details: [{ path: "body.expires_in_seconds" }] } });
    expect((await admin("GET", "/admin/tenants/00000000-0000-4000-8000-000000000000/api-keys")).status).toBe(404);
    expect((await admin("POST", `${keys()}/not-a-uuid/revoke`)).status).toBe(404);
    expect((await loop.request("GET", keys())).status).toBe(403);
  });
});

describe("the tenant CLI", () => {
  it("creates, lists, rotates and revokes keys", async () => {
    const deps = { prisma: loop.prisma, secretBox: loop.secretBox };
    const t = ["--tenant", loop.tenant.tenant_id];
    const made = await tenantCommand(["keys", "create", ...t, "--name", "cli"], deps);
    expect(made.code, made.out).toBe(0);
    const key = JSON.parse(made.out) as Key;
    const list = await tenantCommand(["keys", "list", ...t], deps);
    expect(list.out).toContain(key.id);
    expect(list.out).not.toContain(key.api_key);
    const rotated = await tenantCommand(["keys", "rotate", ...t, "--key", key.id, "--overlap-seconds", "0"], deps);
    expect(rotated.code, rotated.out).toBe(0);
    expect((await loop.request("GET", "/goals", { key: key.api_key })).status).toBe(401);
    const fresh = (JSON.parse(rotated.out) as { key: Key }).key;
    expect((await tenantCommand(["keys", "revoke", ...t, "--key", fresh.id], deps)).code).toBe(0);
    expect((await loop.request("GET", "/goals", { key: fresh.api_key })).status).toBe(401);
    expect((await tenantCommand(["keys", "revoke", ...t], deps)).code).toBe(64);
    expect((await tenantCommand(["keys", "frobnicate", ...t], deps)).code).toBe(64);
  });
});

describe("webhook secrets", () => {
  it("a leaked secret expires at once: it no longer signs, and a receiver verifying with it fails", async () => {
    const tenantId = loop.tenant.tenant_id;
    const leaked = loop.tenant.webhook_secret;
    const listed = (await admin("GET", `/admin/tenants/${tenantId}/webhook-secrets`)).body.webhook_secrets as { id: string; valid: boolean }[];
    expect(JSON.stringify(listed)).not.toContain(leaked.slice(6));
    expect(listed.filter((s) => s.valid)).toHaveLength(1);
    const sign = async () => {
      const body = JSON.stringify({ type: "goal.verified", data: {} });
      const headers = signWebhook({ messageId: "msg_lifecycle", timestamp: new Date(), body, secrets: await activeWebhookSecrets(loop.prisma, tenantId, loop.secretBox) });
      return { body, headers: { ...headers } };
    };
    const before = await sign();
    expect(new Webhook(leaked).verify(before.body, before.headers)).toBeTruthy();

    const res = await admin("POST", `/admin/tenants/${tenantId}/webhook-secrets/${listed[0]!.id}/expire`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // It was the only valid one, so a new secret comes back once.
    const fresh = res.body.new_secret as string;
    expect(fresh).toMatch(/^whsec_/);
    const secrets = await activeWebhookSecrets(loop.prisma, tenantId, loop.secretBox);
    expect(secrets).toEqual([fresh]);
    const after = await sign();
    expect(() => new Webhook(leaked).verify(after.body, after.headers)).toThrow(/No matching signature/);
    expect(new Webhook(fresh).verify(after.body, after.headers)).toBeTruthy();
    const now = (await admin("GET", `/admin/tenants/${tenantId}/webhook-secrets`)).body.webhook_secrets as { id: string; valid: boolean }[];
    expect(now.find((s) => s.id === listed[0]!.id)?.valid).toBe(false);
  });
});
