// Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
// `${id}.${timestamp}.${body}`, keyed by the base64-decoded part of the `whsec_` secret.
import { createHmac } from "node:crypto";

export interface WebhookHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

const PREFIX = "whsec_";

function secretKey(secret: string): Buffer {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, "base64");
  if (key.length === 0) throw new Error("webhook secret is empty");
  return key;
}

/**
 * One `v1,<sig>` entry per secret, space-separated: during a rotation overlap a receiver holding either
 * the old or the new secret finds a signature it can verify.
 */
export function signWebhook(msg: { messageId: string; timestamp: Date; body: string; secrets: readonly string[] }): WebhookHeaders {
  if (msg.secrets.length === 0) throw new Error("no webhook secret to sign with");
  const seconds = Math.floor(msg.timestamp.getTime() / 1000).toString();
  const signed = `${msg.messageId}.${seconds}.${msg.body}`;
  const signature = msg.secrets
    // update() reads a string as UTF-8 (the standard's encoding of the signed content).
    .map((s) => "v1," + createHmac("sha256", secretKey(s)).update(signed).digest("base64"))
    .join(" ");
  return { "webhook-id": msg.messageId, "webhook-timestamp": seconds, "webhook-signature": signature };
}
