// A LoopSmith on the real services, in this test process: the Fastify app (requests go through
// app.inject, the full HTTP pipeline without a socket) and a runner on a random queue prefix with the
// real Docker sandbox. Only the model is scripted (or a local fake OpenAI-compatible server).
import { randomBytes } from "node:crypto";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { expect, inject } from "vitest";
import { z } from "zod";
import { createLogger, loopsmithVersion, parseConfig } from "@loopsmith/core";
import { createPrisma, createTenant, type CreatedTenant } from "@loopsmith/db";
import { createModel, modelConfigSchema, type ModelConfig } from "@loopsmith/models";
import { createDockerSandbox, dockerClient, NAMESPACE_LABEL, nodeSandboxImageTag, routeSandbox, RUNNER_LABEL, sandboxImageTag, sandboxPurpose } from "@loopsmith/sandbox";
import { budgetConfigSchema, goalStepJob, QUEUES, stepRetryConfigSchema, type GoalJob, type GoalView } from "@loopsmith/schemas";
import { createWebhookQueue, loadWebhookSecretBox, webhookConfigSchema } from "@loopsmith/webhooks";
import { build } from "../../apps/api/src/app";
import { apiLimitsConfigSchema, trustProxySchema } from "../../apps/api/src/config";
import { createApiMetrics } from "../../apps/api/src/metrics";
import { runnerConfigSchema, sandboxPoolOptions } from "../../apps/runner/src/config";
import { loadReceiptSigner } from "../../apps/runner/src/receipt-key";
import { createRunner, createRunnerMetrics, type Runner } from "../../apps/runner/src/runtime";
import { requireRuntimes, SUITE_RUNTIME } from "../../packages/sandbox/test/support";
import { DATABASE_URL, randomPrefix, REDIS_URL, SHARED_RUNNER_PREFIX } from "./services";

/** States after which a goal does not move by itself. */
export const RESTING_STATES = ["verified", "failed", "cancelled", "errored", "awaiting_approval"];


export type { GoalView };

export interface LoopOptions {
    /** Settings of the API and the runner (model, budgets, webhooks, step retries...), as env strings. */
    env?: Record<string, string>;
    /** The runner's settings, when they differ from the API's. */
    runnerEnv?: Record<string, string>;
    runner?: boolean;
    prefix?: string;
    /** The API's largest accepted request body (default: build()'s). */
    bodyLimit?: number;
    /** The runner's sandbox image (default: the one setup.sh builds). */
    sandboxImage?: string;
    /** The Docker engine the runner's sandbox talks to, as DOCKER_HOST (default: the local socket). */
    dockerHost?: string;
    /** The API's request body deadline and large-body slots (default: build()'s). */
    bodyTimeoutMs?: number;
    largeBodyConcurrency?: number;
    /** With a token: the API serves /metrics to it and the runner reports (see loop.metrics). */
    metricsToken?: string;
    /** Serve the queue dashboard (/admin/queues) for the loop's queues. */
    dashboard?: boolean;
    /** The pool's interpreters pre-import numpy and pandas, as a runner's do by default. */
    preimport?: boolean;
    /** The engine runtime of the loop's sandboxes (default: the suite's, runc unless SANDBOX_RUNTIME says). */
    ociRuntime?: string;
  /**
   * Share the loop (its API, runner, sandbox pool and queue prefix) with the other files of this test
   * worker that ask for the same options: each file gets a tenant of its own, and its close() waits
   * until the goals it left have rested (cancelling its own) instead of tearing the loop down.
   */
  shared?: boolean;
}

/** Each engine runtime's check, once per process. */
const runtimeChecked: Record<string, Promise<void>> = {};

