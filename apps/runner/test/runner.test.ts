import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { nodeSandboxImageTag } from "@loopsmith/sandbox";
import { QUEUES } from "@loopsmith/schemas";
import { SUITE_RUNTIME } from "../../../packages/sandbox/test/support";
import { spawnTs } from "../../../scripts/lib/proc";
import { EXPECTED_REPORT, INSPECT_VERIFIED, program, SCRIPT_CORRECT, scriptedGoal } from "../../../scripts/demo/scenario";
import { DATABASE_URL, randomPrefix, REDIS_URL } from "../../../tests/support/services";
import { startLoop } from "../../../tests/support/loop";

const prefix = randomPrefix("runner");
const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
afterAll(async () => {
  const keys = await connection.keys(`${prefix}:*`);
  if (keys.length) await connection.del(...keys);
  await connection.quit();
});

describe("runner process", () => {
  it("self-checks the sandbox, takes a goal job, and stops gracefully on SIGTERM", async () => {
    const p = spawnTs("apps/runner/src/main.ts", { DATABASE_URL, REDIS_URL, QUEUE_PREFIX: prefix, RUNNER_ID: "test-runner" });
    try {
      const check = await p.waitFor(/sandbox self-check passed/, 120_000);
      // The self-check output comes from python inside a fresh container from the sandbox image.
      expect(check).toMatch(/pandas \d+\.\d+/);
      expect(check).toMatch(/"imageId":"sha256:[0-9a-f]{64}"/);
      await p.waitFor(/runner ready/, 30_000);

      // A job for a goal that does not exist is taken and completes as a no-op.
      const queue = new Queue(QUEUES.goals, { connection, prefix });
      const goalId = randomUUID();
      const job = await queue.add("step", { goalId, version: 0 });
      const received = await p.waitFor(new RegExp(goalId), 30_000);
      expect(received).toContain("goal step skipped");
      expect(received).toContain('"skipped":"missing"');
      for (let i = 0; i < 40 && !(await job.isCompleted()); i++) await new Promise((r) => setTimeout(r, 250));
      expect(await job.isCompleted()).toBe(true);
      await queue.close();
    } finally {
      p.child.kill("SIGTERM");
    }
    const { code } = await p.exited;
    expect(code).toBe(0);
    expect(p.output()).toMatch(/"msg":"stopped"/);
  });

  it("on SIGTERM finishes the execution in hand, records it, and another runner completes the goal", async () => {
    const shared = randomPrefix("graceful");
    const loop = await startLoop({ runner: false, prefix: shared });
    const p = spawnTs("apps/runner/src/main.ts", {
      DATABASE_URL,
      REDIS_URL,
      QUEUE_PREFIX: shared,
      LOOPSMITH_SCRIPTED_MODEL: "true",
      SHUTDOWN_GRACE_MS: "60000",
      // The first case starts the product's default (gVisor where offered); this one is about the shutdown.
      SANDBOX_RUNTIME: SUITE_RUNTIME,
    });
    try {
      await p.waitFor(/runner ready/, 120_000);
      const slow = `import time\ntime.sleep(4)\n${SCRIPT_CORRECT}`;
      const res = await loop.post(scriptedGoal({ generate: program(slow), inspect: [INSPECT_VERIFIED] }));
      expect(res.status).toBe(202);
      const id = res.body.id as string;
      await p.waitFor(new RegExp(`"goalId":"${id}".*"to":"execute"`), 30_000);
      // The program is now sleeping inside its container: stop the runner in the middle of it.
      await new Promise((r) => setTimeout(r, 500));
      p.child.kill("SIGTERM");
      const { code } = await p.exited;
      expect(code).toBe(0);
      expect(p.output()).toMatch(/stopping: finishing the job in hand/);

      const after = await loop.get(id);
      expect(after.body.state).toBe("inspect");
      expect(after.body.executions).toHaveLength(1);
      expect(after.body.executions[0]).toMatchObject({ exit_code: 0, timed_out: false });
      expect(after.body.executions[0]!.duration_ms).toBeGreaterThanOrEqual(4000);

      // The next step was queued before the runner left: a new runner picks it up and finishes.
      await loop.startRunner();
      const done = await loop.waitForEnd(id);
      expect(done.state).toBe("verified");
      expect(done.tape).toBe("plan → generate → execute → inspect → verified");
      expect(done.report).toEqual(EXPECTED_REPORT);
    } finally {
      p.child.kill("SIGKILL");
      await loop.close();
    }
  });

  // The runner takes work while its self-check runs (start-up time is on every crash recovery's path);
  // whether it got as far as taking the job before the check failed depends on the machine's speed.
  it("runs no program before its sandbox self-check passed: a failed one exits, the goal's work untouched", async () => {
    const shared = randomPrefix("unchecked");
    const loop = await startLoop({ runner: false, prefix: shared });
    try {
      // Queued before the runner starts, so that it is taken as soon as the runner takes work.
      const res = await loop.post(scriptedGoal({ generate: program(SCRIPT_CORRECT), inspect: [INSPECT_VERIFIED] }));
      expect(res.status).toBe(202);
      const id = res.body.id as string;
      // An image that exists but has no pandas: the self-check fails.
      const p = spawnTs("apps/runner/src/main.ts", {
        DATABASE_URL,
        REDIS_URL,
        QUEUE_PREFIX: shared,
        LOOPSMITH_SCRIPTED_MODEL: "true",
        SANDBOX_IMAGE: nodeSandboxImageTag(),
        SANDBOX_POOL_SIZE: "0",
        SANDBOX_RUNTIME: SUITE_RUNTIME,
      });
      const { code } = await p.exited;
      expect(code).toBe(1);
      expect(p.output()).toMatch(/sandbox self-check failed/);
      const goal = await loop.get(id);
      expect(goal.body.executions ?? []).toHaveLength(0);
    } finally {
      await loop.close();
    }
  });

  it("refuses to start when the sandbox image is missing, having taken no job", async () => {
    // Queued first: a runner without its image must not take it (it would die with it, and a supervisor
    // restarting the runner would spend the step's tries).
    const queue = new Queue(QUEUES.goals, { connection, prefix });
    const job = await queue.add("step", { goalId: randomUUID(), version: 0 });
    try {
      const p = spawnTs("apps/runner/src/main.ts", {
        DATABASE_URL,
        REDIS_URL,
        QUEUE_PREFIX: prefix,
        SANDBOX_IMAGE: "loopsmith/does-not-exist:0",
      });
      const { code } = await p.exited;
      expect(code).toBe(1);
      expect(p.output()).toMatch(/start-up failed/);
      expect(p.output()).toMatch(/does-not-exist/);
      expect(p.output()).not.toMatch(/runner ready/);
      expect(await job.getState()).toBe("waiting");
    } finally {
      await job.remove().catch(() => undefined);
      await queue.close();
    }
  });
});
