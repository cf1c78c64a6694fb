import ipaddr from "ipaddr.js";
import { z } from "zod";

const positive = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/**
 * Webhook settings from the environment. Apps merge them into their own config with
 * `.extend(webhookConfigSchema.shape)`.
 */
export const webhookConfigSchema = z.object({
  // Private and loopback receivers are refused unless listed here (comma-separated CIDRs or single IPs):
  // the server's own network is exactly what an attacker-supplied URL would aim at.
  WEBHOOK_ALLOW_CIDRS: z
    .string()
    .default("")
    .transform((raw, ctx) => {
      const entries = raw
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      for (const e of entries) {
        if (!ipaddr.isValidCIDR(e) && !ipaddr.isValid(e)) ctx.addIssue({ code: "custom", message: `"${e}" is neither a CIDR nor an IP address` });
      }
      return entries;
    }),
  /** HTTP attempts per delivery (and per redelivery) before it is dead. */
  WEBHOOK_MAX_ATTEMPTS: positive(8),
  /** The first retry's delay; each retry doubles it. */
  WEBHOOK_BACKOFF_MS: positive(5000),
  /** Per HTTP attempt, covering connect, headers and the (discarded) body. */
  WEBHOOK_TIMEOUT_MS: positive(10_000),
  /**
   * Webhook POSTs of one tenant in flight at once, across all runners (0: no cap). Keep it below the
   * delivery worker's concurrency (4 per runner), so that a tenant whose receiver hangs leaves slots to
   * the others; its further deliveries wait, their attempts untouched, and ask again after WEBHOOK_DEFER_MS.
   */
  WEBHOOK_TENANT_IN_FLIGHT: z.coerce.number().int().min(0).default(2),
  WEBHOOK_DEFER_MS: positive(1000),
  /** How long the previous secret keeps signing after a rotation. */
  WEBHOOK_SECRET_OVERLAP_SECONDS: z.coerce.number().int().min(0).default(86_400),
  /** How long the SSRF guard waits for DNS before refusing the URL. */
  WEBHOOK_DNS_TIMEOUT_MS: positive(3000),
  // The AES-256-GCM key(s) that encrypt webhook signing secrets at rest: base64 of 32 bytes, comma-separated;
  // the first seals, all open (list the old key second while rotating it). Unset: a key generated on first
  // start and kept in WEBHOOK_SECRET_KEY_FILE (default .loopsmith/webhook-secret.key), fine for one machine.
  WEBHOOK_SECRET_KEY: z
    .string()
    .optional()
    .transform((raw, ctx) => {
      const entries = (raw ?? "")
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean);
      const keys = entries.map((e) => Buffer.from(e, "base64"));
      keys.forEach((k, i) => {
        if (k.length !== 32 || k.toString("base64") !== entries[i]) ctx.addIssue({ code: "custom", message: `key ${i + 1} is not base64 of 32 bytes` });
      });
      return keys.length > 0 ? keys : undefined;
    }),
  WEBHOOK_SECRET_KEY_FILE: z.string().min(1).optional(),
});
export type WebhookConfig = z.output<typeof webhookConfigSchema>;
