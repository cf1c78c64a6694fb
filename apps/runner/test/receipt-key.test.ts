// Issue 11.4: where the receipt signing key comes from, how its public half is published, and rotation:
// receipts signed before a new key keep verifying against the served key list.
import { randomBytes, generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, parseConfig } from "@loopsmith/core";
import { createPrisma, type PrismaClient } from "@loopsmith/db";
import { keyIdFor, verifyReceipt } from "@loopsmith/receipts";
import { checkedGoal } from "../../../tests/support/checked-goal";
import { startLoop } from "../../../tests/support/loop";
import { DATABASE_URL } from "../../../tests/support/services";
import { runnerConfigSchema } from "../src/config";
import { loadReceiptSigner, publishReceiptKey } from "../src/receipt-key";

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
