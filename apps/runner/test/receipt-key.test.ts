// Issue 11.4: where the receipt signing key comes from, how its public half is published, and rotation:
// receipts signed before a new key keep verifying against the served key list.
import { randomBytes, generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "@loopsmith/core";
import { createPrisma, type PrismaClient } from "@loopsmith/db";
import { buildReceiptPayload, keyIdFor, signReceipt, verifyReceipt, type ReceiptFacts } from "@loopsmith/receipts";
import { build } from "../../api/src/app";
import type { Services } from "../../api/src/services";
import { checkedGoal } from "../../../tests/support/checked-goal";
import { startLoop } from "../../../tests/support/loop";
import { DATABASE_URL } from "../../../tests/support/services";
import { runnerConfigSchema } from "../src/config";
import { assertSignable, loadReceiptSigner, publishReceiptKey, revokeReceiptKeys } from "../src/receipt-key";

const ed25519Pem = () => generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const uniqueId = (label: string) => `test-${label}-${randomBytes(4).toString("hex")}`;

let dir: string;
let prisma: PrismaClient;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "receipt-key-"));
  prisma = createPrisma(DATABASE_URL);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await prisma?.$disconnect();
});

describe("the receipt signing key", () => {
  it("comes from RECEIPT_SIGNING_KEY as PEM or base64 PKCS#8, named by RECEIPT_KEY_ID or by its public key", () => {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const der = privateKey.export({ type: "pkcs8", format: "der" }).toString("base64");
    const fromPem = loadReceiptSigner(parseConfig(runnerConfigSchema, { RECEIPT_SIGNING_KEY: pem, RECEIPT_KEY_ID: "prod-2026" }));
    expect(fromPem).toMatchObject({ keyId: "prod-2026", source: "config", publicKeyPem: publicKey.export({ type: "spki", format: "pem" }) });
    const fromDer = loadReceiptSigner(parseConfig(runnerConfigSchema, { RECEIPT_SIGNING_KEY: der }));
    expect(fromDer).toMatchObject({ keyId: keyIdFor(publicKey), source: "config", publicKeyPem: fromPem.publicKeyPem });
  });

  it("refuses at start-up a key that is not an Ed25519 PKCS#8 key, or a bad key id", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const issues = (env: Record<string, string>) => {
      try {
        parseConfig(runnerConfigSchema, env);
        return [];
      } catch (e) {
        return (e as ConfigError).issues;
      }
    };
    expect(issues({ RECEIPT_SIGNING_KEY: rsa })).toEqual(["RECEIPT_SIGNING_KEY: an rsa key; receipts are signed with Ed25519"]);
    expect(issues({ RECEIPT_SIGNING_KEY: "not a key" })[0]).toMatch(/^RECEIPT_SIGNING_KEY: not a PKCS#8 private key/);
    expect(issues({ RECEIPT_KEY_ID: "has spaces" })[0]).toMatch(/^RECEIPT_KEY_ID: /);
  });

  it("without configuration, is generated once into RECEIPT_KEY_FILE (0600) and read back on the next start", async () => {
    const file = path.join(dir, "nested", "receipt-key.pem");
    const first = loadReceiptSigner({ RECEIPT_KEY_FILE: file });
    expect(first.source).toBe("generated");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    const second = loadReceiptSigner({ RECEIPT_KEY_FILE: file });
    expect(second).toMatchObject({ source: "file", keyId: first.keyId, publicKeyPem: first.publicKeyPem });
  });

  it("is published once per key id; the same id with another key is refused", async () => {
    const keyId = uniqueId("publish");
    const signer = loadReceiptSigner({ RECEIPT_SIGNING_KEY: ed25519Pem(), RECEIPT_KEY_ID: keyId });
    await Promise.all([publishReceiptKey(prisma, signer), publishReceiptKey(prisma, signer)]);
    expect(await prisma.receiptKey.findMany({ where: { keyId } })).toMatchObject([{ keyId, alg: "Ed25519", publicKeyPem: signer.publicKeyPem }]);
    const other = loadReceiptSigner({ RECEIPT_SIGNING_KEY: ed25519Pem(), RECEIPT_KEY_ID: keyId });
    await expect(publishReceiptKey(prisma, other)).rejects.toMatchObject({ code: "LS_ERR_CONFIG", message: expect.stringMatching(/already published with another public key/) });
  });
});

