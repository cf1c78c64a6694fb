// Benchmark: how long a SIGKILLed runner's step waits before another runner picks it up, with the
// settings in the environment (the defaults unless WORKER_LOCK_MS / STALLED_INTERVAL_MS are set), through
// real API and runner processes, Postgres, Redis and Docker.
//
//   npx tsx bench/recovery.ts [--trials 6] [--restart]
//
// Each trial submits a goal whose first program sleeps, kills the runner executing it at a random moment
// (so that the kill falls anywhere in the lock-renewal and stalled-check cycles), and times the kill to the
// moment a runner starts the same step again (the job's processedOn, written by the picking runner).
// Two runners are up; with --restart the killed one is started again at once, as a supervisor would
// (compose's restart policy), otherwise the survivor alone must notice.
import { parseArgs } from "node:util";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { loadRunnerConfig } from "../apps/runner/src/config";
import { RUNNER_LABEL, SANDBOX_LABEL, dockerClient, sandboxPurpose } from "@loopsmith/sandbox";
import { QUEUES } from "@loopsmith/schemas";
import { program, SCRIPT_CRASHES, scriptedGoal } from "../scripts/demo/scenario";
import { spawnTs, type Spawned } from "../scripts/lib/proc";
import { startStack } from "../scripts/lib/stack";
import { pct } from "./lib/stats";

const { values } = parseArgs({ options: { trials: { type: "string", default: "6" }, restart: { type: "boolean", default: false } } });
const trials = Number(values.trials);
const restart = values.restart;

const prefix = `loopsmith-bench-recovery-${process.pid}`;
const env = { ...process.env, LOOPSMITH_SCRIPTED_MODEL: "true", QUEUE_PREFIX: prefix };
// What the runners will run with, parsed the way they parse it.
const settings = loadRunnerConfig(env);
// Longer than any kill delay below, so that the kill always lands inside the execution.
const SLEEP_S = 20;
const goal = () => scriptedGoal({ generate: program(`import time\ntime.sleep(${SLEEP_S})\n${SCRIPT_CRASHES}`) });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const docker = dockerClient(settings.DOCKER_HOST);
async function runningContainerOwner(): Promise<string | null> {
  // A pool container's purpose is in its name once handed out (issue 12), see sandboxPurpose.
  const list = (await docker.listContainers({ filters: { label: [`${SANDBOX_LABEL}=1`], status: ["running"] } })).filter((c) => sandboxPurpose(c) === "program");
  const ours = list.map((c) => c.Labels[RUNNER_LABEL]).filter((id): id is string => !!id && runners.has(id));
  return ours[0] ?? null;
}

const runners = new Map<string, Spawned>();
function spawnRunner(id: string): Spawned {
  const r = spawnTs("apps/runner/src/main.ts", { ...env, LOG_LEVEL: "info", RUNNER_ID: id });
  runners.set(id, r);
  return r;
}

const stack = await startStack({ ...env, RUNNER_ID: "bench-a" });
runners.set("bench-a", stack.runner);
await spawnRunner("bench-b").waitFor(/runner ready/, 180_000);
const redis = new Redis(settings.REDIS_URL, { maxRetriesPerRequest: null });
const queue = new Queue(QUEUES.goals, { connection: redis, prefix });
const auth = { authorization: `Bearer ${stack.tenant.api_key}`, "content-type": "application/json" };
const api = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${stack.base}${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
  return (await res.json()) as Record<string, unknown> & { id: string; state: string; transitions: { seq: number }[] };
};

const recoveries: number[] = [];
const lockWaits: number[] = [];
/** With --restart: kill to the restarted runner's "runner ready" (the start-up bound is 3 s). */
const restartReady: number[] = [];
const START_UP_BOUND_MS = 3000;
try {
  console.log(
    `settings: WORKER_LOCK_MS=${settings.WORKER_LOCK_MS} STALLED_INTERVAL_MS=${settings.STALLED_INTERVAL_MS}; ` +
      `2 runners${restart ? ", the killed one restarted at once" : ", the killed one stays down"}; ${trials} trials`,
  );
  for (let i = 0; i < trials; i++) {
    const { id } = await api("POST", "/goals", goal());
    let owner: string | null = null;
    for (const t0 = Date.now(); !(owner = await runningContainerOwner()); await sleep(50)) {
      if (Date.now() - t0 > 120_000) throw new Error(`trial ${i + 1}: no runner started the execution`);
    }
    const inStep = Math.round(Math.random() * 15_000);
    await sleep(inStep);
    const view = await api("GET", `/goals/${id}`);
    const jobId = `${id}-v${view.transitions.at(-1)!.seq}`;
    // What is left of the dead runner's lock: the part of the wait no stalled-job check can shorten.
    const lockLeft = await redis.pttl(`${prefix}:${QUEUES.goals}:${jobId}:lock`);
    const killedAt = Date.now();
    runners.get(owner)!.child.kill("SIGKILL");
    await runners.get(owner)!.exited;
    runners.delete(owner);
    const restarted = restart ? spawnRunner(owner) : null;
    const readyTimer = restarted?.waitFor(/runner ready/, 180_000).then(() => restartReady.push(Date.now() - killedAt));

    let pickedAt = 0;
    for (;;) {
      const job = await queue.getJob(jobId);
      if (job?.processedOn && job.processedOn > killedAt) {
        pickedAt = job.processedOn;
        break;
      }
      if (Date.now() - killedAt > 240_000) throw new Error(`trial ${i + 1}: the step was not picked up within 240 s`);
      await sleep(100);
    }
    recoveries.push(pickedAt - killedAt);
    lockWaits.push(lockLeft);
    let by: string | null = null;
    for (const t0 = Date.now(); !(by = await runningContainerOwner()) && Date.now() - t0 < 30_000; ) await sleep(50);
    console.log(
      `trial ${i + 1}: killed ${owner} ${secs(inStep)} into the execution, its lock ${secs(lockLeft)} from lapsing; ` +
        `picked up ${secs(pickedAt - killedAt)} later (${secs(pickedAt - killedAt - lockLeft)} after the lapse) by ${by ?? "?"}`,
    );

    // Done with this goal: cancelling stops its container, so the next trial starts with both runners idle.
    await api("POST", `/goals/${id}/cancel`, {});
    for (const t0 = Date.now(); (await runningContainerOwner()) && Date.now() - t0 < 30_000; ) await sleep(100);
    await (restarted ?? spawnRunner(owner)).waitFor(/runner ready/, 180_000);
    await readyTimer;
  }
  const afterLapse = recoveries.map((r, i) => r - lockWaits[i]!);
  console.log(`after the lock lapsed: min ${secs(Math.min(...afterLapse))}, median ${secs(pct(afterLapse, 50))}, max ${secs(Math.max(...afterLapse))}`);
  console.log(
    `recovery (kill to pickup): min ${secs(Math.min(...recoveries))}, median ${secs(pct(recoveries, 50))}, max ${secs(Math.max(...recoveries))} (n=${recoveries.length})`,
  );
  if (restartReady.length > 0) {
    console.log(
      `restarted runner (kill to ready): min ${secs(Math.min(...restartReady))}, median ${secs(pct(restartReady, 50))}, max ${secs(Math.max(...restartReady))}; start-up bound ${secs(START_UP_BOUND_MS)}`,
    );
  }
} finally {
  for (const [id, r] of runners) if (id !== "bench-a" || r !== stack.runner) r.child.kill("SIGTERM");
  await stack.stop();
  await Promise.all([...runners.values()].map((r) => r.exited));
  await queue.obliterate({ force: true }).catch(() => undefined);
  await queue.close();
  await redis.quit();
}
