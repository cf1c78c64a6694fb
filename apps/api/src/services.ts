// What the routes need from the outside world, passed in by server.ts (or a test) as one plain object.
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { PrismaClient, SecretBox } from "@loopsmith/db";
import type { ModelConfig } from "@loopsmith/models";
import type { BudgetConfig, GoalJob } from "@loopsmith/schemas";
import type { WebhookConfig } from "@loopsmith/webhooks";
import type { ApiLimitsConfig } from "./config";

export interface Services {
  prisma: PrismaClient;
  /** The queue prefix goals are scheduled on (recorded on each goal); default "loopsmith". */
  queuePrefix?: string;
  /** Schedules a goal step (optionally later: approval timeouts are delayed steps). */
  enqueue: (job: GoalJob, delayMs?: number) => Promise<void>;
  models: ModelConfig;
  budgets: BudgetConfig;
  webhooks: WebhookConfig;
  webhookQueue: Queue;
  /** Where schedules' job schedulers live; unset: the /schedules routes answer 503. */
  scheduleQueue?: Queue;
  /** Seals new webhook signing secrets (encrypted at rest; see loadWebhookSecretBox). */
  secretBox: SecretBox;
  /** Per-tenant rate limiting; unset disables it. */
  rateLimit?: { redis: Redis; perMinute: number; authFailuresPerMinute?: number };
  /** Bearer key for /admin routes; unset disables them (403). */
  adminApiKey?: string;
  /** Per-tenant caps (open goals, event streams); unset: the defaults of apiLimitsConfigSchema. */
  limits?: ApiLimitsConfig;
  /** Recorded on every goal created (see loopsmithVersion in @loopsmith/core); read once at start-up. */
  loopsmithVersion?: string;
}