describe("key rotation", () => {
  it("a receipt signed before a new key was introduced still verifies against the served keys", async () => {
    const goal = checkedGoal({ checks: [], program: "import json, os\njson.dump({'ok': True}, open(os.path.join(os.environ['OUTPUT_DIR'], 'result.json'), 'w'))\n" });
    const receiptsBy = async (keyId: string) => {
      const loop = await startLoop({ runnerEnv: { RECEIPT_SIGNING_KEY: ed25519Pem(), RECEIPT_KEY_ID: keyId } });
      try {
        const g = await loop.run(goal);
        expect(g.state, g.tape).toBe("verified");
        return { receipt: g.receipt!, keys: (await loop.request("GET", "/.well-known/loopsmith-receipt-keys", { key: null })).body };
      } finally {
        await loop.close();
      }
    };
    const [oldId, newId] = [uniqueId("old"), uniqueId("new")];
    const before = await receiptsBy(oldId);
    const after = await receiptsBy(newId);
    expect([before.receipt.key_id, after.receipt.key_id]).toEqual([oldId, newId]);
    const served = (after.keys as { keys: { key_id: string }[] }).keys.map((k) => k.key_id);
    expect(served).toEqual(expect.arrayContaining([oldId, newId]));
    expect(verifyReceipt(before.receipt, after.keys).problems).toEqual([]);
    expect(verifyReceipt(after.receipt, after.keys).problems).toEqual([]);
    // Not vacuous: the keys list as it was before the rotation cannot verify the new receipt.
    expect(verifyReceipt(after.receipt, before.keys).problems).toEqual([`key ${newId} is not in the keys file`]);
  });
});

