// @loopsmith/webhooks: signed goal notifications (Standard Webhooks), with retries, a delivery log,
// redelivery and an SSRF guard on every URL.
export { webhookConfigSchema, type WebhookConfig } from "./config";
export { checkWebhookUrl, assertWebhookUrl, DEFAULT_LOOKUP_TIMEOUT_MS, webhookPortAllowed, type LookupAll, type ResolvedAddress, type UrlCheck, type UrlCheckOptions } from "./ssrf";
export { DEFAULT_WEBHOOK_SECRET_KEY_FILE, loadWebhookSecretBox, type LoadedSecretBox } from "./secret-key";
export { signWebhook, type WebhookHeaders } from "./sign";
export { WEBHOOK_EVENTS, eventForState, type WebhookEvent } from "./events";
export { announceMove, createDelivery, listDeliveries, loadDelivery, newMessageId, redeliver, toDeliveryView } from "./deliveries";
export { DEFAULT_RETRY_SCHEDULE, jittered, nextRetryDelayMs, parseDuration, parseRetryAfter, parseSchedule, scheduledDelayMs, type RetryPlan } from "./schedule";
export { goalWebhook, thinPayload, type GoalWebhook, type ThinGoal } from "./payload";
export { createWebhookQueue, DELIVERY_BACKOFF, enqueueDelivery, enqueuePendingDeliveries, type RetryConfig, type WebhookQueue } from "./queue";
export { createDeliveryWorker, deliver, DeliveryFailed, GONE, IN_FLIGHT, NO_OUTCOME, retryDelayMs, type DeliveryWorkerDeps } from "./worker";
export { MAX_RESPONSE_BYTES, USER_AGENT, postPinned, type PostResult } from "./post";
export { redisDeliverySlots, type DeliverySlots } from "./slots";
