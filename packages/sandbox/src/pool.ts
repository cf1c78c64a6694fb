// The pool: containers created and started ahead of their runs (their bootstrap waiting, optionally with
// libraries already imported), each handed out once and removed after its run. Refilled in the background,
// with a growing pause while the engine refuses; an idle container past the TTL or found dead is replaced.
// A handed-out container's replacement starts at hand-out (refillDelayMs 0), or once its run is over (or
// after refillDelayMs if the run is still going). On a host of a few cores a start and a pandas import
// beside the program make that run slower (about 1.5x for a short one), but a goal's next run comes a
// moment after this one ends, and the replacement's head start shortens the goal (benchmarks.md).
import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import { BOOTSTRAP_PY } from "./bootstrap";
import { DEADLINE_SLACK_MS, IDLE, POOL_PURPOSE, SANDBOX_NAME_PREFIX, isGone, type Containers } from "./container";
import { startAttached, type Io } from "./io";
import type { PoolOptions, RunRequest, SandboxLog } from "./types";

/** A container started ahead of its run, waiting in the pool. */
export interface Warm {
  container: Docker.Container;
  suffix: string;
  io: Io;
  exited: Promise<{ StatusCode: number }>;
  createdAt: number;
  deadline: number;
  ready: boolean;
  dead: boolean;
}

/** The env names a pre-imported interpreter has already read at its start: a request that sets one runs pristine. */
const STARTUP_ENV = /^(PYTHON|LC_|OMP_|OPENBLAS_|MKL_)|^(LANG|HOME|PATH)$/;

/**
 * Whether the request can run inside the pool container's pre-imported interpreter: `python3 <file>
 * args...`, with no variable the interpreter (or a pre-imported library) reads only at start-up, and
 * not opted out. Anything else is exec'd in the same container, a pristine process.
 */
export function runsInProcess(req: Pick<RunRequest, "command" | "env" | "preimport">): boolean {
  if (req.preimport === false) return false;
  const [exe, file] = req.command;
  if (exe !== "python3" || file === undefined || file.startsWith("-") || file.length === 0) return false;
  return Object.keys(req.env ?? {}).every((k) => !STARTUP_ENV.test(k));
}

/** A pool container handed out: renamed for its run's purpose (`renamed` settles when that is done). */
export interface Taken extends Warm {
  renamed: Promise<void>;
}

export interface Pool {
  /** A live idle container that can take a run of `timeoutMs` (a ready one first), out of the pool for good. */
  take(timeoutMs: number, purpose: string): Taken | undefined;
  /**
   * As take, but when the pool is empty while a container for it is being made (the last run's
   * replacement), waits for that one (up to MAKING_WAIT_MS) rather than returning nothing: it has a head
   * start on a cold container started now, which would also compete with it for the CPU. One run waits
   * per container being made; the others go cold at once.
   */
  next(timeoutMs: number, purpose: string): Promise<Taken | undefined>;
  /**
   * The taken container's run is over: starts its replacement, and removes it once its rename is done, in
   * the background (Containers.settled waits for it).
   */
  release(w: Taken): void;
  /** Whether a pool container runs `req` in its pre-imported interpreter (else a pristine process). */
  inProcess(req: RunRequest): boolean;
  start(): void;
  close(): Promise<void>;
  warm(o?: { n?: number; timeoutMs?: number }): Promise<void>;
  poolStats(): { idle: number; ready: number; target: number; creating: boolean };
}

/** How long a run waits for the container being made before it starts its own (a bound for a hung engine). */
export const MAKING_WAIT_MS = 10_000;

/**
 * `target` idle containers at most (the owner derives it from PoolOptions.size and maxIdleBytes); nothing
 * happens before start().
 */
