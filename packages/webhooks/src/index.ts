// @loopsmith/webhooks: signed goal notifications (Standard Webhooks), with retries, a delivery log,
// redelivery and an SSRF guard on every URL.
export { webhookConfigSchema, type WebhookConfig } from "./config";
export { checkWebhookUrl, assertWebhookUrl, type LookupAll, type ResolvedAddress, type UrlCheck, type UrlCheckOptions } from "./ssrf";
export { signWebhook, type WebhookHeaders } from "./sign";
export { WEBHOOK_EVENTS, eventForState, type WebhookEvent } from "./events";
export { announceMove, createDelivery, listDeliveries, loadDelivery, newMessageId, redeliver, toDeliveryView } from "./deliveries";
export { createWebhookQueue, enqueueDelivery, enqueuePendingDeliveries, type RetryConfig, type WebhookQueue } from "./queue";
export { createDeliveryWorker, deliver, DeliveryFailed, IN_FLIGHT, NO_OUTCOME, type DeliveryWorkerDeps } from "./worker";
export { MAX_RESPONSE_BYTES, USER_AGENT, postPinned, type PostResult } from "./post";
export { redisDeliverySlots, type DeliverySlots } from "./slots";
