// A runner as a real process (apps/runner/src/main.ts through tsx) on a loop's queue prefix, with
// settings that make crash recovery observable within a test: a dead runner's job is redelivered after
// about two seconds, its heartbeat expires as fast, and live runners sweep every second.
import { spawnTs, type Spawned } from "../../scripts/lib/proc";
import { SUITE_RUNTIME } from "../../packages/sandbox/test/support";
import { DATABASE_URL, REDIS_URL } from "./services";

/** How fast a dead runner is noticed: job lock, stalled-job check, heartbeat, sweep. */
export const FAST_RECOVERY_ENV: Readonly<Record<string, string>> = Object.freeze({
  WORKER_LOCK_MS: "2000",
  STALLED_INTERVAL_MS: "1000",
  HEARTBEAT_TTL_MS: "2000",
  SWEEP_INTERVAL_MS: "1000",
});

export interface RunnerProcess {
  /** RUNNER_ID: its sandbox containers carry it as the `loopsmith.runner` label. */
  id: string;
  proc: Spawned;
  /** Resolves once the runner logged "runner ready" (worker running) and its sandbox self-check passed. */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGKILL: no grace, no clean-up; resolves when the process is gone. */
  kill(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (graceful: finishes or releases the job in hand); SIGKILL if it is still there after graceMs. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Everything it logged so far (pino JSON lines). */
  output(): string;
  alive(): boolean;
}

export function spawnRunner(opts: { prefix: string; id: string; env?: Record<string, string> }): RunnerProcess {
  const proc = spawnTs("apps/runner/src/main.ts", {
    DATABASE_URL,
    REDIS_URL,
    QUEUE_PREFIX: opts.prefix,
    RUNNER_ID: opts.id,
    LOOPSMITH_SCRIPTED_MODEL: "true",
    MODEL_HTTP_RETRIES: "0",
    LOG_LEVEL: "info",
    SHUTDOWN_GRACE_MS: "5000",
    // No pool unless a test asks for one (SANDBOX_POOL_SIZE in env): warming pre-started containers in
    // every short-lived runner of the durability tests cost CPU that the tests' own programs wait for, and
    // a killed runner's idle containers are only more for the sweep. The pooled path is tested in
    // packages/sandbox/test/pool.test.ts, by every in-process loop (tests/support/loop.ts), and by
    // crash-resume (b), whose killed runner holds a pool.
    SANDBOX_POOL_SIZE: "0",
    // The suite's runtime (runc unless SANDBOX_RUNTIME says otherwise), not the product's auto.
    SANDBOX_RUNTIME: SUITE_RUNTIME,
    ...FAST_RECOVERY_ENV,
    ...opts.env,
  });
  const alive = () => proc.child.exitCode === null && proc.child.signalCode === null;
  return {
    id: opts.id,
    proc,
    alive,
    output: proc.output,
    async ready(timeoutMs = 60_000) {
      await proc.waitFor(/"msg":"runner ready"/, timeoutMs);
      // A runner takes work before its sandbox self-check ends; these tests stop services, kill runners and
      // count containers, and want it fully started: the self-check's containers gone, its verdict in.
      await proc.waitFor(/"msg":"sandbox kills a never-ending program at its time limit"/, timeoutMs);
    },
    async kill() {
      if (alive()) proc.child.kill("SIGKILL");
      return proc.exited;
    },
    async stop(graceMs = 10_000) {
      if (alive()) proc.child.kill("SIGTERM");
      const timer = setTimeout(() => {
        if (alive()) proc.child.kill("SIGKILL");
      }, graceMs);
      try {
        return await proc.exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Spawns a runner and waits until it is ready to take jobs. */
export async function startRunnerProcess(opts: { prefix: string; id: string; env?: Record<string, string> }): Promise<RunnerProcess> {
  const runner = spawnRunner(opts);
  try {
    await runner.ready();
  } catch (e) {
    await runner.kill();
    throw e;
  }
  return runner;
}
