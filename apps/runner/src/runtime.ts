// The runner's moving parts, wired from plain dependencies: used by main.ts and by tests that run a
// runner in-process against the real services.
import { Queue, type Worker } from "bullmq";
import type Docker from "dockerode";
import type { Redis } from "ioredis";
import { noopMetrics, publicError, type Logger, type Metrics } from "@loopsmith/core";
import { advanceGoal, readStepGoal, sealWebhookSecrets, type PrismaClient, type SecretBox } from "@loopsmith/db";
import { isState, transition, WORKING_STATES, type Move } from "@loopsmith/machine";
import type { LoopModel } from "@loopsmith/models";
import { addPoolGauge, createPromMetrics, type PromMetrics } from "@loopsmith/metrics";
import { removeLeftovers, type PooledSandbox, type Sandbox } from "@loopsmith/sandbox";
import { createCheckPool, type CheckPool } from "@loopsmith/verifier";
import { goalStepJob, QUEUES, runnerHeartbeatKey, runnerReadyKey, type GoalJob, type ModelSpec, type RunnerReady } from "@loopsmith/schemas";
import { createDeliveryWorker, createWebhookQueue, enqueueDelivery, enqueuePendingDeliveries } from "@loopsmith/webhooks";
import type { RunnerConfig } from "./config";
import { admitStep } from "./fairness";
import { instrumentSandbox } from "./instrument";
import { publishReceiptKey, revokeReceiptKeys, type ReceiptSigner } from "./receipt-key";
import { runStep } from "./step";
import { createGoalMaterial } from "./states/material";
import { createTickWorker, restoreJobSchedulers } from "./ticks";
import { createGoalWorker, type JobMeta } from "./worker";

export interface RunnerDeps {
  prisma: PrismaClient;
  /** Needs maxRetriesPerRequest: null (BullMQ blocking commands). */
  connection: Redis;
  prefix: string;
  concurrency: number;
  sandbox: Sandbox;
  /** Why the sandbox runs under its engine runtime (chooseOciRuntime's reason), shown in /readyz. */
  sandboxRuntimeReason?: string;
  /** Check threads; by default the runner starts its own (and stops them on close). */
  checks?: CheckPool;
  models: (spec: ModelSpec) => LoopModel;
  config: RunnerConfig;
  log: Logger;
  /** This runner's id: its sandbox containers carry it, its heartbeat key names it. */
  runnerId?: string;
  /** With a Docker client, the runner sweeps containers left by dead runners. */
  docker?: Docker;
  now?: () => Date;
  afterCommit?: (move: Move) => void;
  /** Signs verified goals' receipts; its public key is published when the runner starts. */
  receipts: ReceiptSigner;
  /** Opens the tenants' webhook signing secrets (encrypted at rest). */
  secretBox: SecretBox;
  /** Goal moves, sandbox runs, model calls, job latency and webhook deliveries (default: reported nowhere). */
  metrics?: Metrics;
  /** Recorded on the goals this runner's schedule ticks create (see loopsmithVersion in @loopsmith/core). */
  loopsmithVersion?: string;
}

export interface Runner {
  worker: Worker;
  deliveryWorker: Worker;
  queue: Queue;
  /**
   * Takes work. `sandboxVerified` (main.ts: the start-up self-check, which runs beside) gates what the
   * runner announces: its ready key, which the API reads as the sandbox's readiness, is set once it
   * resolves (at once without it: the caller vouches for the sandbox).
   */
  start(opts?: { sandboxVerified?: Promise<unknown> }): Promise<void>;
  /**
   * Starts refreshing this runner's heartbeat (start() does too). Call it before anything creates sandbox
   * containers: without a heartbeat, other runners' sweeps take them for a dead runner's leftovers.
   */
  heartbeat(): Promise<void>;
  /** One pass of housekeeping: dead runners' containers, goals whose step job was lost. */
  sweep(): Promise<{ containers: number; requeued: number; parked: number; deliveries: number; schedulers: number }>;
  /** Finishes the steps in hand (or, with force, releases them) and closes the queue handles. */
  close(force?: boolean): Promise<void>;
}

/** The runner's metrics (README "Metrics"): what createRunner reports, and its sandbox pool at scrape time. */
export function createRunnerMetrics(sandbox: Pick<PooledSandbox, "poolStats">): PromMetrics {
  const metrics = createPromMetrics({ app: "runner" });
  addPoolGauge(metrics, () => sandbox.poolStats());
  return metrics;
}