export function createPool(deps: { containers: Containers; options: PoolOptions; target: number; log?: SandboxLog }): Pool {
  const { containers, options: poolOpts, target, log } = deps;
  const preimport = poolOpts.preimport.length > 0;

  const idle: Warm[] = [];
  let closed = false;
  let started = false;
  let filling: Promise<void> | undefined;
  let failures = 0;
  let ttlTimer: NodeJS.Timeout | undefined;
  let wakeBackoff: (() => void) | undefined;
  let inFlight = 0;
  let deferred: NodeJS.Timeout | undefined;
  const readyWaiters = new Set<() => void>();
  const notify = () => readyWaiters.forEach((f) => f());
  // A container for the pool is being made right now (not a pause after a refusal), and the runs waiting for it.
  let making = false;
  const arrivals = new Set<() => void>();
  const arrived = () => arrivals.forEach((f) => f());

  const discard = (w: Warm, why: string) => {
    const i = idle.indexOf(w);
    if (i >= 0) idle.splice(i, 1);
    w.dead = true;
    w.io.stream.destroy();
    log?.info({ container: w.container.id.slice(0, 12), why }, "sandbox pool: container discarded");
    void containers.remove(w.container);
    refill();
  };

  async function createWarm(): Promise<Warm> {
    const suffix = randomBytes(8).toString("hex");
    const createdAt = Date.now();
    const deadline = createdAt + poolOpts.ttlMs + poolOpts.maxRunMs + DEADLINE_SLACK_MS;
    const container = await containers.create({
      name: `${SANDBOX_NAME_PREFIX}${IDLE}-${suffix}`,
      entrypoint: preimport ? ["python3", "-c", BOOTSTRAP_PY, ...poolOpts.preimport] : ["python3", "-I", "-S", "-c", BOOTSTRAP_PY],
      env: undefined,
      purpose: POOL_PURPOSE,
      deadline,
    });
    try {
      const { io, exited } = await startAttached(container);
      const w: Warm = { container, suffix, io, exited, createdAt, deadline, ready: false, dead: false };
      // An idle container that dies (killed from outside, the engine restarting) leaves the pool at once.
      w.exited.then(
        () => !w.dead && idle.includes(w) && discard(w, "exited while idle"),
        () => !w.dead && idle.includes(w) && discard(w, "lost while idle"),
      );
      void io.ready.then((ok) => {
        if (ok) {
          w.ready = true;
          notify();
        } else if (idle.includes(w)) discard(w, "bootstrap did not start");
      });
      return w;
    } catch (e) {
      void containers.remove(container);
      throw e;
    }
  }

  function refill(): void {
    if (!started || closed || filling || target === 0) return;
    filling = (async () => {
      while (!closed && idle.length < target) {
        try {
          making = true;
          const w = await createWarm().finally(() => {
            making = false;
          });
          if (closed) {
            w.dead = true;
            w.io.stream.destroy();
            await containers.remove(w.container);
            arrived();
            break;
          }
          idle.push(w);
          failures = 0;
          arrived();
        } catch (e) {
          arrived();
          // The engine refused (or hiccuped): runs go cold meanwhile; try again after a growing pause.
          failures++;
          const pauseMs = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
          log?.warn({ err: (e as Error).message, failures, pauseMs }, "sandbox pool: could not start a container");
          await new Promise<void>((r) => {
            const t = setTimeout(r, pauseMs);
            t.unref();
            wakeBackoff = () => {
              clearTimeout(t);
              r();
            };
          });
          wakeBackoff = undefined;
        }
      }
    })().finally(() => {
      filling = undefined;
      // A container taken (or discarded) while the last one was being made.
      if (!closed && idle.length < target) refill();
    });
  }

  function take(timeoutMs: number, purpose: string): Taken | undefined {
    const fits = (w: Warm) => !w.dead && w.deadline >= Date.now() + timeoutMs + DEADLINE_SLACK_MS;
    const w = idle.find((x) => x.ready && fits(x)) ?? idle.find(fits);
    if (!w) return undefined;
    idle.splice(idle.indexOf(w), 1);
    inFlight++;
    refillAfterRun();
    // Handed out: renamed for its purpose (its labels were fixed before anyone knew it), never pooled again.
    const renamed = w.container.rename({ name: `${SANDBOX_NAME_PREFIX}${purpose}-${w.suffix}` }).catch((e: unknown) => {
      if (!isGone(e)) log?.warn({ container: w.container.id, err: e }, "could not rename a pool container");
    });
    w.dead = true;
    return Object.assign(w, { renamed });
  }

  async function next(timeoutMs: number, purpose: string): Promise<Taken | undefined> {
    const now = take(timeoutMs, purpose);
    if (now || !making || arrivals.size > 0 || closed) return now;
    await new Promise<void>((resolve) => {
      const done = () => {
        arrivals.delete(done);
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(done, MAKING_WAIT_MS);
      t.unref();
      arrivals.add(done);
    });
    return take(timeoutMs, purpose);
  }

  /** After a hand-out: refill when the run ends (release), or once refillDelayMs passed without that. */
  function refillAfterRun(): void {
    if (poolOpts.refillDelayMs <= 0) return refill();
    if (deferred) return;
    deferred = setTimeout(() => {
      deferred = undefined;
      refill();
    }, poolOpts.refillDelayMs);
    deferred.unref();
  }

  function release(w: Taken): void {
    inFlight = Math.max(0, inFlight - 1);
    if (inFlight === 0 && deferred) {
      clearTimeout(deferred);
      deferred = undefined;
    }
    refill();
    containers.removeLater(w.renamed.then(() => containers.remove(w.container)));
  }

  function start(): void {
    if (started || closed || target === 0) return;
    started = true;
    ttlTimer = setInterval(
      () => {
        for (const w of [...idle]) if (Date.now() - w.createdAt > poolOpts.ttlMs) discard(w, "older than the pool TTL");
      },
      Math.max(1000, Math.min(30_000, Math.floor(poolOpts.ttlMs / 4))),
    );
    ttlTimer.unref();
    refill();
  }

  async function close(): Promise<void> {
    closed = true;
    arrived();
    if (ttlTimer) clearInterval(ttlTimer);
    if (deferred) clearTimeout(deferred);
    wakeBackoff?.();
    await filling;
    const all = idle.splice(0);
    for (const w of all) {
      w.dead = true;
      w.io.stream.destroy();
    }
    await Promise.all(all.map((w) => containers.remove(w.container)));
    await containers.settled();
  }

  async function warm(o: { n?: number; timeoutMs?: number } = {}): Promise<void> {
    const n = Math.min(o.n ?? target, target);
    const deadline = Date.now() + (o.timeoutMs ?? 60_000);
    while (idle.filter((w) => w.ready && !w.dead).length < n) {
      if (closed || !started) throw new Error("sandbox pool: not started");
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`sandbox pool: ${n} ready containers not reached in time (${idle.length} idle)`);
      await new Promise<void>((r) => {
        const done = () => {
          readyWaiters.delete(done);
          clearTimeout(t);
          r();
        };
        const t = setTimeout(done, Math.min(left, 250));
        readyWaiters.add(done);
      });
    }
  }

  const poolStats = () => ({ idle: idle.length, ready: idle.filter((w) => w.ready).length, target, creating: filling !== undefined });
  const inProcess = (req: RunRequest) => preimport && runsInProcess(req);

  return { take, next, release, inProcess, start, close, warm, poolStats };
}
