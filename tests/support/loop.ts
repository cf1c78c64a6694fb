// A LoopSmith on the real services, in this test process: the Fastify app (requests go through
// app.inject, the full HTTP pipeline without a socket) and a runner on a random queue prefix with the
// real Docker sandbox. Only the model is scripted (or a local fake OpenAI-compatible server).
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { expect } from "vitest";
import { createLogger, parseConfig } from "@loopsmith/core";
import { createPrisma } from "@loopsmith/db";
import { createModel, modelConfigSchema, type ModelConfig } from "@loopsmith/models";
import { createDockerSandbox, dockerClient, sandboxImageTag } from "@loopsmith/sandbox";
import { goalStepJob, QUEUES, type GoalJob, type GoalView } from "@loopsmith/schemas";
import { build } from "../../apps/api/src/app";
import { createRunner, type Runner } from "../../apps/runner/src/runtime";
import { DATABASE_URL, randomPrefix, REDIS_URL } from "./services";


export type { GoalView };

export async function startLoop(
  opts: {
    /** Model settings of the API and the runner. */
    env?: Record<string, string>;
    /** The runner's model settings, when they differ from the API's. */
    runnerEnv?: Record<string, string>;
    runner?: boolean;
    prefix?: string;
  } = {},
) {
  const models: ModelConfig = parseConfig(modelConfigSchema, { LOOPSMITH_SCRIPTED_MODEL: "true", MODEL_HTTP_RETRIES: "0", ...opts.env });
  const runnerModels: ModelConfig = opts.runnerEnv
    ? parseConfig(modelConfigSchema, { LOOPSMITH_SCRIPTED_MODEL: "true", MODEL_HTTP_RETRIES: "0", ...opts.env, ...opts.runnerEnv })
    : models;
  const prefix = opts.prefix ?? randomPrefix("loop");
  const prisma = createPrisma(DATABASE_URL);
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUES.goals, { connection, prefix });
  const log = createLogger({ name: "test", level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const app = await build({
    logger: false,
    readiness: { postgres: async () => "", redis: async () => "", docker: async () => "", sandbox_image: async () => "" },
    goals: {
      prisma,
      models,
      enqueue: async (job: GoalJob) => {
        await queue.add(...goalStepJob(job));
      },
    },
  });
  const sandbox = createDockerSandbox({ docker: dockerClient(), image: sandboxImageTag(), runnerId: prefix, log });
  let runner: Runner | undefined;
  const startRunner = async () => {
    runner = createRunner({ prisma, connection, prefix, concurrency: 1, sandbox, models: (spec) => createModel(spec, runnerModels), log });
    await runner.start();
    return runner;
  };
  if (opts.runner !== false) await startRunner();

  const post = async (body: unknown) => {
    const res = await app.inject({ method: "POST", url: "/goals", payload: body as object });
    return { status: res.statusCode, body: res.json() as Record<string, unknown> };
  };
  const get = async (id: string) => {
    const res = await app.inject({ method: "GET", url: `/goals/${id}` });
    return { status: res.statusCode, body: res.json() as GoalView };
  };
  /** Submits a goal (expecting 202) and polls until it ends. */
  const run = async (body: unknown, timeoutMs = 120_000): Promise<GoalView> => {
    const res = await post(body);
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    return waitForEnd(res.body.id as string, timeoutMs);
  };
  const waitForEnd = async (id: string, timeoutMs = 120_000): Promise<GoalView> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { body } = await get(id);
      if (body.state === "verified" || body.state === "failed") return body;
      if (Date.now() > deadline) throw new Error(`goal ${id} still in ${body.state} after ${timeoutMs} ms; tape: ${body.tape}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  };
  const close = async () => {
    await runner?.close();
    await app.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await connection.quit();
    await prisma.$disconnect();
  };
  return { app, prisma, prefix, queue, post, get, run, waitForEnd, startRunner, close };
}
export type Loop = Awaited<ReturnType<typeof startLoop>>;

/**
 * A goal whose (scripted) program is `source`: one attempt, an inspector that never verifies. For hostile
 * programs: the loop must contain them and write what happened on the tape.
 */
export function hostileGoal(source: string, opts: { timeoutSeconds?: number } = {}) {
  const script = {
    plan: { objective: "hostile program", approach: ["misbehave"], output_contract: "anything", checks: [] },
    generate: { filename: "analysis.py", language: "python", source, notes: "" },
    inspect: [{ verified: false, failing_checks: [], diagnosis: "hostile", fix_hint: "" }],
    refine: [],
  };
  return {
    objective: "Run a hostile program.",
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
  return row.detail as { exit_code: number; timed_out: boolean; oom_killed: boolean; stderr_tail: string; artifacts: { name: string }[]; artifact_errors: string[] };
}
