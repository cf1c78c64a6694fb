// Delivery rows: created inside the transaction that ends (or pauses) a goal, read and redelivered by
// the API. The HTTP side lives in worker.ts.
import { randomBytes } from "node:crypto";
import type { Queue } from "bullmq";
import { LoopSmithError } from "@loopsmith/core";
import { readSnapshot, UUID, type DeliveryAttempt, type PrismaClient, type Tx, type WebhookDelivery } from "@loopsmith/db";
import type { DeliveryView, WebhookEvent } from "@loopsmith/schemas";
import { eventForState } from "./events";
import { goalWebhook } from "./payload";
import { enqueueDelivery, type RetryConfig } from "./queue";

export function newMessageId(): string {
  return "msg_" + randomBytes(16).toString("hex");
}

/** Where the goal's events go; null without a webhook, or once a receiver's 410 disabled it. */
function webhookUrl(webhook: unknown): string | null {
  const w = goalWebhook(webhook);
  return w && !w.disabled_at ? w.url : null;
}

/**
 * Inside the caller's transaction: record that `event` must be delivered, when the goal has a webhook.
 * Returns the delivery id, or null when there is nothing to deliver. The payload is built by the worker
 * at the first attempt: the goal row written in this transaction is not visible to anyone else yet.
 */
export async function createDelivery(
  tx: Tx,
  goal: { id: string; tenantId: string; webhook: unknown },
  event: WebhookEvent,
): Promise<string | null> {
  const url = webhookUrl(goal.webhook);
  if (!url) return null;
  const row = await tx.webhookDelivery.create({
    data: { tenantId: goal.tenantId, goalId: goal.id, event, url, messageId: newMessageId() },
    select: { id: true },
  });
  return row.id;
}

/**
 * The webhook a move into `state` announces (verified, failed, cancelled, awaiting_approval), recorded in
 * the move's own transaction. Every writer of goal moves (the runner's steps, the API's cancel/approve/
 * reject/retry) calls this, so no move that should be announced can skip it.
 */
export async function announceMove(tx: Tx, goal: { id: string; tenantId: string; webhook: unknown; scheduleId?: string | null }, state: string): Promise<string | null> {
  const event = eventForState(state, goal);
  return event ? createDelivery(tx, goal, event) : null;
}

export function toDeliveryView(d: WebhookDelivery & { log: DeliveryAttempt[] }): DeliveryView {
  return {
    id: d.id,
    goal_id: d.goalId,
    event: d.event as DeliveryView["event"],
    url: d.url,
    message_id: d.messageId,
    status: d.status as DeliveryView["status"],
    attempts: d.attempts,
    last_error: d.lastError,
    created_at: d.createdAt.toISOString(),
    delivered_at: d.deliveredAt?.toISOString() ?? null,
    log: d.log.map((a) => ({
      attempt: a.attempt,
      status_code: a.statusCode,
      latency_ms: a.latencyMs,
      error: a.error,
      at: a.at.toISOString(),
    })),
  };
}

const withLog = { log: { orderBy: { attempt: "asc" } } } as const;

/** A goal's deliveries, newest first, each with its attempts oldest first; null when the goal is not the tenant's. */
export async function listDeliveries(prisma: PrismaClient, scope: { tenantId: string; goalId: string }): Promise<DeliveryView[] | null> {
  if (!UUID.test(scope.goalId)) return null;
  const goal = await prisma.goal.findFirst({ where: { id: scope.goalId, tenantId: scope.tenantId }, select: { id: true } });
  if (!goal) return null;
  const rows = await readSnapshot(prisma, (tx) =>
    tx.webhookDelivery.findMany({
      where: { goalId: goal.id, tenantId: scope.tenantId },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      include: withLog,
    }),
  );
  return rows.map(toDeliveryView);
}

export async function loadDelivery(prisma: PrismaClient, scope: { tenantId: string; deliveryId: string }): Promise<DeliveryView | null> {
  if (!UUID.test(scope.deliveryId)) return null;
  const row = await readSnapshot(prisma, (tx) =>
    tx.webhookDelivery.findFirst({ where: { id: scope.deliveryId, tenantId: scope.tenantId }, include: withLog }),
  );
  return row ? toDeliveryView(row) : null;
}

/**
 * Send a delivered or dead delivery again: same payload, same webhook-id, a fresh round of attempts whose
 * numbers continue the log. Null when there is no such delivery for this tenant; a pending one is refused.
 */
export async function redeliver(
  prisma: PrismaClient,
  queue: Queue,
  config: RetryConfig,
  scope: { tenantId: string; deliveryId: string },
): Promise<DeliveryView | null> {
  if (!UUID.test(scope.deliveryId)) return null;
  const row = await prisma.webhookDelivery.findFirst({ where: { id: scope.deliveryId, tenantId: scope.tenantId } });
  if (!row) return null;
  const inProgress = () =>
    new LoopSmithError("LS_ERR_DELIVERY_IN_PROGRESS", `Delivery ${row.id} is still being attempted; redeliver it once it is delivered or dead.`);
  if (row.status === "pending") throw inProgress();
  // Compare-and-set on the status: of two concurrent redeliveries, one wins and the other gets 409.
  const claimed = await prisma.webhookDelivery.updateMany({
    where: { id: row.id, status: row.status },
    data: { status: "pending", lastError: null },
  });
  if (claimed.count !== 1) throw inProgress();
  try {
    await enqueueDelivery(queue, row.id, config, `${row.id}-r${Date.now()}`);
  } catch (e) {
    // A pending delivery without a job would refuse every later redelivery: put it back.
    await prisma.webhookDelivery.updateMany({ where: { id: row.id, status: "pending" }, data: { status: row.status, lastError: row.lastError } });
    throw e;
  }
  return loadDelivery(prisma, scope);
}
