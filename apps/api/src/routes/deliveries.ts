import type { Queue } from "bullmq";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError } from "@loopsmith/core";
import { rotateWebhookSecret, type PrismaClient, type SecretBox } from "@loopsmith/db";
import { deliveryIdParams, deliveryList, deliveryView, errorBody, goalIdParams, rotatedSecret } from "@loopsmith/schemas";
import { listDeliveries, redeliver, type WebhookConfig } from "@loopsmith/webhooks";
import { tenantOf } from "../auth";

export interface DeliveryDeps {
  prisma: PrismaClient;
  webhookQueue: Queue;
  webhooks: WebhookConfig;
  secretBox: SecretBox;
}

export const deliveryRoutes: FastifyPluginAsyncZod<{ deps: () => DeliveryDeps }> = async (app, opts) => {
  app.get(
    "/goals/:id/deliveries",
    {
      schema: {
        operationId: "listDeliveries",
        summary: "A goal's webhook deliveries, newest first, each with its attempt log",
        tags: ["webhooks"],
        params: goalIdParams,
        response: { 200: deliveryList, 401: errorBody, 404: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const tenant = tenantOf(req);
      const deliveries = await listDeliveries(opts.deps().prisma, { tenantId: tenant.id, goalId: req.params.id });
      if (!deliveries) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${req.params.id}.`);
      return { deliveries };
    },
  );

  app.post(
    "/deliveries/:id/redeliver",
    {
      schema: {
        operationId: "redeliverWebhook",
        summary: "Send a delivered or dead webhook again (same payload and webhook-id)",
        tags: ["webhooks"],
        params: deliveryIdParams,
        response: { 202: deliveryView, 401: errorBody, 404: errorBody, 409: errorBody, 429: errorBody },
      },
    },
    async (req, reply) => {
      const tenant = tenantOf(req);
      const deps = opts.deps();
      const view = await redeliver(deps.prisma, deps.webhookQueue, deps.webhooks, { tenantId: tenant.id, deliveryId: req.params.id });
      if (!view) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No delivery ${req.params.id}.`);
      return reply.status(202).send(view);
    },
  );

  app.post(
    "/webhook-secrets/rotate",
    {
      schema: {
        operationId: "rotateWebhookSecret",
        summary: "Issue a new webhook signing secret; the previous one keeps signing during the overlap",
        description:
          "Every delivery is signed with each valid secret (one `v1,` entry per secret in webhook-signature), so receivers can switch to the new secret at any point before previous_valid_until. At most 3 secrets are valid at once: rotating again inside the overlap retires the oldest immediately.",
        tags: ["webhooks"],
        response: { 200: rotatedSecret, 401: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const tenant = tenantOf(req);
      const deps = opts.deps();
      return rotateWebhookSecret(deps.prisma, tenant.id, { overlapSeconds: deps.webhooks.WEBHOOK_SECRET_OVERLAP_SECONDS, secretBox: deps.secretBox });
    },
  );
};