async function createLoop(opts: LoopOptions = {}) {
  const env: Record<string, string> = {
    LOOPSMITH_SCRIPTED_MODEL: "true",
    MODEL_HTTP_RETRIES: "0",
    // Tests run webhook receivers on loopback.
    WEBHOOK_ALLOW_CIDRS: "127.0.0.1/32",
    WEBHOOK_RETRY_SCHEDULE: "100ms",
    RATE_LIMIT_PER_MINUTE: "0",
    AUTH_FAILURES_PER_MINUTE: "0",
    // Two idle containers, not RUNNER_CONCURRENCY's one: an attempt's program and its checks' own runs
    // (cases, test suites) each take one, and with one the second went cold while the first's replacement
    // was still starting (function-cases: 111 s against 149 s with one, same load).
    SANDBOX_POOL_SIZE: "2",
    // Pristine interpreters unless a file asks for the production pool (preimport): a container whose
    // interpreter imports numpy and pandas while it waits costs about 0.7 s more CPU, paid by every check
    // run and probe too, on a CPU-bound suite (function-cases: 56 → 41 CPU-s). The hostile programs, the
    // closed loop and the pandas goals keep the production path;
    // packages/sandbox/test/pool.test.ts holds pre-import to python3 <file>'s contract.
    SANDBOX_PREIMPORT: opts.preimport ? "numpy,pandas" : "none",
    ...opts.env,
  };
  const runnerEnvAll = { ...env, ...opts.runnerEnv };
  const models: ModelConfig = parseConfig(modelConfigSchema, env);
  const budgets = parseConfig(budgetConfigSchema, env);
  const webhooks = parseConfig(webhookConfigSchema, env);
  // The checkout's key file unless env sets WEBHOOK_SECRET_KEY (see testSecretBox).
  const secretBox = loadWebhookSecretBox(webhooks).box;
  const retry = parseConfig(stepRetryConfigSchema, env);
  const runnerConfig = parseConfig(runnerConfigSchema, runnerEnvAll);
  const prefix = opts.prefix ?? randomPrefix("loop");
  const prisma = createPrisma(DATABASE_URL);
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUES.goals, { connection, prefix });
  const webhookQueue = createWebhookQueue(connection, prefix);
  const scheduleQueue = new Queue(QUEUES.schedules, { connection, prefix });
  const log = createLogger({ name: "test", level: process.env.TEST_LOG_LEVEL ?? "silent" });
  // Wired as server.ts and main.ts wire them; the goal counts uncached, so a test sees each move at once.
  const apiMetrics = opts.metricsToken ? createApiMetrics({ prisma, queues: [queue, webhookQueue], queuePrefix: prefix, goalCacheMs: 0 }) : undefined;
  const rateLimitPerMinute = Number(env.RATE_LIMIT_PER_MINUTE);
  const authFailuresPerMinute = Number(env.AUTH_FAILURES_PER_MINUTE);
  const app = await build({
    logger: false,
    bodyLimit: opts.bodyLimit,
    trustProxy: parseConfig(z.object({ TRUST_PROXY: trustProxySchema }), env).TRUST_PROXY,
    bodyTimeoutMs: opts.bodyTimeoutMs,
    largeBodyConcurrency: opts.largeBodyConcurrency,
    readiness: { postgres: async () => "", redis: async () => "", docker: async () => "", sandbox_image: async () => "" },
    metrics: apiMetrics && { metrics: apiMetrics, exposition: apiMetrics, token: opts.metricsToken },
    dashboardQueues: opts.dashboard ? [queue, webhookQueue] : undefined,
    services: {
      prisma,
      queuePrefix: prefix,
      models,
      budgets,
      webhooks,
      webhookQueue,
      scheduleQueue,
      secretBox,
      enqueue: async (job: GoalJob, delayMs?: number) => {
        await queue.add(...goalStepJob(job, { attempts: retry.STEP_ATTEMPTS, backoffMs: retry.STEP_BACKOFF_MS }, delayMs));
      },
      rateLimit:
        rateLimitPerMinute > 0 || authFailuresPerMinute > 0 ? { redis: connection, perMinute: rateLimitPerMinute, authFailuresPerMinute } : undefined,
      adminApiKey: env.ADMIN_API_KEY,
      limits: parseConfig(apiLimitsConfigSchema, env),
      loopsmithVersion: loopsmithVersion({ configured: env.LOOPSMITH_VERSION }),
    },
  });
  const tenant: CreatedTenant = await createTenant(prisma, { name: `${prefix}-tenant`, secretBox });
  // A runtime the engine lacks fails here, naming the fix, not at the first program's container create.
  const ociRuntime = opts.ociRuntime ?? SUITE_RUNTIME;
  if (opts.dockerHost === undefined) await (runtimeChecked[ociRuntime] ??= requireRuntimes([ociRuntime]));
  // Pooled as a runner's (issue 12): every goal-level test runs its programs on the pooled path.
  // issue 14: and JavaScript/TypeScript goals in the Node image, cold, as a runner's.
  const sandbox = routeSandbox(
    createDockerSandbox({
      docker: dockerClient(opts.dockerHost),
      image: opts.sandboxImage ?? sandboxImageTag(),
      runnerId: prefix,
      log,
      pool: sandboxPoolOptions(runnerConfig),
      ociRuntime,
    }),
    createDockerSandbox({ docker: dockerClient(opts.dockerHost), image: nodeSandboxImageTag(), runnerId: prefix, log, runtime: "node", ociRuntime }),
  );
  const runnerMetrics = opts.metricsToken ? createRunnerMetrics(sandbox) : undefined;
  // The pool fills when the loop's runner starts: a loop without one (an API for runner processes or for
  // requests only) would warm containers nobody takes. Ready before the first goal, so that its programs
  // run on the pooled path (not the cold fallback). A loop aimed at a missing image or engine (to test how
  // that fails) cannot warm a pool: its runs take the cold path and fail there, as a runner's would.
  const broken = opts.sandboxImage !== undefined || opts.dockerHost !== undefined;
  let poolStarted = false;
  const startPool = async () => {
    if (poolStarted) return;
    poolStarted = true;
    sandbox.start();
    if (sandbox.poolStats().target > 0 && !broken) await sandbox.warm({ timeoutMs: 120_000 });
  };
  let runner: Runner | undefined;
  /** `start` as Runner.start takes it (e.g. a sandbox self-check that failed). */
  const startRunner = async (start?: Parameters<Runner["start"]>[0]) => {
    await startPool();
    runner = createRunner({
      prisma,
      connection,
      prefix,
      concurrency: 1,
      sandbox,
      models: (spec) => createModel(spec, runnerConfig),
      config: runnerConfig,
      log,
      receipts: loadReceiptSigner(runnerConfig),
      secretBox: loadWebhookSecretBox(runnerConfig).box,
      metrics: runnerMetrics,
    });
    await runner.start(start);
    return runner;
  };
  if (opts.runner !== false) await startRunner();

  /** The request helpers of one tenant of this loop. */
  const forTenant = (tenant: CreatedTenant) => {
    /** Any request, as the loop's tenant unless another key (or none: null) is given. */
    const request = async (
      method: "GET" | "POST" | "PUT" | "DELETE" | "PATCH",
      url: string,
      o: { body?: unknown; headers?: Record<string, string>; key?: string | null } = {},
    ) => {
      const key = o.key === undefined ? tenant.api_key : o.key;
      const res = await app.inject({
        method,
        url,
        payload: o.body as object | undefined,
        headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...o.headers },
      });
      let body: unknown = res.body;
      try {
        body = res.json();
      } catch {
        // not JSON: keep the text
      }
      return { status: res.statusCode, body: body as Record<string, unknown>, headers: res.headers };
    };
    const post = async (body: unknown, o: { headers?: Record<string, string>; key?: string | null } = {}) => request("POST", "/goals", { body, ...o });
    const get = async (id: string, o: { key?: string | null } = {}) => {
      const res = await request("GET", `/goals/${id}`, o);
      return { status: res.status, body: res.body as unknown as GoalView };
    };
    /** Submits a goal (expecting 202) and polls until it ends. */
    const run = async (body: unknown, timeoutMs = 120_000): Promise<GoalView> => {
      const res = await post(body);
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      return waitForEnd(res.body.id as string, timeoutMs);
    };
    /** Polls until the goal rests (a terminal state, errored or awaiting approval) or reaches one of `until`. */
    const waitForEnd = async (id: string, timeoutMs = 120_000, until: string[] = RESTING_STATES): Promise<GoalView> => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        // The goal's state alone while it moves (one indexed row), the whole view through the API once it
        // rests: a GoalView per poll cost ~10 ms of CPU, and the suite is CPU-bound.
        const row = await prisma.goal.findUnique({ where: { id }, select: { state: true } }).catch(() => null);
        if (row === null || until.includes(row.state) || Date.now() > deadline) {
          const { body } = await get(id);
          if (until.includes(body.state)) return body;
          if (Date.now() > deadline) throw new Error(`goal ${id} still in ${body.state} after ${timeoutMs} ms; tape: ${body.tape}`);
          if (row === null) throw new Error(`goal ${id} is not there: ${JSON.stringify(body)}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    return { tenant, request, post, get, run, waitForEnd };
  };
  const close = async () => {
    await runner?.close();
    await sandbox.close();
    // Runner processes a file started on this prefix and killed leave their containers behind (a self-check's
    // never-ending probe runs until some runner's sweep finds it overdue, a core's worth of CPU meanwhile).
    // The engine itself, not opts.dockerHost: this is the harness's clean-up, not a call the runner makes (a
    // socket proxy in front refuses a listing by namespace, and its test counts refusals).
    const docker = dockerClient();
    const left = await docker.listContainers({ all: true, filters: { label: [`${NAMESPACE_LABEL}=${prefix}`] } }).catch(() => []);
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    await app.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await webhookQueue.obliterate({ force: true }).catch(() => undefined);
    await scheduleQueue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await webhookQueue.close();
    await scheduleQueue.close();
    await connection.quit();
    await prisma.$disconnect();
  };
  const metrics = { api: apiMetrics, runner: runnerMetrics };
  return { app, prisma, prefix, queue, webhookQueue, scheduleQueue, secretBox, ...forTenant(tenant), withTenant: forTenant, startRunner, close, runner: () => runner, sandbox, metrics };
}
export type Loop = Awaited<ReturnType<typeof createLoop>>;

/** A LoopSmith on the real services, in this test process (see LoopOptions.shared). */
export async function startLoop(opts: LoopOptions = {}): Promise<Loop> {
  if (!opts.shared) return createLoop(opts);
  const { shared: _, ...own } = opts;
  const key = JSON.stringify(own);
  let core = sharedLoops.get(key);
  if (!core) {
    // lstest-shared-<run>-<loop>: the suite's teardown removes what its own run's loops leave behind.
    core = createLoop({ ...own, prefix: `${SHARED_RUNNER_PREFIX}${inject("sharedLoopRun")}-${randomBytes(4).toString("hex")}` });
    sharedLoops.set(key, core);
    core.catch(() => sharedLoops.delete(key));
  }
  const loop = await core;
  const tenant = await createTenant(loop.prisma, { name: `${loop.prefix}-tenant`, secretBox: loop.secretBox });
  const mine = loop.withTenant(tenant);
  const startRunner = (): Promise<never> => {
    throw new Error("a shared loop's runner is started once, by the loop itself: a file that starts runners asks for a loop of its own (startLoop without shared)");
  };
  return { ...loop, ...mine, startRunner, close: () => settleShared(loop, mine) };
}

// The files of a worker share its module graph (isolate: false), so this map outlives a file. The loops
// in it are never closed: the worker ends with the run, and the suite's teardown (tests/support/build.ts)
// removes their containers, which carry SHARED_RUNNER_PREFIX in their runner label.
const sharedLoops = new Map<string, Promise<Loop>>();

/**
 * The end of one file's use of a shared loop: its own goals that still move are cancelled, and every goal
 * of the loop's tenants has rested and every container run has been removed before the next file starts,
 * so that nothing of this file runs (or is counted) in the next one's time.
 */
async function settleShared(loop: Loop, mine: ReturnType<Loop["withTenant"]>): Promise<void> {
  const moving = () =>
    loop.prisma.goal.findMany({ where: { tenant: { name: { startsWith: loop.prefix } }, state: { notIn: RESTING_STATES } }, select: { id: true, tenantId: true } });
  for (const g of await moving()) if (g.tenantId === mine.tenant.tenant_id) await mine.request("POST", `/goals/${g.id}/cancel`);
  const deadline = Date.now() + 120_000;
  for (let left = await moving(); left.length > 0; left = await moving()) {
    if (Date.now() > deadline) throw new Error(`a shared loop's goals still move 120 s after their file ended: ${left.map((g) => g.id).join(", ")}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  await loop.sandbox.settled();
}

/**
 * A goal whose (scripted) program is `source`: one attempt, an inspector that never verifies. For hostile
 * programs: the loop must contain them and write what happened on the tape.
 */
export function hostileGoal(source: string, opts: { timeoutSeconds?: number; language?: "python" | "javascript" } = {}) {
  // issue 14: the same hostile programs in JavaScript run in the Node image.
  const language = opts.language ?? "python";
  const script = {
    plan: { objective: "hostile program", approach: ["misbehave"], output_contract: "anything", checks: [] },
    generate: { filename: language === "python" ? "analysis.py" : "hostile.js", language, source, notes: "" },
    inspect: [{ verified: false, failing_checks: [], diagnosis: "hostile", fix_hint: "" }],
    refine: [],
  };
  return {
    objective: "Run a hostile program.",
    language,
    inputs: [{ name: "data.csv", text: "a,b\n1,2\n" }],
    max_attempts: 1,
    execution_timeout_seconds: opts.timeoutSeconds ?? 20,
    model: { provider: "scripted", script },
  };
}

/** The tape row that left EXECUTE: the evidence of the one run. */
export function executionEvidence(goal: GoalView) {
  const row = goal.transitions.find((t) => t.from === "execute");
  if (!row) throw new Error(`no execution on the tape: ${goal.tape}`);
  return row.detail as {
    exit_code: number;
    timed_out: boolean;
    oom_killed: boolean;
    duration_ms: number;
    stderr_tail: string;
    artifacts: { name: string; size: number }[];
    sandbox_runtime: string;
    artifact_errors: string[];
    stdout_clipped_bytes: number;
    stderr_clipped_bytes: number;
    notes: string[];
  };
}

/**
 * Programs the engine ran for `runnerId` since `sinceMs`, from its event log (so removed containers count
 * too): containers created for a program, and pool containers renamed for one when handed out (issue 12:
 * a pool container's labels were fixed before its purpose was known; its name carries it, see sandboxPurpose).
 * The goal's programs only, not the evaluator's probes (issue 11) nor the checks' own runs.
 */
export async function sandboxRunsSince(runnerId: string, sinceMs: number): Promise<number> {
  const stream = await dockerClient().getEvents({
    since: Number((sinceMs / 1000).toFixed(3)),
    until: Number((Date.now() / 1000).toFixed(3)),
    filters: { type: ["container"], event: ["create", "rename"], label: [`${RUNNER_LABEL}=${runnerId}`] },
  });
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks)
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { Actor?: { Attributes?: Record<string, string> } })
    .filter((e) => sandboxPurpose({ Names: [e.Actor?.Attributes?.name ?? ""], Labels: e.Actor?.Attributes }) === "program").length;
}

/**
 * issue 16: a hostile program's goal (hostileGoal: one attempt, an inspector that never verifies) ends
 * once and on its merits: the program ran exactly once (one container created since `sinceMs`; the
 * hostile plan has no checks that run code in containers of their own), one execution is recorded, the
 * goal is `failed` for budget_attempts (not `errored`), and no container of the loop's runner is left behind.
 */
export async function expectOneOutcome(loop: Loop, goal: GoalView, sinceMs: number): Promise<void> {
  expect(goal.state, goal.tape).toBe("failed");
  expect(goal.failure_reason).toBe("budget_attempts");
  expect(goal.tape).toBe("plan → generate → execute → inspect → failed");
  expect(goal.attempts).toBe(1);
  expect(goal.executions).toHaveLength(1);
  expect(await sandboxRunsSince(loop.prefix, sinceMs)).toBe(1);
  // The pool's idle containers aside (they never ran anything), and once the run's container is removed.
  await loop.sandbox.settled();
  const left = await dockerClient().listContainers({ all: true, filters: { label: [`${RUNNER_LABEL}=${loop.prefix}`] } });
  expect(left.filter((c) => sandboxPurpose(c) !== "idle")).toEqual([]);
}
