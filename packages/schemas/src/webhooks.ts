import { z } from "zod";

// The webhook delivery log and secret rotation, as the API shows them.

/**
 * The events a goal's webhook receives. A schedule's tick announces its end as schedule.tick.verified or
 * schedule.tick.failed instead of goal.verified or goal.failed (the payload is the same goal).
 */
export const WEBHOOK_EVENTS = ["goal.verified", "goal.failed", "goal.cancelled", "goal.awaiting_approval", "schedule.tick.verified", "schedule.tick.failed"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const DELIVERY_STATUSES = ["pending", "delivered", "dead"] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const isoDate = z.string().meta({ format: "date-time", description: "ISO 8601 timestamp (UTC)" });

export const deliveryAttemptView = z
  .object({
    attempt: z.int().describe("Counts across redeliveries: a redelivery continues the numbering."),
    status_code: z.int().nullable().describe("The receiver's HTTP status; null when no answer came."),
    latency_ms: z.int(),
    error: z.string().nullable().describe("Network error, timeout, refused address, or `HTTP <status>` for a non-2xx answer."),
    at: isoDate,
  })
  .meta({ id: "DeliveryAttempt" });
export type DeliveryAttemptView = z.infer<typeof deliveryAttemptView>;

export const deliveryView = z
  .object({
    id: z.uuid(),
    goal_id: z.uuid(),
    event: z.enum(WEBHOOK_EVENTS),
    url: z.string(),
    message_id: z.string().describe("The webhook-id header: the same for every attempt of this delivery."),
    status: z.enum(DELIVERY_STATUSES).describe("pending: being attempted; delivered: a 2xx came back; dead: attempts ran out."),
    attempts: z.int(),
    last_error: z.string().nullable(),
    created_at: isoDate,
    delivered_at: isoDate.nullable(),
    log: z.array(deliveryAttemptView).describe("One row per HTTP attempt, oldest first."),
  })
  .meta({ id: "WebhookDelivery" });
export type DeliveryView = z.infer<typeof deliveryView>;

export const deliveryList = z.object({ deliveries: z.array(deliveryView).describe("Newest first.") }).meta({ id: "WebhookDeliveryList" });
export type DeliveryList = z.infer<typeof deliveryList>;

export const deliveryIdParams = z.object({ id: z.string() });

export const rotatedSecret = z
  .object({
    secret: z.string().describe("The new signing secret (whsec_...), shown once."),
    previous_valid_until: isoDate.describe("Until then deliveries are signed with the previous secret too."),
  })
  .meta({ id: "RotatedWebhookSecret" });
export type RotatedSecret = z.infer<typeof rotatedSecret>;
