import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { configOrExit, createLogger, loopsmithVersion } from "@loopsmith/core";
import { createPrisma } from "@loopsmith/db";
import { startMetricsServer, type MetricsServer } from "@loopsmith/metrics";
import type { Move } from "@loopsmith/machine";
import { createModel } from "@loopsmith/models";
import {
  chooseOciRuntime,
  createDockerSandbox,
  dockerClient,
  engineRuntimes,
  imageExists,
  nodeSandboxImageTag,
  removeLeftovers,
  routeSandbox,
  sandboxImageTag,
  type OciRuntimeChoice,
  type RoutedSandbox,
} from "@loopsmith/sandbox";
import { createCheckPool } from "@loopsmith/verifier";
import { loadWebhookSecretBox } from "@loopsmith/webhooks";
import { loadRunnerConfig, sandboxPoolOptions } from "./config";
import { loadReceiptSigner } from "./receipt-key";
import { createRunner, createRunnerMetrics } from "./runtime";
import { sandboxSelfCheck } from "./self-check";
import { endlessProbe } from "./states/self-test";

/** RUNNER_FAULT=after-commit:<state> (tests only): die the hard way between a commit and the enqueue. */
function faultInjection(fault: string | undefined): ((move: Move) => void) | undefined {
  if (!fault) return undefined;
  const from = fault.slice("after-commit:".length);
  return (move) => {
    if (move.from !== from) return;
    log.warn({ move }, "RUNNER_FAULT: SIGKILL after commit");
    process.kill(process.pid, "SIGKILL");
  };
}

const config = configOrExit("loopsmith-runner", () => loadRunnerConfig(process.env));
const runnerId = config.RUNNER_ID ?? `runner-${randomBytes(4).toString("hex")}`;
const log = createLogger({ name: "loopsmith-runner", level: config.LOG_LEVEL }).child({ runnerId });
const docker = dockerClient(config.DOCKER_HOST);
const image = config.SANDBOX_IMAGE ?? sandboxImageTag();
// The engine runtime, said once here and in /readyz: gVisor wherever the engine offers it (SANDBOX_RUNTIME=auto).
let ociRuntime: OciRuntimeChoice;
try {
  const engine = await engineRuntimes(docker);
  try {
    ociRuntime = chooseOciRuntime(config.SANDBOX_RUNTIME, engine);
  } catch (err) {
    log.fatal({ err }, "cannot use the sandbox runtime (SANDBOX_RUNTIME)");
    process.exit(78);
  }
} catch (err) {
  log.fatal({ err }, "start-up failed: the Docker engine does not answer");
  process.exit(1);
}
log.info({ runtime: ociRuntime.runtime, reason: ociRuntime.reason }, `sandboxes run under ${ociRuntime.runtime}`);
// Namespaced by the queue prefix: runners of other prefixes sharing this Docker engine leave our containers be.
// Its pool starts filling after the leftover sweep below (which would take the new containers for ours
// from a previous life) and is drained on shutdown.
// issue 14: JavaScript and TypeScript goals run in the Node image, cold (the pool holds Python containers only).
const sandbox = routeSandbox(
  createDockerSandbox({ docker, image, runnerId, namespace: config.QUEUE_PREFIX, log, pool: sandboxPoolOptions(config), ociRuntime: ociRuntime.runtime }),
  createDockerSandbox({
    docker,
    image: config.SANDBOX_NODE_IMAGE ?? nodeSandboxImageTag(),
    runnerId,
    namespace: config.QUEUE_PREFIX,
    log,
    runtime: "node",
    ociRuntime: ociRuntime.runtime,
  }),
);

const metrics = createRunnerMetrics(sandbox);

// The runner takes work as soon as the engine answers and the image is there; the self-check (pandas
// imports, a never-ending program is killed) runs beside, and no goal's program starts before it passed.
let vouch!: (v: unknown) => void;
let refuse!: (err: unknown) => void;
const sandboxVerified = new Promise((resolve, reject) => {
  vouch = resolve;
  refuse = reject;
});
sandboxVerified.catch(() => undefined);
const gated: RoutedSandbox = {
  ...sandbox,
  async run(req) {
    await sandboxVerified;
    return sandbox.run(req);
  },
};

// BullMQ workers need maxRetriesPerRequest: null so that blocking commands survive reconnects.
const connection = new Redis(config.REDIS_URL, { maxRetriesPerRequest: null });
connection.on("error", (err) => log.warn({ err: err.message }, "redis connection error"));

const prisma = createPrisma(config.DATABASE_URL, { maxConnections: config.RUNNER_CONCURRENCY + 2 });
let receipts: ReturnType<typeof loadReceiptSigner>;
try {
  receipts = loadReceiptSigner(config);
} catch (err) {
  log.fatal({ err }, "cannot load the receipt signing key");
  process.exit(78);
}
log.info({ keyId: receipts.keyId, source: receipts.source }, "receipt signing key loaded");
let secrets: ReturnType<typeof loadWebhookSecretBox>;
try {
  secrets = loadWebhookSecretBox(config);
} catch (err) {
  log.fatal({ err }, "cannot load the webhook secret key");
  process.exit(78);
}
log.info({ keyId: secrets.box.keyId, source: secrets.source, file: secrets.file }, "webhook secret key loaded");
// The check threads start beside the work, like the sandbox self-check (the first check is an INSPECT
// away, and a check asked for meanwhile starts a thread of its own); one that cannot start fails the
// start-up as the self-check does. Started here, a second or more of loading no longer delays "ready".
const checks = createCheckPool({ timeoutMs: config.CHECK_TIMEOUT_MS });
const checksWarm = checks.warm();
checksWarm.catch(() => undefined);