describe("issue 25: a key's expiry and revocation", () => {
  const issues = (env: Record<string, string>) => {
    try {
      parseConfig(runnerConfigSchema, env);
      return [];
    } catch (e) {
      return (e as ConfigError).issues;
    }
  };

  it("RECEIPT_KEY_NOT_AFTER and RECEIPT_KEYS_REVOKED are RFC 3339 timestamps, parsed once at start-up", () => {
    const config = parseConfig(runnerConfigSchema, {
      RECEIPT_KEY_NOT_AFTER: "2027-01-01T01:00:00+01:00",
      RECEIPT_KEYS_REVOKED: "receipts-2025=2026-03-01T00:00:00Z, ed25519-0123456789abcdef=2026-03-02T00:00:00.250Z",
    });
    expect(config.RECEIPT_KEY_NOT_AFTER).toEqual(new Date("2027-01-01T00:00:00Z"));
    expect(config.RECEIPT_KEYS_REVOKED).toEqual([
      { keyId: "receipts-2025", at: new Date("2026-03-01T00:00:00Z") },
      { keyId: "ed25519-0123456789abcdef", at: new Date("2026-03-02T00:00:00.250Z") },
    ]);
    expect(parseConfig(runnerConfigSchema, {}).RECEIPT_KEYS_REVOKED).toEqual([]);
    expect(issues({ RECEIPT_KEY_NOT_AFTER: "2027-02-30T00:00:00Z" })).toEqual(["RECEIPT_KEY_NOT_AFTER: an RFC 3339 timestamp with an offset, like 2027-01-01T00:00:00Z"]);
    expect(issues({ RECEIPT_KEY_NOT_AFTER: "2027-01-01T00:00:00" })).toHaveLength(1);
    expect(issues({ RECEIPT_KEYS_REVOKED: "k1=2026-01-01T00:00:00Z,k2,k 3=2026-01-01T00:00:00Z,k1=2026-01-02T00:00:00Z" })).toEqual([
      'RECEIPT_KEYS_REVOKED: "k2" is not KEY_ID=TIMESTAMP (an RFC 3339 timestamp, like receipts-2025=2026-03-01T00:00:00Z)',
      'RECEIPT_KEYS_REVOKED: "k 3=2026-01-01T00:00:00Z" is not KEY_ID=TIMESTAMP (an RFC 3339 timestamp, like receipts-2025=2026-03-01T00:00:00Z)',
      "RECEIPT_KEYS_REVOKED: key k1 is listed twice",
    ]);
  });

  it("a runner refuses to start with its key expired or revoked, and to sign past the expiry", () => {
    const pem = ed25519Pem();
    const notAfter = "2027-01-01T00:00:00.000Z";
    const config = parseConfig(runnerConfigSchema, { RECEIPT_SIGNING_KEY: pem, RECEIPT_KEY_ID: "k-expiring", RECEIPT_KEY_NOT_AFTER: notAfter });
    const signer = loadReceiptSigner(config, new Date(notAfter));
    expect(signer.notAfter).toEqual(new Date(notAfter));
    expect(() => loadReceiptSigner(config, new Date("2027-01-01T00:00:00.001Z"))).toThrow(
      expect.objectContaining({ code: "LS_ERR_CONFIG", message: `receipt key k-expiring expired at ${notAfter} (RECEIPT_KEY_NOT_AFTER): configure a new key with a new RECEIPT_KEY_ID` }),
    );
    expect(() => assertSignable(signer, new Date(notAfter))).not.toThrow();
    expect(() => assertSignable(signer, new Date("2027-01-01T00:00:00.001Z"))).toThrow(expect.objectContaining({ code: "LS_ERR_CONFIG" }));
    const revoked = parseConfig(runnerConfigSchema, { RECEIPT_SIGNING_KEY: pem, RECEIPT_KEY_ID: "k-revoked", RECEIPT_KEYS_REVOKED: "k-revoked=2030-01-01T00:00:00Z" });
    expect(() => loadReceiptSigner(revoked)).toThrow(
      expect.objectContaining({ code: "LS_ERR_CONFIG", message: "RECEIPT_KEYS_REVOKED revokes this runner's own receipt key k-revoked: configure a new key with a new RECEIPT_KEY_ID" }),
    );
  });

  it("publishes not_before, not_after and revoked_at; a revocation only ever moves earlier; receipts outside fail", async () => {
    const keyId = uniqueId("window");
    const created = new Date("2026-06-01T00:00:00.000Z");
    const signer = loadReceiptSigner(
      parseConfig(runnerConfigSchema, { RECEIPT_SIGNING_KEY: ed25519Pem(), RECEIPT_KEY_ID: keyId, RECEIPT_KEY_NOT_AFTER: "2027-06-01T00:00:00Z" }),
      created,
    );
    await publishReceiptKey(prisma, signer, created);
    const served = async () => {
      // The keys route reads nothing but the database.
      const ready = async () => "";
      const app = await build({ logger: false, readiness: { postgres: ready, redis: ready, docker: ready, sandbox_image: ready }, services: { prisma } as unknown as Services });
      try {
        const res = await app.inject({ method: "GET", url: "/.well-known/loopsmith-receipt-keys" });
        expect(res.statusCode).toBe(200);
        return res.json() as { keys: { key_id: string }[] };
      } finally {
        await app.close();
      }
    };
    const mine = async () => (await served()).keys.find((k) => k.key_id === keyId);
    expect(await mine()).toEqual({
      key_id: keyId,
      alg: "Ed25519",
      public_key_pem: signer.publicKeyPem,
      created_at: "2026-06-01T00:00:00.000Z",
      not_before: "2026-06-01T00:00:00.000Z",
      not_after: "2027-06-01T00:00:00.000Z",
      revoked_at: null,
    });

    const missing = uniqueId("never-published");
    expect(await revokeReceiptKeys(prisma, [{ keyId, at: new Date("2026-09-01T00:00:00Z") }, { keyId: missing, at: new Date("2026-09-01T00:00:00Z") }])).toEqual([missing]);
    // A later date (another runner's older list) does not move it; an earlier one does.
    await revokeReceiptKeys(prisma, [{ keyId, at: new Date("2026-10-01T00:00:00Z") }]);
    expect(await mine()).toMatchObject({ revoked_at: "2026-09-01T00:00:00.000Z" });
    await revokeReceiptKeys(prisma, [{ keyId, at: new Date("2026-08-01T00:00:00Z") }]);
    expect(await mine()).toMatchObject({ revoked_at: "2026-08-01T00:00:00.000Z" });
    // A runner started later without RECEIPT_KEY_NOT_AFTER leaves the published expiry alone.
    await publishReceiptKey(prisma, { ...signer, notAfter: null });
    expect(await mine()).toMatchObject({ not_after: "2027-06-01T00:00:00.000Z" });

    const keys = await served();
    const receiptAt = (iso: string) => signReceipt(buildReceiptPayload(facts(new Date(iso)), keyId), signer.privateKey);
    expect(verifyReceipt(receiptAt("2026-07-31T23:59:59.999Z"), keys).problems).toEqual([]);
    expect(verifyReceipt(receiptAt("2026-08-01T00:00:00.000Z"), keys).problems).toEqual([
      `key ${keyId} was revoked at 2026-08-01T00:00:00.000Z: the receipt was issued at or after that, at 2026-08-01T00:00:00.000Z`,
    ]);
    expect(verifyReceipt(receiptAt("2026-05-31T23:59:59.999Z"), keys).problems).toEqual([
      `key ${keyId} is valid from 2026-06-01T00:00:00.000Z (not_before): the receipt was issued before, at 2026-05-31T23:59:59.999Z`,
    ]);
  });
});

/** A minimal verified goal's facts, issued at `issuedAt`. */
function facts(issuedAt: Date): ReceiptFacts {
  return {
    goalId: "00000000-0000-4000-8000-000000000001",
    tenantId: "00000000-0000-4000-8000-000000000002",
    objective: "o",
    loopsmithVersion: null,
    attempt: 1,
    inputs: [],
    checkerFiles: [],
    checks: [],
    deliverable: null,
    artifacts: [],
    program: { filename: "solution.py", source: "print(1)\n" },
    image: { id: "sha256:" + "1".repeat(64), repoDigest: null, runtime: "runsc" },
    modelCalls: [],
    tape: [{ seq: 0, from: null, to: "plan", at: issuedAt.toISOString(), detail: {}, hash: null }],
    issuedAt,
  };
}
