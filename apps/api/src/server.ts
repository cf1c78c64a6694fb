import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { configOrExit, createLogger, loopsmithVersion } from "@loopsmith/core";
import { createPrisma, sealWebhookSecrets } from "@loopsmith/db";
import { goalStepJob, QUEUES } from "@loopsmith/schemas";
import { createWebhookQueue, loadWebhookSecretBox } from "@loopsmith/webhooks";
import { build } from "./app";
import { loadApiConfig } from "./config";
import { createApiMetrics } from "./metrics";
import { runnerReadiness } from "./readiness";

const config = configOrExit("loopsmith-api", () => loadApiConfig(process.env));
const log = createLogger({ name: "loopsmith-api", level: config.LOG_LEVEL });
const prisma = createPrisma(config.DATABASE_URL, { maxConnections: config.DATABASE_POOL_SIZE, connectionTimeoutMs: config.DATABASE_POOL_TIMEOUT_MS });
// Readiness must answer quickly when Redis is down, not queue commands until it returns.
const redis = new Redis(config.REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1 });
redis.on("error", (err) => log.debug({ err }, "redis connection error"));
redis.connect().catch(() => undefined);

// The producer side fails fast (no offline queue) so that a submit during a Redis outage is refused
// with a 503 rather than hanging.
const queueConnection = new Redis(config.REDIS_URL, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
queueConnection.on("error", (err) => log.debug({ err }, "redis (queue) connection error"));
const queue = new Queue(QUEUES.goals, { connection: queueConnection, prefix: config.QUEUE_PREFIX });
const webhookQueue = createWebhookQueue(queueConnection, config.QUEUE_PREFIX);
const scheduleQueue = new Queue(QUEUES.schedules, { connection: queueConnection, prefix: config.QUEUE_PREFIX });
const retry = { attempts: config.STEP_ATTEMPTS, backoffMs: config.STEP_BACKOFF_MS };

const metrics = createApiMetrics({ prisma, queues: [queue, webhookQueue], queuePrefix: config.QUEUE_PREFIX });

let secrets: ReturnType<typeof loadWebhookSecretBox>;
try {
  secrets = loadWebhookSecretBox(config);
} catch (err) {
  log.fatal({ err }, "cannot load the webhook secret key");
  process.exit(78);
}
log.info({ keyId: secrets.box.keyId, source: secrets.source, file: secrets.file }, "webhook secret key loaded");

const app = await build({
  logger: log,
  bodyLimit: config.BODY_LIMIT_BYTES,
  trustProxy: config.TRUST_PROXY,
  bodyTimeoutMs: config.BODY_TIMEOUT_MS,
  largeBodyConcurrency: config.LARGE_BODY_CONCURRENCY,
  maxInFlight: config.API_MAX_IN_FLIGHT,
  headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
  services: {
    prisma,
    queuePrefix: config.QUEUE_PREFIX,
    models: config,
    budgets: config,
    webhooks: config,
    webhookQueue,
    scheduleQueue,
    secretBox: secrets.box,
    enqueue: async (job, delayMs) => {
      await queue.add(...goalStepJob(job, retry, delayMs));
    },
    rateLimit:
      config.RATE_LIMIT_PER_MINUTE > 0 || config.AUTH_FAILURES_PER_MINUTE > 0
        ? { redis, perMinute: config.RATE_LIMIT_PER_MINUTE, authFailuresPerMinute: config.AUTH_FAILURES_PER_MINUTE }
        : undefined,
    adminApiKey: config.ADMIN_API_KEY,
    limits: config,
    loopsmithVersion: loopsmithVersion({ configured: config.LOOPSMITH_VERSION }),
  },
  readyCheckTimeoutMs: config.READY_CHECK_TIMEOUT_MS,
  metrics: { metrics, exposition: metrics, token: config.METRICS_TOKEN },
  dashboardQueues: [queue, webhookQueue, scheduleQueue],
  readiness: runnerReadiness({ prisma, redis, prefix: config.QUEUE_PREFIX }),
});

let closing = false;
async function shutdown(signal: string) {
  if (closing) return;
  closing = true;
  log.info({ signal }, "shutting down");
  await app.close();
  await Promise.allSettled([queue.close(), webhookQueue.close(), scheduleQueue.close(), prisma.$disconnect(), redis.quit()]);
  await queueConnection.quit().catch(() => undefined);
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

await app.listen({ host: config.HOST, port: config.PORT });

// Secrets stored before encryption (or under a previous key) are sealed now; the runner does the same,
// and reads upgrade any row still missed. Not fatal: the database may not be up yet (see /readyz).
sealWebhookSecrets(prisma, secrets.box).then(
  ({ sealed, unreadable }) => {
    if (sealed > 0) log.info({ sealed }, "sealed stored webhook secrets under the current key");
    if (unreadable > 0) log.error({ unreadable }, "webhook secrets sealed under a key that is not in WEBHOOK_SECRET_KEY: their tenants' deliveries fail");
  },
  (err: unknown) => log.warn({ err }, "could not seal stored webhook secrets yet; they are sealed as they are read"),
);