const runner = createRunner({
  prisma,
  checks,
  connection,
  prefix: config.QUEUE_PREFIX,
  concurrency: config.RUNNER_CONCURRENCY,
  sandbox: gated,
  sandboxRuntimeReason: ociRuntime.reason,
  models: (spec) => createModel(spec, config),
  config,
  log,
  runnerId,
  docker,
  afterCommit: faultInjection(config.RUNNER_FAULT),
  receipts,
  secretBox: secrets.box,
  metrics,
  loopsmithVersion: loopsmithVersion({ configured: config.LOOPSMITH_VERSION }),
});
const worker = runner.worker;

try {
  // Alive before the self-check's container exists, so that no other runner's sweep removes it.
  await runner.heartbeat();
  // Before taking work: a runner without its image (a deployment that forgot to build it) would take jobs only
  // to die with them, and a supervisor restarting it would spend the steps' tries.
  if (!(await imageExists(docker, image))) throw new Error(`sandbox image ${image} is missing: run npm run sandbox:image`);
} catch (err) {
  log.fatal({ err }, "start-up failed");
  process.exit(1);
}

// Beside taking work (below): the leftover sweep, the pool's start and then the self-check.
// No program runs before the self-check passed (the gated sandbox), so a job taken meanwhile waits; on a
// restart after a crash, removing the dead life's containers (seconds under gVisor) no longer holds up the
// runner's readiness. A failure exits having run nothing; a step in hand is redelivered once its lock lapses.
void (async () => {
  // Sandbox containers carry their runner's label. Ours from a previous life are leftovers; another
  // runner's are leftovers when that runner's heartbeat expired (it died) or the container outlived its
  // deadline. The periodic sweep repeats this while the runner lives. The pool starts after it: the sweep of
  // our own label would take the pool's new containers for a previous life's.
  const removed =
    (await removeLeftovers(docker, { runnerId })) +
    (await removeLeftovers(docker, {
      namespace: config.QUEUE_PREFIX,
      isAlive: async (owner) => (await connection.exists(`${config.QUEUE_PREFIX}:runner:${owner}`)) === 1,
    }));
  if (removed > 0) log.warn({ removed }, "removed leftover sandbox containers");
  sandbox.start();
  // Side by side: the image imports pandas, (the evaluator self-test's never-ending probe) the sandbox
  // kills a program at its time limit, and the check threads have started.
  const [check, probe] = await Promise.all([sandboxSelfCheck(sandbox, config.SELF_CHECK_TIMEOUT_MS), endlessProbe(sandbox), checksWarm]);
  log.info({ image, ...check }, "sandbox self-check passed");
  const endless = probe.run;
  if (!endless.timedOut) throw new Error(`sandbox self-check failed: a never-ending program was not killed at its time limit (exit ${endless.exitCode})`);
  log.info({ durationMs: endless.durationMs }, "sandbox kills a never-ending program at its time limit");
  vouch(check);
})().catch((err: unknown) => {
  refuse(err);
  log.fatal({ err }, "start-up failed");
  process.exit(1);
});

let metricsServer: MetricsServer | undefined;
// Up once the self-check passed (compose's healthcheck asks it), without holding up the work meanwhile.
const serveMetrics = async () => {
  if (config.RUNNER_METRICS_PORT <= 0) return;
  try {
    metricsServer = await startMetricsServer({
      exposition: metrics,
      host: config.RUNNER_METRICS_HOST,
      port: config.RUNNER_METRICS_PORT,
      token: config.METRICS_TOKEN,
      onError: (err) => log.warn({ err }, "metrics collection failed"),
    });
    log.info({ host: config.RUNNER_METRICS_HOST, port: metricsServer.port, token: config.METRICS_TOKEN !== undefined }, "metrics at /metrics");
  } catch (err) {
    log.fatal({ err }, "cannot listen for /metrics (RUNNER_METRICS_PORT)");
    process.exit(1);
  }
};
void sandboxVerified.then(serveMetrics, () => undefined);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info({ signal, graceMs: config.SHUTDOWN_GRACE_MS }, "stopping: finishing the job in hand");
  const timer = setTimeout(() => {
    // Past the grace period, release the job: its lock lapses and another runner picks it up.
    log.warn("grace period over: releasing active jobs");
    void runner
      .close(true)
      .then(() => Promise.all([sandbox.close(), checks.close()]))
      .finally(() => process.exit(0));
  }, config.SHUTDOWN_GRACE_MS);
  await runner.close();
  // No idle container outlives the runner (the leftover sweep would find them, but later).
  await Promise.all([sandbox.close(), checks.close()]);
  clearTimeout(timer);
  await Promise.allSettled([connection.quit(), prisma.$disconnect(), metricsServer?.close()]);
  log.info("stopped");
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown("SIGTERM"));
process.on("SIGINT", () => void shutdown("SIGINT"));

await runner.start({ sandboxVerified });
log.info({ queue: worker.name, prefix: config.QUEUE_PREFIX, concurrency: config.RUNNER_CONCURRENCY }, "runner ready");