export function createRunner(deps: RunnerDeps): Runner {
  const { config, log, prisma } = deps;
  const runnerId = deps.runnerId ?? deps.prefix;
  const retry = { attempts: config.STEP_ATTEMPTS, backoffMs: config.STEP_BACKOFF_MS };
  const queue = new Queue(QUEUES.goals, { connection: deps.connection, prefix: deps.prefix });
  const webhookQueue = createWebhookQueue(deps.connection, deps.prefix);
  const scheduleQueue = new Queue(QUEUES.schedules, { connection: deps.connection, prefix: deps.prefix });
  const enqueue = async (job: GoalJob, delayMs?: number) => {
    await queue.add(...goalStepJob(job, retry, delayMs));
  };
  // One pool of check threads per runner (see the verifier's pool.ts), unless the caller brings its own.
  const checks = deps.checks ?? createCheckPool({ timeoutMs: config.CHECK_TIMEOUT_MS });
  const metrics = deps.metrics ?? noopMetrics;
  const stepDeps = {
    prisma,
    sandbox: deps.metrics ? instrumentSandbox(deps.sandbox, metrics) : deps.sandbox,
    metrics,
    checks,
    models: deps.models,
    log,
    config,
    now: deps.now ?? (() => new Date()),
    material: createGoalMaterial(prisma, config.RUNNER_GOAL_CACHE_MB * 1024 * 1024),
    enqueue,
    deliver: async (goalId: string) => {
      await enqueuePendingDeliveries(prisma, webhookQueue, config, goalId);
    },
    approvalTimeoutMs: config.APPROVAL_TIMEOUT_SECONDS * 1000,
    afterCommit: deps.afterCommit,
    receipts: deps.receipts,
  };

  /**
   * Infrastructure failures (Docker, Postgres, Redis, a provider's 429/5xx) throw, and BullMQ retries the
   * step with backoff; they never spend the goal's attempts. On the last try the goal is parked in
   * `errored`, the dead-letter list, instead of being dropped.
   *
   * A try whose runner died (a stall: BullMQ found its lock expired and handed the job on) counts like one
   * that threw, so that STEP_ATTEMPTS bounds the tries however they ended: BullMQ counts only the thrown
   * ones in attemptsMade, and with its own stall limit (1) it used to fail the job on the second stall
   * without calling us, leaving the goal to the sweep, which parked it after one counted try.
   */
  const tenantCap = { maxActive: config.TENANT_MAX_ACTIVE_GOALS, deferMs: config.TENANT_DEFER_MS };
  const handle = async (job: GoalJob, meta: JobMeta) => {
    const spent = meta.attemptsMade + meta.stalls;
    if (spent >= meta.maxAttempts) {
      // Every try ended with its runner gone: starting the step again could kill this runner too.
      const err = new Error(`the step's runner stopped before the step ended (killed, frozen or cut off from Redis) on ${meta.stalls} of ${spent} tries`);
      log.warn({ ...job, tries: spent, stalls: meta.stalls, of: meta.maxAttempts }, "goal step out of tries");
      await park(job, err, spent, meta.stalls);
      return { done: false, parked: true };
    }
    const tries = spent + 1;
    let deferred: { ahead: number; delayMs: number } | undefined;
    try {
      // With its tenant's count of open goals: below the cap, admission needs no count of its own.
      const began = performance.now();
      const beganAt = Date.now();
      const goal = await readStepGoal(prisma, job.goalId);
      const admission = await admitStep(prisma, job, goal, tenantCap, stepDeps.now());
      if (admission.run) {
        if (goal) metrics.stepPhase({ state: goal.state, phase: "read", seconds: (performance.now() - began) / 1000 });
        // Once per job, when its step really starts: a step deferred by tenant fairness counts its whole wait.
        // Up to the goal's read, which the step's own `read` phase counts.
        if (spent === 0) metrics.jobStarted({ queue: QUEUES.goals, waitSeconds: (beganAt - meta.dueAt) / 1000 });
        const outcome = await runStep(stepDeps, job, goal);
        if (!outcome.done) log.info({ ...job, outcome }, "goal step skipped");
        return outcome;
      }
      deferred = admission;
    } catch (err) {
      log.warn({ ...job, tries, stalls: meta.stalls, of: meta.maxAttempts, err }, "goal step failed");
      if (tries < meta.maxAttempts) throw err;
      await park(job, err, tries, meta.stalls);
      return { done: false, parked: true };
    }
    // Outside the try: deferring throws BullMQ's DelayedError, which is no failure of the step.
    log.debug({ ...job, ahead: deferred.ahead, delayMs: deferred.delayMs }, "goal step deferred: its tenant is at its cap of active goals");
    return meta.defer(deferred.delayMs);
  };

  const park = async (job: GoalJob, err: unknown, tries: number, stalls: number) => {
    const goal = await prisma.goal.findUnique({ where: { id: job.goalId } });
    if (!goal || goal.version !== job.version || !isState(goal.state) || !(WORKING_STATES as readonly string[]).includes(goal.state)) return;
    const move = transition(goal.state, { type: "ERRORED" });
    // The tape is the tenant's to read: a code and a short message there, the error itself in the log
    // (Prisma's and Docker's messages carry source paths, code frames and internal addresses).
    const shown = publicError(err);
    await advanceGoal(prisma, {
      goalId: goal.id,
      fromVersion: goal.version,
      from: move.from,
      to: move.to,
      detail: { error: shown.message, error_code: shown.code, tries, stalls },
    });
    log.error({ goalId: goal.id, state: goal.state, tries, stalls, err }, "goal parked in errored (dead-letter list)");
  };

  const worker = createGoalWorker({
    connection: deps.connection,
    prefix: deps.prefix,
    concurrency: deps.concurrency,
    log,
    handle,
    name: runnerId,
    lockDurationMs: config.WORKER_LOCK_MS,
    stalledIntervalMs: config.STALLED_INTERVAL_MS,
    maxStalledCount: config.STEP_ATTEMPTS,
  });
  const deliveryWorker = createDeliveryWorker({
    prisma,
    connection: deps.connection,
    prefix: deps.prefix,
    config,
    secretBox: deps.secretBox,
    log,
    metrics,
    autorun: false,
    // A delivery whose runner died is picked up as soon as a step is.
    lockDurationMs: config.WORKER_LOCK_MS,
    stalledIntervalMs: config.STALLED_INTERVAL_MS,
  });

  const tickWorker = createTickWorker({
    prisma,
    enqueue,
    now: stepDeps.now,
    loopsmithVersion: deps.loopsmithVersion,
    connection: deps.connection,
    prefix: deps.prefix,
    log,
    forget: (id) => scheduleQueue.removeJobScheduler(id),
    lockDurationMs: config.WORKER_LOCK_MS,
    stalledIntervalMs: config.STALLED_INTERVAL_MS,
  });

  const heartbeatKey = (id: string) => runnerHeartbeatKey(deps.prefix, id);
  // Set once the sandbox self-check passed (start()'s sandboxVerified): an API that reads readiness from the
  // runners takes that as the sandbox's readiness.
  let ready = false;
  const readyValue = JSON.stringify({ image: deps.sandbox.image, runtime: deps.sandbox.ociRuntime, reason: deps.sandboxRuntimeReason ?? null } satisfies RunnerReady);
  const beat = async () => {
    await deps.connection.set(heartbeatKey(runnerId), String(Date.now()), "PX", config.HEARTBEAT_TTL_MS).catch(() => undefined);
    if (ready) await deps.connection.set(runnerReadyKey(deps.prefix, runnerId), readyValue, "PX", config.HEARTBEAT_TTL_MS).catch(() => undefined);
  };

  const sweep = async () => {
    let containers = 0;
    if (deps.docker) {
      containers = await removeLeftovers(deps.docker, {
        // Heartbeats live under our prefix: only runners of this prefix can be judged dead from here.
        namespace: deps.prefix,
        isAlive: async (owner) => owner === runnerId || (await deps.connection.exists(heartbeatKey(owner))) === 1,
      });
      if (containers > 0) log.warn({ containers }, "removed sandbox containers of dead runners");
    }
    // A goal in a working state must have a step job; one whose job is gone (Redis lost it) is
    // rescheduled, one whose job failed outright is parked in errored. Recent goals are left alone: their
    // job may be a moment away.
    const quietSince = new Date(Date.now() - config.SWEEP_QUIET_MS);
    const goals = await prisma.goal.findMany({
      where: { queuePrefix: deps.prefix, state: { in: [...WORKING_STATES] }, updatedAt: { lt: quietSince } },
      select: { id: true, version: true },
      take: 100,
    });
    let requeued = 0;
    let parked = 0;
    for (const g of goals) {
      const job = await queue.getJob(goalStepJob({ goalId: g.id, version: g.version })[2].jobId);
      const state = job ? await job.getState() : "missing";
      if (state === "missing" || state === "unknown") {
        await enqueue({ goalId: g.id, version: g.version });
        requeued++;
      } else if (state === "failed") {
        await park({ goalId: g.id, version: g.version }, new Error(job?.failedReason ?? "step job failed"), (job?.attemptsMade ?? 0) + (job?.stalledCounter ?? 0), job?.stalledCounter ?? 0);
        parked++;
      }
    }
    // Likewise a webhook delivery never attempted: its enqueue after the commit may have failed (Redis down).
    // Enqueueing is idempotent (job id = delivery id), so one whose job exists is left as it is.
    const deliveries = await prisma.webhookDelivery.findMany({
      where: { status: "pending", attempts: 0, createdAt: { lt: quietSince }, goal: { queuePrefix: deps.prefix } },
      select: { id: true },
      take: 100,
    });
    for (const d of deliveries) await enqueueDelivery(webhookQueue, d.id, config);
    // And a schedule whose job scheduler Redis lost ticks again.
    const schedulers = await restoreJobSchedulers(prisma, scheduleQueue, deps.prefix);
    if (schedulers > 0) log.warn({ schedulers }, "restored schedules' job schedulers");
    return { containers, requeued, parked, deliveries: deliveries.length, schedulers };
  };

  const timers: NodeJS.Timeout[] = [];
  let stopped = false;
  let beating: NodeJS.Timeout | undefined;
  const heartbeat = async () => {
    await beat();
    if (beating) return;
    beating = setInterval(() => void beat(), Math.max(500, Math.floor(config.HEARTBEAT_TTL_MS / 3)));
    beating.unref();
    timers.push(beating);
  };
  return {
    worker,
    deliveryWorker,
    queue,
    heartbeat,
    async start(opts = {}) {
      // Independent of each other, so side by side: a runner's start-up is on every crash recovery's path.
      await Promise.all([
        (async () => {
          // Before any step can sign with it, so that every receipt names a key the API can serve.
          await publishReceiptKey(prisma, deps.receipts, stepDeps.now());
          const unknownKeys = await revokeReceiptKeys(prisma, config.RECEIPT_KEYS_REVOKED);
          if (unknownKeys.length > 0) log.warn({ keyIds: unknownKeys }, "RECEIPT_KEYS_REVOKED names receipt keys that were never published");
        })(),
        (async () => {
          // Secrets stored before encryption (or under a previous key) are sealed before the first delivery.
          const { sealed, unreadable } = await sealWebhookSecrets(prisma, deps.secretBox);
          if (sealed > 0) log.info({ sealed }, "sealed stored webhook secrets under the current key");
          if (unreadable > 0) log.error({ unreadable }, "webhook secrets sealed under a key that is not in WEBHOOK_SECRET_KEY: their tenants' deliveries fail");
        })(),
        // A pool the caller brought is the caller's to warm (main.ts warms its own beside the work).
        deps.checks ? undefined : checks.warm(),
        worker.waitUntilReady(),
        deliveryWorker.waitUntilReady(),
        tickWorker.waitUntilReady(),
        (async () => {
          const schedulers = await restoreJobSchedulers(prisma, scheduleQueue, deps.prefix);
          if (schedulers > 0) log.warn({ schedulers }, "restored schedules' job schedulers");
        })(),
      ]);
      if (!opts.sandboxVerified) ready = true;
      // A failed self-check is the caller's to report (main.ts exits); here it only keeps the key unset.
      opts.sandboxVerified?.then(
        () => {
          ready = true;
          void beat();
        },
        () => undefined,
      );
      await heartbeat();
      // Sweeping (which removes other runners' containers once their heartbeat lapsed) waits for this
      // runner's own self-check: a runner still starting does not judge its neighbours, and two runners
      // starting side by side on a starved machine do not take each other's self-check containers for a
      // dead runner's.
      const startSweeping = () => {
        const sweeping = setInterval(() => {
          sweep().catch((err: unknown) => log.warn({ err }, "sweep failed"));
        }, config.SWEEP_INTERVAL_MS);
        sweeping.unref();
        timers.push(sweeping);
      };
      if (opts.sandboxVerified) opts.sandboxVerified.then(
          () => {
            if (!stopped) startSweeping();
          },
          () => undefined,
        );
      else startSweeping();
      void worker.run();
      void deliveryWorker.run();
      void tickWorker.run();
    },
    sweep,
    async close(force = false) {
      stopped = true;
      for (const t of timers.splice(0)) clearInterval(t);
      beating = undefined;
      await Promise.all([worker.close(force), deliveryWorker.close(force), tickWorker.close(force)]);
      await deps.connection.del(heartbeatKey(runnerId), runnerReadyKey(deps.prefix, runnerId)).catch(() => undefined);
      await queue.close();
      await webhookQueue.close();
      await scheduleQueue.close();
      if (!deps.checks) await checks.close();
    },
  };
}
