// The runner's moving parts, wired from plain dependencies: used by main.ts and by tests that run a
// runner in-process against the real services.
import { Queue, type Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "@loopsmith/core";
import type { PrismaClient } from "@loopsmith/db";
import type { LoopModel } from "@loopsmith/models";
import type { Sandbox } from "@loopsmith/sandbox";
import { goalStepJob, QUEUES, type GoalJob, type ModelSpec } from "@loopsmith/schemas";
import { runStep } from "./step";
import { createGoalWorker } from "./worker";

export interface RunnerDeps {
  prisma: PrismaClient;
  /** Needs maxRetriesPerRequest: null (BullMQ blocking commands). */
  connection: Redis;
  prefix: string;
  concurrency: number;
  sandbox: Sandbox;
  models: (spec: ModelSpec) => LoopModel;
  log: Logger;
  now?: () => Date;
}

export interface Runner {
  worker: Worker;
  queue: Queue;
  start(): Promise<void>;
  /** Finishes the steps in hand (or, with force, releases them) and closes the queue handles. */
  close(force?: boolean): Promise<void>;
}

export function createRunner(deps: RunnerDeps): Runner {
  const queue = new Queue(QUEUES.goals, { connection: deps.connection, prefix: deps.prefix });
  const enqueue = async (job: GoalJob) => {
    await queue.add(...goalStepJob(job));
  };
  const worker = createGoalWorker({
    connection: deps.connection,
    prefix: deps.prefix,
    concurrency: deps.concurrency,
    log: deps.log,
    handle: async (job) => {
      const outcome = await runStep(
        {
          prisma: deps.prisma,
          sandbox: deps.sandbox,
          models: deps.models,
          log: deps.log,
          now: deps.now ?? (() => new Date()),
          enqueue,
        },
        job,
      );
      if (!outcome.done) deps.log.info({ ...job, outcome }, "goal step skipped");
      return outcome;
    },
  });
  return {
    worker,
    queue,
    async start() {
      await worker.waitUntilReady();
      void worker.run();
    },
    async close(force = false) {
      await worker.close(force);
      await queue.close();
    },
  };
}
