// The delivery worker: one BullMQ job per delivery (or redelivery); each job attempt is one HTTP POST,
// logged as one DeliveryAttempt row, written before the POST and settled after it. BullMQ schedules the
// retries; their delays come from this worker's backoffStrategy (WEBHOOK_RETRY_SCHEDULE with jitter, or a
// longer Retry-After). A 410 Gone ends the delivery and disables the goal's webhook.
import { randomUUID } from "node:crypto";
import { DelayedError, UnrecoverableError, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import { noopMetrics, publicError, type Logger, type Metrics, type WebhookAttemptOutcome } from "@loopsmith/core";
import { activeWebhookSecrets, loadGoalView, type PrismaClient, type SecretBox, type Tx, type WebhookDelivery } from "@loopsmith/db";
import { QUEUES, webhookJobSchema } from "@loopsmith/schemas";
import type { WebhookConfig } from "./config";
import { goalWebhook, thinPayload } from "./payload";
import { postPinned, type PostResult } from "./post";
import { DELIVERY_BACKOFF } from "./queue";
import { nextRetryDelayMs, parseRetryAfter } from "./schedule";
import { signWebhook } from "./sign";
import { redisDeliverySlots, type DeliverySlots } from "./slots";
import { checkWebhookUrl, type LookupAll } from "./ssrf";

export interface DeliveryWorkerDeps {
  prisma: PrismaClient;
  connection: Redis;
  prefix: string;
  config: WebhookConfig;
  /** Opens the tenants' signing secrets (encrypted at rest). */
  secretBox: SecretBox;
  log: Logger;
  concurrency?: number;
  now?: () => Date;
  /** The resolver the SSRF guard uses (tests). */
  lookup?: LookupAll;
  /** false: the caller calls worker.run() (default true). */
  autorun?: boolean;
  /** BullMQ's job lock and stalled-job check (the runner passes WORKER_LOCK_MS / STALLED_INTERVAL_MS). */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  /** Per-tenant slots (default: leases in Redis, WEBHOOK_TENANT_IN_FLIGHT per tenant). */
  slots?: DeliverySlots;
  /** Attempts and deliveries by outcome (default: reports nothing). */
  metrics?: Metrics;
  /** The retry jitter's randomness, in [0, 1) (tests). */
  random?: () => number;
}

/** The log text of an attempt whose POST is under way; a crash leaves it so, visibly. */
export const IN_FLIGHT = "in flight: sent, no outcome recorded yet";
/** What an attempt left in flight by a worker that died becomes when the next try finds it. */
export const NO_OUTCOME = "no outcome recorded: the worker stopped during this attempt; the receiver may have got it";

export function createDeliveryWorker(deps: DeliveryWorkerDeps): Worker {
  const withSlots = { ...deps, slots: deps.slots ?? defaultSlots(deps) };
  const worker = new Worker(QUEUES.webhooks, (job: Job, token?: string) => deliver(withSlots, job, token), {
    connection: deps.connection,
    prefix: deps.prefix,
    concurrency: deps.concurrency ?? 4,
    autorun: deps.autorun ?? true,
    // BullMQ's own stall limit (1 by default) would fail a twice-stalled job without calling deliver(),
    // leaving the delivery pending with no job; deliver() counts stalls against the attempts instead.
    maxStalledCount: deps.config.WEBHOOK_MAX_ATTEMPTS,
    ...(deps.lockDurationMs ? { lockDuration: deps.lockDurationMs } : {}),
    ...(deps.stalledIntervalMs ? { stalledInterval: deps.stalledIntervalMs } : {}),
    settings: { backoffStrategy: (attemptsMade: number, type?: string, err?: Error) => retryDelayMs(deps, attemptsMade, type, err) },
  });
  worker.on("failed", (job, err) =>
    deps.log.warn({ jobId: job?.id, deliveryId: (job?.data as { deliveryId?: string } | undefined)?.deliveryId, err: err.message }, "webhook attempt failed"),
  );
  worker.on("error", (err) => deps.log.error({ err }, "webhook worker error"));
  return worker;
}

function defaultSlots(deps: DeliveryWorkerDeps): DeliverySlots {
  return redisDeliverySlots(deps.connection, {
    prefix: deps.prefix,
    perTenant: deps.config.WEBHOOK_TENANT_IN_FLIGHT,
    // Past the attempt's own deadline, with room for the URL check and the bookkeeping around it: a lease
    // that lapses sooner could let a live attempt's tenant take one slot more.
    leaseMs: 2 * deps.config.WEBHOOK_TIMEOUT_MS + 30_000,
  });
}

export class DeliveryFailed extends Error {
  constructor(
    message: string,
    /** What the receiver's Retry-After asked for (ms from now), or null. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = "DeliveryFailed";
  }
}

/**
 * BullMQ's backoffStrategy for delivery jobs: the delay before the retry after `failed` failed tries. Jobs
 * of another backoff type (none are made now) keep BullMQ's default of an immediate retry.
 */
export function retryDelayMs(deps: Pick<DeliveryWorkerDeps, "config" | "random">, failed: number, type: string | undefined, err: Error | undefined): number {
  if (type !== DELIVERY_BACKOFF) return 0;
  const plan = { schedule: deps.config.WEBHOOK_RETRY_SCHEDULE, jitter: deps.config.WEBHOOK_RETRY_JITTER, retryAfterMaxMs: deps.config.WEBHOOK_RETRY_AFTER_MAX };
  return nextRetryDelayMs(plan, failed, err instanceof DeliveryFailed ? err.retryAfterMs : null, deps.random ?? Math.random);
}

/** What a 410 Gone leaves on the attempt, the delivery and the goal's webhook. */
export const GONE = "HTTP 410 Gone: the receiver wants no more deliveries; this goal's webhook is disabled";

export async function deliver(deps: DeliveryWorkerDeps, job: Job, token?: string): Promise<{ status: string; attempt?: number }> {
  const parsed = webhookJobSchema.safeParse(job.data);
  if (!parsed.success) throw new UnrecoverableError(`malformed webhook job: ${parsed.error.message}`);
  const id = parsed.data.deliveryId;
  // A try whose worker died mid-attempt (a stall) is spent like one that failed: its POST may have gone out.
  const spent = job.attemptsMade + job.stalledCounter;
  // A job added without attempts (BullMQ stores 0) gets one try.
  const tries = Math.max(1, job.opts.attempts ?? 1);
  if (spent >= tries) {
    const error = `attempts exhausted: the worker stopped during ${job.stalledCounter} of ${spent} tries`;
    await deps.prisma.$transaction(async (tx) => {
      await tx.deliveryAttempt.updateMany({ where: { deliveryId: id, error: IN_FLIGHT }, data: { error: NO_OUTCOME } });
      await tx.webhookDelivery.updateMany({ where: { id, status: "pending" }, data: { status: "dead", lastError: error } });
    });
    (deps.metrics ?? noopMetrics).webhookDelivery({ outcome: "dead" });
    deps.log.warn({ deliveryId: id, tries: spent, stalls: job.stalledCounter }, "webhook attempts exhausted by stalls; delivery is dead");
    throw new UnrecoverableError(error);
  }
  const lastTry = spent + 1 >= tries;
  let outcome: Awaited<ReturnType<typeof attemptDelivery>>;
  try {
    outcome = await attemptDelivery(deps, id, lastTry, job.timestamp + (job.opts.delay ?? 0));
  } catch (e) {
    // Anything that failed before an attempt was recorded (database, secrets): on the last try the
    // delivery must still end dead, or it would stay pending with no job and refuse every redelivery.
    if (lastTry && !(e instanceof DeliveryFailed) && !(e instanceof UnrecoverableError)) {
      // last_error is the tenant's to read: a short message (the error itself is in the worker's log).
      const shown = publicError(e);
      await deps.prisma.webhookDelivery
        .updateMany({ where: { id, status: "pending" }, data: { status: "dead", lastError: `${shown.code}: ${shown.message}` } })
        .catch(() => undefined);
    }
    throw e;
  }
  if (outcome.status !== "deferred") return outcome;
  // The tenant's slots are all in flight: back in the queue, delayed (jittered, so that a tenant's many
  // waiting deliveries do not all ask at once), with no try spent and nothing logged on the delivery.
  const delayMs = Math.round(deps.config.WEBHOOK_DEFER_MS * (1 + Math.random()));
  deps.log.debug({ deliveryId: id, delayMs }, "webhook delivery deferred: its tenant's slots are in flight");
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

async function attemptDelivery(deps: DeliveryWorkerDeps, id: string, lastTry: boolean, dueAt: number): Promise<{ status: string; attempt?: number }> {
  const delivery = await deps.prisma.webhookDelivery.findUnique({ where: { id } });
  // Gone with its goal, or already settled by an earlier job: nothing to do.
  if (!delivery || delivery.status !== "pending") return { status: delivery?.status ?? "missing" };
  const slots = deps.slots ?? defaultSlots(deps);
  const holder = randomUUID();
  if (!(await slots.acquire(delivery.tenantId, holder))) return { status: "deferred" };
  // Once per delivery, when its first attempt really starts (after any deferrals for the tenant's slots).
  if (delivery.attempts === 0) deps.metrics?.jobStarted({ queue: QUEUES.webhooks, waitSeconds: (Date.now() - dueAt) / 1000 });
  try {
    return await attemptHeld(deps, delivery, lastTry);
  } finally {
    await slots.release(delivery.tenantId, holder).catch((err: unknown) => deps.log.warn({ err, deliveryId: id }, "could not release a webhook slot; its lease lapses by itself"));
  }
}

async function attemptHeld(deps: DeliveryWorkerDeps, delivery: WebhookDelivery, lastTry: boolean): Promise<{ status: string; attempt?: number }> {
  const id = delivery.id;
  const { prisma, config, log } = deps;
  const now = deps.now ?? (() => new Date());

  const metrics = deps.metrics ?? noopMetrics;
  let payload = delivery.payload;
  if (payload === null) {
    // Built once and stored, so that every retry and redelivery sends the same bytes under the same id.
    const goal = await prisma.goal.findFirst({ where: { id: delivery.goalId, tenantId: delivery.tenantId } });
    const thin = goal !== null && goalWebhook(goal.webhook)?.payload === "thin";
    const data = goal === null ? null : thin ? thinPayload(goal, config.PUBLIC_BASE_URL) : await loadGoalView(prisma, { tenantId: delivery.tenantId, id: delivery.goalId });
    if (!data) {
      await prisma.webhookDelivery.update({ where: { id }, data: { status: "dead", lastError: "the goal no longer exists" } });
      throw new UnrecoverableError(`goal ${delivery.goalId} of delivery ${id} not found`);
    }
    const built = JSON.stringify({ type: delivery.event, timestamp: now().toISOString(), data });
    const stored = await prisma.webhookDelivery.updateMany({ where: { id, payload: null }, data: { payload: built } });
    payload = stored.count === 1 ? built : (await prisma.webhookDelivery.findUniqueOrThrow({ where: { id } })).payload!;
  }

  // At delivery time, with this worker's allow list: the URL was checked at submission, but DNS (and the
  // server's policy) may have changed since.
  const started = performance.now();
  const check = await checkWebhookUrl(delivery.url, { allowCidrs: config.WEBHOOK_ALLOW_CIDRS, lookup: deps.lookup, lookupTimeoutMs: config.WEBHOOK_DNS_TIMEOUT_MS });
  if (!check.ok) {
    const error = `refused: ${check.reason}`;
    const attempt = await record(prisma, id, { statusCode: null, latencyMs: Math.round(performance.now() - started), error }, "dead");
    metrics.webhookAttempt({ outcome: "refused", seconds: (performance.now() - started) / 1000 });
    metrics.webhookDelivery({ outcome: "dead" });
    log.warn({ deliveryId: id, attempt, reason: check.reason, detail: check.detail }, "webhook URL refused at delivery time; delivery is dead");
    throw new UnrecoverableError(error);
  }

  const secrets = await activeWebhookSecrets(prisma, delivery.tenantId, deps.secretBox, now());
  const headers = signWebhook({ messageId: delivery.messageId, timestamp: now(), body: payload, secrets });
  // Logged before the POST: a worker killed once the request is out must still leave a visible attempt
  // (the receiver may have it), not a log that shows one attempt fewer than it got.
  const attempt = await begin(prisma, id);
  const result = await postPinned({
    url: delivery.url,
    address: check.address,
    family: check.family,
    headers: { ...headers },
    body: payload,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });

  const observe = (outcome: WebhookAttemptOutcome) => metrics.webhookAttempt({ outcome, seconds: result.latencyMs / 1000 });

  if (result.error === null) {
    await settle(prisma, id, attempt, result, "delivered", now());
    observe("delivered");
    metrics.webhookDelivery({ outcome: "delivered" });
    log.info({ deliveryId: id, attempt, statusCode: result.statusCode, latencyMs: result.latencyMs }, "webhook delivered");
    return { status: "delivered", attempt };
  }
  if (result.statusCode === 410) {
    // Standard Webhooks: 410 Gone means "stop". No retry, and the goal's later events are not sent either.
    await settle(prisma, id, attempt, { ...result, error: GONE }, "dead", undefined, (tx) => disableGoalWebhook(tx, delivery, now()));
    observe("gone");
    metrics.webhookDelivery({ outcome: "disabled" });
    log.warn({ deliveryId: id, goalId: delivery.goalId, attempt, url: delivery.url }, "webhook receiver answered 410 Gone: the goal's webhook is disabled");
    throw new UnrecoverableError(GONE);
  }
  await settle(prisma, id, attempt, result, lastTry ? "dead" : "pending");
  observe("failed");
  if (lastTry) {
    metrics.webhookDelivery({ outcome: "dead" });
    log.warn({ deliveryId: id, attempt, error: result.error }, "webhook attempts exhausted; delivery is dead");
  }
  // Thrown so that BullMQ schedules the next try (retryDelayMs; on the last one it fails the job).
  throw new DeliveryFailed(result.error, parseRetryAfter(result.retryAfter, now()));
}

/**
 * After a 410: the goal's webhook is marked disabled (so that no later event of the goal creates a
 * delivery, see createDelivery) and its other pending deliveries to the same URL end dead, unsent.
 */
async function disableGoalWebhook(tx: Tx, delivery: WebhookDelivery, at: Date): Promise<void> {
  const goal = await tx.goal.findUnique({ where: { id: delivery.goalId }, select: { webhook: true } });
  const webhook = goalWebhook(goal?.webhook);
  if (webhook && webhook.url === delivery.url && !webhook.disabled_at) {
    await tx.goal.update({ where: { id: delivery.goalId }, data: { webhook: { ...webhook, disabled_at: at.toISOString(), disabled_reason: "410 Gone" } } });
  }
  await tx.webhookDelivery.updateMany({
    where: { goalId: delivery.goalId, url: delivery.url, status: "pending", id: { not: delivery.id } },
    data: { status: "dead", lastError: GONE },
  });
}

/**
 * One transaction: take the next attempt number (the row lock orders concurrent jobs) and append its log
 * row, still without an outcome. An earlier attempt still in flight was left by a worker that died.
 */
async function begin(prisma: PrismaClient, id: string): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const row = await tx.webhookDelivery.update({ where: { id }, data: { attempts: { increment: 1 } }, select: { attempts: true } });
    await tx.deliveryAttempt.updateMany({ where: { deliveryId: id, error: IN_FLIGHT }, data: { error: NO_OUTCOME } });
    await tx.deliveryAttempt.create({ data: { deliveryId: id, attempt: row.attempts, statusCode: null, latencyMs: 0, error: IN_FLIGHT } });
    return row.attempts;
  });
}

/** The outcome of a begun attempt, and the delivery's status. A 2xx always wins (see record). */
async function settle(
  prisma: PrismaClient,
  id: string,
  attempt: number,
  result: PostResult,
  status: "pending" | "delivered" | "dead",
  deliveredAt?: Date,
  also?: (tx: Tx) => Promise<void>,
): Promise<void> {
  await prisma.$transaction(async (tx) => {
    await tx.deliveryAttempt.update({
      where: { deliveryId_attempt: { deliveryId: id, attempt } },
      data: { statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error },
    });
    await settleStatus(tx, id, result, status, deliveredAt);
    await also?.(tx);
  });
}

/** One transaction: an attempt that never reached the network (a refused URL), logged with its outcome. */
async function record(
  prisma: PrismaClient,
  id: string,
  result: PostResult,
  status: "pending" | "delivered" | "dead",
  deliveredAt?: Date,
): Promise<number> {
  return prisma.$transaction(async (tx) => {
    const row = await tx.webhookDelivery.update({ where: { id }, data: { attempts: { increment: 1 } }, select: { attempts: true } });
    await tx.deliveryAttempt.create({
      data: { deliveryId: id, attempt: row.attempts, statusCode: result.statusCode, latencyMs: result.latencyMs, error: result.error },
    });
    await settleStatus(tx, id, result, status, deliveredAt);
    return row.attempts;
  });
}

/** A failing job never downgrades a delivery another job delivered meanwhile. */
async function settleStatus(tx: Tx, id: string, result: PostResult, status: "pending" | "delivered" | "dead", deliveredAt?: Date): Promise<void> {
  if (status === "delivered") {
    await tx.webhookDelivery.update({ where: { id }, data: { status, deliveredAt, lastError: null } });
  } else {
    await tx.webhookDelivery.updateMany({ where: { id, status: "pending" }, data: { status, lastError: result.error } });
  }
}
