// Checks run off the event loop, each under a hard time limit. A comparator is pure but may be slow on a
// large artifact (or, through a client's JSON Schema, quadratic): on the runner's own thread it would stop
// BullMQ's lock renewals and the heartbeat, and other runners would take the goal, or its containers, for
// dead. Here each check runs on a worker thread; one that overruns its limit is stopped (the thread is
// terminated, a fresh one takes the next check) and counts as failed.
import { Worker } from "node:worker_threads";
import type { CheckSpec } from "@loopsmith/schemas";
import { visibilityOf, type CheckOutcome } from "./run";
import type { RunEvidence, VerifyContext } from "./types";
import type { ToWorker } from "./pool-worker";

export interface CheckPool {
  /** The deterministic checks' outcomes, in order (judgement checks are left out), each within the time limit. */
  run(checks: CheckSpec[], ctx: VerifyContext, runsByCheck?: (i: number) => RunEvidence[]): Promise<CheckOutcome[]>;
  /** Starts a thread ahead of the first check (thread start-up is not part of a check's time limit anyway). */
  warm(): Promise<void>;
  close(): Promise<void>;
}

export interface CheckPoolOptions {
  /** Time limit of one check. */
  timeoutMs: number;
  /** Heap limit of a check thread: a runaway check fails instead of taking the runner down. */
  maxHeapMb?: number;
}

const ENTRY = new URL("./pool-worker.mjs", import.meta.url);
const START_LIMIT_MS = 60_000;

export function createCheckPool(opts: CheckPoolOptions): CheckPool {
  const idle: Worker[] = [];
  const busy = new Set<Worker>();
  let closed = false;

  /** A started thread that has loaded the verifier, or an error if it could not within the start limit. */
  const spawn = () =>
    new Promise<Worker>((resolve, reject) => {
      const w = new Worker(ENTRY, { resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb ?? 1024 } });
      const fail = (why: string) => {
        clearTimeout(timer);
        void w.terminate();
        reject(new Error(`check thread did not start: ${why}`));
      };
      const timer = setTimeout(() => fail(`not ready after ${START_LIMIT_MS} ms`), START_LIMIT_MS);
      w.once("message", () => {
        clearTimeout(timer);
        w.off("error", onError);
        resolve(w);
      });
      const onError = (e: Error) => fail(e.message);
      w.once("error", onError);
    });

  /** Runs one check on `worker`; resolves with its outcome, or null when the thread had to be stopped. */
  const runOn = (worker: Worker, seq: number, spec: CheckSpec, runs: RunEvidence[]) =>
    new Promise<{ outcome: CheckOutcome } | { failed: string }>((resolve) => {
      const done = (r: { outcome: CheckOutcome } | { failed: string }) => {
        clearTimeout(timer);
        worker.off("message", onMessage);
        worker.off("error", onError);
        worker.off("exit", onExit);
        resolve(r);
      };
      const onMessage = (m: { seq: number; outcome: CheckOutcome }) => {
        if (m.seq === seq) done({ outcome: m.outcome });
      };
      const onError = (e: Error) => done({ failed: `the check crashed its thread (${e.message})` });
      const onExit = (code: number) => done({ failed: `the check's thread exited (code ${code})` });
      const timer = setTimeout(() => done({ failed: `the check did not finish within its time limit of ${opts.timeoutMs} ms and was stopped` }), opts.timeoutMs);
      worker.on("message", onMessage);
      worker.once("error", onError);
      worker.once("exit", onExit);
      worker.postMessage({ type: "check", seq, spec, runs } satisfies ToWorker);
    });

  return {
    async run(checks, ctx, runsByCheck = () => []) {
      if (closed) throw new Error("check pool is closed");
      const outcomes: CheckOutcome[] = [];
      let worker: Worker | undefined;
      const fresh = async () => {
        const w = idle.pop() ?? (await spawn());
        busy.add(w);
        w.postMessage({ type: "ctx", ctx: { ...ctx, runs: [] } } satisfies ToWorker);
        return w;
      };
      try {
        for (const [i, spec] of checks.entries()) {
          if (spec.kind === "judgement") continue;
          worker ??= await fresh();
          const r = await runOn(worker, i, spec, runsByCheck(i));
          if ("outcome" in r) {
            outcomes.push(r.outcome);
            continue;
          }
          // The thread is stuck or gone: stop it and give the next check a fresh one.
          busy.delete(worker);
          void worker.terminate();
          worker = undefined;
          const { hidden } = visibilityOf(spec);
          const message = `${r.failed}; it counts as failed`;
          outcomes.push({ id: spec.id, params: spec.params, passed: false, message, feedback: message, hidden, findings: [] });
        }
      } finally {
        if (worker) {
          busy.delete(worker);
          if (closed) void worker.terminate();
          else idle.push(worker);
        }
      }
      return outcomes;
    },
    async warm() {
      if (idle.length === 0 && busy.size === 0) idle.push(await spawn());
    },
    async close() {
      closed = true;
      await Promise.all([...idle.splice(0), ...busy].map((w) => w.terminate()));
    },
  };
}
