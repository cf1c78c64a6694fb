// The API and a runner as real child processes on a free port, for the demo and the benchmarks.
import { createServer } from "node:net";
import { spawnTs, type Spawned } from "./proc";

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface Stack {
  base: string;
  api: Spawned;
  runner: Spawned;
  /** Milliseconds from spawning until both processes said they were ready. */
  startMs: number;
  stop(): Promise<void>;
}

export async function startStack(env: Record<string, string | undefined>): Promise<Stack> {
  const started = performance.now();
  const port = Number(env.PORT ?? (await freePort()));
  const full = {
    ...env,
    PORT: String(port),
    // The stack waits for the processes' own "listening"/"ready" lines, which are logged at info.
    LOG_LEVEL: "info",
    QUEUE_PREFIX: env.QUEUE_PREFIX ?? `loopsmith-stack-${process.pid}`,
  };
  const api = spawnTs("apps/api/src/server.ts", full);
  const runner = spawnTs("apps/runner/src/main.ts", full);
  const stop = async () => {
    api.child.kill("SIGTERM");
    runner.child.kill("SIGTERM");
    await Promise.all([api.exited, runner.exited]);
  };
  try {
    await api.waitFor(/Server listening/, 60_000);
    await runner.waitFor(/runner ready/, 180_000);
  } catch (e) {
    await stop();
    throw e;
  }
  return { base: `http://127.0.0.1:${port}`, api, runner, startMs: performance.now() - started, stop };
}

/** POST a goal and poll it until it ends. */
export async function runGoal<T extends { state: string }>(base: string, body: unknown, pollMs = 100): Promise<{ id: string; goal: T }> {
  const res = await fetch(`${base}/goals`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const accepted = (await res.json()) as { id?: string; status_url?: string };
  if (res.status !== 202 || !accepted.status_url || !accepted.id) throw new Error(`POST /goals -> ${res.status} ${JSON.stringify(accepted)}`);
  for (;;) {
    const goal = (await (await fetch(`${base}${accepted.status_url}`)).json()) as T;
    if (goal.state === "verified" || goal.state === "failed") return { id: accepted.id, goal };
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** Milliseconds spent in each state, from the tape's own timestamps (a state's time includes its job pickup). */
export function timeInStates(transitions: { to: string; at: string }[]): Record<string, number> {
  const inState: Record<string, number> = {};
  transitions.forEach((t, i) => {
    const next = transitions[i + 1];
    if (next) inState[t.to] = (inState[t.to] ?? 0) + (Date.parse(next.at) - Date.parse(t.at));
  });
  return inState;
}
