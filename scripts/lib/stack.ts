// The API and a runner as real child processes on a free port, for the demo and the benchmarks.
import { createServer } from "node:net";
import { createClient, type CreateGoal } from "@loopsmith/client";
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
  /** A tenant made for this stack with `npm run tenant:create` (apps/api/src/tenant-cli.ts). */
  tenant: { tenant_id: string; api_key: string; webhook_secret: string };
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
  const tenant = await createTenantWithCli(full, `stack-${process.pid}`);
  // STACK_CPU_PROF=<dir>: both processes write a V8 CPU profile there when they exit (a bench's hot spots).
  const prof = process.env.STACK_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.STACK_CPU_PROF}`] : [];
  const api = spawnTs("apps/api/src/server.ts", full, [], prof);
  const runner = spawnTs("apps/runner/src/main.ts", full, [], prof);
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
  return { base: `http://127.0.0.1:${port}`, tenant, api, runner, startMs: performance.now() - started, stop };
}

/** Runs the tenant command as a user would and parses the JSON it prints. */
export async function createTenantWithCli(env: Record<string, string | undefined>, name: string): Promise<Stack["tenant"]> {
  const cli = spawnTs("apps/api/src/tenant-cli.ts", env, ["--name", name]);
  const { code } = await cli.exited;
  const out = cli.output();
  if (code !== 0) throw new Error(`tenant:create exited ${code}: ${out}`);
  return JSON.parse(out.slice(out.indexOf("{"))) as Stack["tenant"];
}

/** POST a goal as the stack's tenant and poll it until it ends. */
export async function runGoal<T extends { state: string }>(stack: Pick<Stack, "base" | "tenant">, body: unknown, pollMs = 100): Promise<{ id: string; goal: T }> {
  // Through the typed client (@loopsmith/client), as any other client of the API would.
  const client = createClient({ url: stack.base, apiKey: stack.tenant.api_key });
  const { data: accepted, error, response } = await client.POST("/goals", { body: body as CreateGoal });
  if (response.status !== 202 || !accepted) throw new Error(`POST /goals -> ${response.status} ${JSON.stringify(error)}`);
  for (;;) {
    const { data: goal, error: err, response: res } = await client.GET("/goals/{id}", { params: { path: { id: accepted.id } } });
    if (!goal) throw new Error(`GET /goals/${accepted.id} -> ${res.status} ${JSON.stringify(err)}`);
    if (["verified", "failed", "cancelled", "errored"].includes(goal.state)) return { id: accepted.id, goal: goal as unknown as T };
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
