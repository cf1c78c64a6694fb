import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { QUEUES } from "@loopsmith/schemas";
import { spawnTs } from "../../../scripts/lib/proc";
import { DATABASE_URL, randomPrefix, REDIS_URL } from "../../../tests/support/services";

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

      const queue = new Queue(QUEUES.goals, { connection, prefix });
      const goalId = randomUUID();
      const job = await queue.add("goal", { goalId, version: 0 });
      const received = await p.waitFor(new RegExp(goalId), 30_000);
      expect(received).toContain("goal job received");
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

  it("refuses to start when the sandbox image is missing", async () => {
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
  });
});
