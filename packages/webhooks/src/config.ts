import ipaddr from "ipaddr.js";
import { z } from "zod";
import { DEFAULT_RETRY_SCHEDULE, parseDuration, parseSchedule } from "./schedule";

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
  /**
   * The delay before each retry (comma-separated durations: 500ms, 5s, 30m, 2h, or seconds); the last one
   * repeats when WEBHOOK_MAX_ATTEMPTS allows more retries than listed. Default: about a day (schedule.ts).
   */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default(DEFAULT_RETRY_SCHEDULE)
    .transform((raw, ctx) => {
      try {
        return parseSchedule(raw);
      } catch (e) {
        ctx.addIssue({ code: "custom", message: (e as Error).message });
        return z.NEVER;
      }
    }),
  /** Each retry's delay is multiplied by a random factor in [1 - j, 1 + j]. */
  WEBHOOK_RETRY_JITTER: z.coerce.number().min(0).max(1).default(0.2),
  /** The longest wait a receiver's Retry-After can impose before the next retry (a duration). */
  WEBHOOK_RETRY_AFTER_MAX: z
    .string()
    .default("6h")
    .transform((raw, ctx) => {
      const ms = parseDuration(raw);
      if (ms === null) {
        ctx.addIssue({ code: "custom", message: `"${raw}" is not a duration (like 30m or 6h)` });
        return z.NEVER;
      }
      return ms;
    }),
  /** Per HTTP attempt, covering connect, headers and the (discarded) body. */
  WEBHOOK_TIMEOUT_MS: positive(15_000),
  /**
   * Where the API is reached from outside (https://loopsmith.example.com): thin payloads' links are
   * absolute under it; unset, they are paths (/goals/<id>) for the receiver to put under the URL it knows.
   */
  PUBLIC_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ""))
    .optional(),
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
