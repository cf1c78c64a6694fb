// Webhook signing secrets at rest: AES-256-GCM under a key from configuration (WEBHOOK_SECRET_KEY). The
// server must hold the secrets themselves (it signs with them), so they are encrypted rather than hashed:
// a database dump or a read-only SQL injection no longer yields secrets that forge webhooks.
//
// Stored form: `lsenc:v1:<key id>:<base64url(iv | ciphertext | tag)>`. The key id (a fingerprint of the
// key, not the key) says which key sealed a row, so a wrong key is named as such instead of failing as
// "bad tag". The additional data binds a sealed secret to its row's context (the tenant): copied into
// another tenant's row it does not open.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { LoopSmithError } from "@loopsmith/core";

const PREFIX = "lsenc:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const SECRET_KEY_BYTES = 32;

export interface SecretBox {
  /** The fingerprint of the key new secrets are sealed with. */
  readonly keyId: string;
  /** Every key that opens, by fingerprint (keyIds[0] is keyId). */
  readonly keyIds: readonly string[];
  seal(plain: string, context: string): string;
  /**
   * The secret a stored value holds. `stale` is true when the row should be written again sealed under the
   * current key: a plaintext row from before encryption, or one sealed under an older key.
   */
  open(stored: string, context: string): { plain: string; stale: boolean };
}

export function secretKeyId(key: Buffer): string {
  return createHash("sha256").update("loopsmith/webhook-secret-key\0").update(key).digest("hex").slice(0, 12);
}

/** The start of a value sealed under the key with fingerprint `keyId` (without it: under any key). */
export function sealedPrefix(keyId = ""): string {
  return keyId ? `${PREFIX}${keyId}:` : PREFIX;
}

/** True for a value in the sealed form (whichever key sealed it). */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/**
 * `keys[0]` seals; every key opens. Listing the previous key after a new one lets rows sealed under the old
 * key still open, and each is resealed under the new key on its next read.
 */
export function createSecretBox(keys: readonly Buffer[]): SecretBox {
  if (keys.length === 0) throw new LoopSmithError("LS_ERR_CONFIG", "no webhook secret key: set WEBHOOK_SECRET_KEY");
  for (const k of keys) {
    if (k.length !== SECRET_KEY_BYTES) throw new LoopSmithError("LS_ERR_CONFIG", `a webhook secret key must be ${SECRET_KEY_BYTES} bytes, got ${k.length}`);
  }
  const byId = new Map(keys.map((k) => [secretKeyId(k), k] as const));
  const current = keys[0]!;
  const keyId = secretKeyId(current);
  const aad = (context: string) => Buffer.from(`loopsmith/webhook-secret/v1\0${context}`, "utf8");
  return {
    keyId,
    keyIds: [...byId.keys()],
    seal(plain, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", current, iv);
      cipher.setAAD(aad(context));
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
      return `${PREFIX}${keyId}:${Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64url")}`;
    },
    open(stored, context) {
      // Rows written before encryption: still good, to be sealed on this read (see tenants.ts).
      if (!isSealed(stored)) return { plain: stored, stale: true };
      const rest = stored.slice(PREFIX.length);
      const colon = rest.indexOf(":");
      const id = rest.slice(0, colon);
      const key = colon > 0 ? byId.get(id) : undefined;
      if (!key) {
        throw new LoopSmithError(
          "LS_ERR_CONFIG",
          `a webhook secret is sealed with key ${id || "?"}, which is not configured (WEBHOOK_SECRET_KEY holds ${[...byId.keys()].join(", ")})`,
        );
      }
      const raw = Buffer.from(rest.slice(colon + 1), "base64url");
      if (raw.length < IV_BYTES + TAG_BYTES) throw new LoopSmithError("LS_ERR_CONFIG", "a sealed webhook secret is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(aad(context));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      let plain: string;
      try {
        plain = Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new LoopSmithError("LS_ERR_CONFIG", `a sealed webhook secret does not open under key ${id}: altered, or moved from another tenant`);
      }
      return { plain, stale: id !== keyId };
    },
  };
}
