// How soon a SIGKILLed runner's step is picked up again with the default lock and stalled-check settings
// (the other durability tests shorten them to seconds). bench/recovery.ts measures the spread; this test
// holds the documented bound, loosely.
import { afterAll, describe, expect, it } from "vitest";
import { runnerConfigSchema } from "../../apps/runner/src/config";
import { program, SCRIPT_CRASHES, scriptedGoal } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";
import { spawnRunner, startRunnerProcess, type RunnerProcess } from "../support/runner-process";
import { containersOf, sleep, waitUntil } from "./helpers";

const defaults = runnerConfigSchema.parse({});
// The lock and the stalled-job check as shipped; heartbeat and sweep stay fast (they only clean up).
const DEFAULT_RECOVERY_ENV = { WORKER_LOCK_MS: String(defaults.WORKER_LOCK_MS), STALLED_INTERVAL_MS: String(defaults.STALLED_INTERVAL_MS) };
// README "Recovery times": the lock lapses at most WORKER_LOCK_MS after the kill, then two stalled-job
// passes must see the job; a pass can come up to two intervals late when the runner that ran them died.
const BOUND_MS = defaults.WORKER_LOCK_MS + 2 * defaults.STALLED_INTERVAL_MS;
const SLACK_MS = 5000;
/** What README "Recovery times" promises with the defaults (37-82 s measured before issue 16.7). */
const DOCUMENTED_MS = 40_000;

const runners: RunnerProcess[] = [];
let loop: Loop;
afterAll(async () => {
  await Promise.allSettled(runners.map((r) => r.kill()));
  await loop?.close();
});

describe("issue 16.7: recovery with the default settings", () => {
  it(`a killed runner's step is picked up within WORKER_LOCK_MS + 2 × STALLED_INTERVAL_MS (${BOUND_MS} ms), its restarted twin running`, async () => {
    expect(BOUND_MS).toBeLessThanOrEqual(DOCUMENTED_MS);
    loop = await startLoop({ runner: false });
    const start = (id: string) => startRunnerProcess({ prefix: loop.prefix, id, env: DEFAULT_RECOVERY_ENV });
    runners.push(...(await Promise.all([start("recovery-1"), start("recovery-2")])));
    const res = await loop.post(scriptedGoal({ generate: program(`import time\ntime.sleep(120)\n${SCRIPT_CRASHES}`) }));
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const atExecute = await loop.waitForEnd(id, 60_000, ["execute"]);
    const jobId = `${id}-v${atExecute.transitions.at(-1)!.seq}`;

    const holder = await waitUntil("the runner running the program", async () => {
      const job = await loop.queue.getJob(jobId);
      const r = runners.find((x) => x.id === job?.processedBy);
      return r && (await containersOf(r.id, "program")).some((c) => c.state === "running") ? r : null;
    }, 60_000, 50);
    await sleep(1000);
    const killedAt = Date.now();
    await holder.kill();
    // As a supervisor would: the issue saw pickups about 31 s after the most recent runner start.
    runners.push(spawnRunner({ prefix: loop.prefix, id: `${holder.id}-restarted`, env: DEFAULT_RECOVERY_ENV }));

    const pickedAt = await waitUntil("another runner to pick the step up", async () => {
      const job = await loop.queue.getJob(jobId);
      return job?.processedOn && job.processedOn > killedAt ? job.processedOn : null;
    }, BOUND_MS + 60_000, 100);
    const recoveryMs = pickedAt - killedAt;
    console.log(`[recovery] WORKER_LOCK_MS=${defaults.WORKER_LOCK_MS} STALLED_INTERVAL_MS=${defaults.STALLED_INTERVAL_MS}: picked up ${recoveryMs} ms after the kill (bound ${BOUND_MS} ms)`);
    expect(recoveryMs).toBeLessThanOrEqual(BOUND_MS + SLACK_MS);
    // Stop the 120 s program.
    await loop.request("POST", `/goals/${id}/cancel`);
  }, 240_000);
});
