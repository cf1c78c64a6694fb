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
});
export type WebhookConfig = z.output<typeof webhookConfigSchema>;
