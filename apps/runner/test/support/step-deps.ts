// What runStep needs, as the runner wires it, for tests that drive single steps: the real database and
// sandbox they pass in, models built from `config` (scripted, or a local fake provider), and scheduling
// left to the test (`enqueue`: recorded, or dropped by default).
import { createLogger, type Logger } from "@loopsmith/core";
import type { PrismaClient } from "@loopsmith/db";
import { createModel } from "@loopsmith/models";
import { createDockerSandbox, dockerClient, sandboxImageTag, type Sandbox } from "@loopsmith/sandbox";
import type { GoalJob } from "@loopsmith/schemas";
import type { CheckPool } from "@loopsmith/verifier";
import type { RunnerConfig } from "../../src/config";
import type { StepRunnerDeps } from "../../src/step";
import { createGoalMaterial } from "../../src/states/material";
import { SUITE_RUNTIME } from "../../../../packages/sandbox/test/support";

export function stepDeps(o: {
  prisma: PrismaClient;
  /** Default: the real Docker sandbox (cold runs, the suite's runtime) under this runner id. */
  sandbox: Sandbox | { runnerId: string };
  checks: CheckPool;
  config: RunnerConfig;
  log?: Logger;
  enqueue?: (job: GoalJob) => Promise<void>;
}): StepRunnerDeps {
  const log = o.log ?? createLogger({ name: "test", level: "silent" });
  const sandbox =
    "run" in o.sandbox ? o.sandbox : createDockerSandbox({ docker: dockerClient(), image: sandboxImageTag(), runnerId: o.sandbox.runnerId, log, ociRuntime: SUITE_RUNTIME });
  return {
    prisma: o.prisma,
    sandbox,
    checks: o.checks,
    models: (spec) => createModel(spec, o.config),
    config: o.config,
    log,
    now: () => new Date(),
    material: createGoalMaterial(o.prisma, o.config.RUNNER_GOAL_CACHE_MB * 1024 * 1024),
    enqueue: o.enqueue ?? (async () => undefined),
    deliver: async () => undefined,
    approvalTimeoutMs: 60_000,
  };
}
