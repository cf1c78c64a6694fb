// The key runners sign receipts with. From configuration (RECEIPT_SIGNING_KEY) in production; otherwise
// generated on first start and kept in a file, which is enough for a demo on one machine. Its public half
// goes into receipt_keys, where the API (which never holds a private key) serves it.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createKeyFileOnce, LoopSmithError } from "@loopsmith/core";
import type { PrismaClient } from "@loopsmith/db";
import { keyIdFor } from "@loopsmith/receipts";

// apps/runner/src -> the repository root, whose .loopsmith/ is git-ignored.
export const DEFAULT_RECEIPT_KEY_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../.loopsmith/receipt-key.pem");

export interface ReceiptSigner {
  keyId: string;
  privateKey: KeyObject;
  publicKeyPem: string;
  /** Where the key came from, for the start-up log. */
  source: "config" | "file" | "generated";
  /** RECEIPT_KEY_NOT_AFTER: past it, a receipt would not verify, so none is signed. */
  notAfter: Date | null;
}

export interface ReceiptKeyConfig {
  RECEIPT_SIGNING_KEY?: string;
  RECEIPT_KEY_ID?: string;
  RECEIPT_KEY_FILE?: string;
  RECEIPT_KEY_NOT_AFTER?: Date;
  RECEIPT_KEYS_REVOKED?: readonly { keyId: string; at: Date }[];
}

/** A PKCS#8 Ed25519 private key, as PEM or as base64 of the DER bytes. Throws saying what is wrong. */
export function parseSigningKey(text: string): KeyObject {
  const trimmed = text.trim();
  let key: KeyObject;
  try {
    key = trimmed.startsWith("-----BEGIN")
      ? createPrivateKey(trimmed)
      : createPrivateKey({ key: Buffer.from(trimmed, "base64"), format: "der", type: "pkcs8" });
  } catch (e) {
    throw new Error(`not a PKCS#8 private key (PEM, or base64 of the DER bytes): ${(e as Error).message}`);
  }
  if (key.asymmetricKeyType !== "ed25519") throw new Error(`an ${key.asymmetricKeyType} key; receipts are signed with Ed25519`);
  return key;
}

/**
 * The signing key, refused (LS_ERR_CONFIG) when its receipts could not verify: past RECEIPT_KEY_NOT_AFTER,
 * or listed in RECEIPT_KEYS_REVOKED.
 */
export function loadReceiptSigner(config: ReceiptKeyConfig, now: Date = new Date()): ReceiptSigner {
  let privateKey: KeyObject;
  let source: ReceiptSigner["source"];
  if (config.RECEIPT_SIGNING_KEY) {
    privateKey = parseSigningKey(config.RECEIPT_SIGNING_KEY);
    source = "config";
  } else {
    const file = config.RECEIPT_KEY_FILE ?? DEFAULT_RECEIPT_KEY_FILE;
    const created = createKeyFileOnce(file, () => generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }));
    try {
      privateKey = parseSigningKey(fs.readFileSync(file, "utf8"));
    } catch (e) {
      throw new LoopSmithError("LS_ERR_CONFIG", `RECEIPT_KEY_FILE ${file}: ${(e as Error).message}`);
    }
    source = created ? "generated" : "file";
  }
  const publicKey = createPublicKey(privateKey);
  const keyId = config.RECEIPT_KEY_ID ?? keyIdFor(publicKey);
  const notAfter = config.RECEIPT_KEY_NOT_AFTER ?? null;
  if (notAfter && now > notAfter)
    throw new LoopSmithError("LS_ERR_CONFIG", `receipt key ${keyId} expired at ${notAfter.toISOString()} (RECEIPT_KEY_NOT_AFTER): configure a new key with a new RECEIPT_KEY_ID`);
  if (config.RECEIPT_KEYS_REVOKED?.some((r) => r.keyId === keyId))
    throw new LoopSmithError("LS_ERR_CONFIG", `RECEIPT_KEYS_REVOKED revokes this runner's own receipt key ${keyId}: configure a new key with a new RECEIPT_KEY_ID`);
  return { keyId, privateKey, publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(), source, notAfter };
}

/** Refuses to sign what would not verify: a receipt issued after the key's not_after. */
export function assertSignable(signer: ReceiptSigner, at: Date): void {
  if (signer.notAfter && at > signer.notAfter)
    throw new LoopSmithError("LS_ERR_CONFIG", `receipt key ${signer.keyId} expired at ${signer.notAfter.toISOString()} (RECEIPT_KEY_NOT_AFTER): restart the runners with a new key`);
}

/**
 * Publishes the signer's public key, and its not_after when configured. A key id names one key forever: the
 * same id with another key is a configuration error (a rotation needs a new id), since receipts already
 * signed name the old one. Its creation time, the key's not_before, comes from the clock the receipts'
 * issued_at come from, so that a database clock ahead of the runner's cannot date the key after them.
 */
export async function publishReceiptKey(prisma: PrismaClient, signer: ReceiptSigner, now: Date = new Date()): Promise<void> {
  const check = async () => {
    const row = await prisma.receiptKey.findUnique({ where: { keyId: signer.keyId } });
    if (row && row.publicKeyPem.trim() !== signer.publicKeyPem.trim())
      throw new LoopSmithError("LS_ERR_CONFIG", `receipt key id ${signer.keyId} is already published with another public key: give a new key a new RECEIPT_KEY_ID`);
    return row !== null;
  };
  if (!(await check())) {
    try {
      await prisma.receiptKey.create({ data: { keyId: signer.keyId, alg: "Ed25519", publicKeyPem: signer.publicKeyPem, createdAt: now } });
    } catch (e) {
      // Another runner published it first: fine if it is the same key.
      if ((e as { code?: string }).code !== "P2002") throw e;
      await check();
    }
  }
  // Unset leaves a published expiry alone: a runner started without it (an old config) does not lift it.
  if (signer.notAfter) await prisma.receiptKey.update({ where: { keyId: signer.keyId }, data: { notAfter: signer.notAfter } });
}

/**
 * Publishes RECEIPT_KEYS_REVOKED: each key's revoked_at is set, or moved earlier, never later or lifted, so
 * runners with different lists agree on the earliest. Returns the ids no runner has published, for the log.
 */
export async function revokeReceiptKeys(prisma: PrismaClient, revoked: readonly { keyId: string; at: Date }[]): Promise<string[]> {
  const unknown: string[] = [];
  for (const { keyId, at } of revoked) {
    const { count } = await prisma.receiptKey.updateMany({ where: { keyId, OR: [{ revokedAt: null }, { revokedAt: { gt: at } }] }, data: { revokedAt: at } });
    if (count === 0 && (await prisma.receiptKey.count({ where: { keyId } })) === 0) unknown.push(keyId);
  }
  return unknown;
}
