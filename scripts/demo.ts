// npm run demo: the running example through the public HTTP API. It starts the API and a runner as real
// processes, submits sales.csv with a scripted model (or a real OpenAI-compatible server, see --help),
// polls GET /goals/:id until the goal ends, and prints the result. Exit 0 only when verified.
import { createServer } from "node:net";
import { parseArgs } from "node:util";
import { spawnTs } from "./lib/proc";
import type { GoalView } from "@loopsmith/schemas";
import { demoGoal, EXPECTED_TAPE } from "./demo/scenario";

const HELP = `usage: npm run demo [-- --provider scripted|openai-compatible] [--model NAME] [--max-attempts N]

  scripted (default)   the pre-written model of the running example: 3 attempts, then verified.
  openai-compatible    a real model server; set OPENAI_COMPATIBLE_BASE_URL (e.g. http://127.0.0.1:8080/v1),
                       OPENAI_COMPATIBLE_MODEL and, if the server needs one, OPENAI_COMPATIBLE_API_KEY.
Environment: DEMO_PROVIDER, DEMO_MODEL, DEMO_MAX_ATTEMPTS do the same as the flags.`;

const { values: args } = parseArgs({
  options: {
    provider: { type: "string", default: process.env.DEMO_PROVIDER ?? "scripted" },
    model: { type: "string", default: process.env.DEMO_MODEL },
    "max-attempts": { type: "string", default: process.env.DEMO_MAX_ATTEMPTS ?? "5" },
    help: { type: "boolean", default: false },
  },
});
if (args.help) {
  console.log(HELP);
  process.exit(0);
}
if (args.provider !== "scripted" && args.provider !== "openai-compatible") {
  console.error(`unknown provider ${args.provider}\n\n${HELP}`);
  process.exit(2);
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}


const started = performance.now();
const port = Number(process.env.PORT ?? (await freePort()));
const env = {
  ...process.env,
  PORT: String(port),
  // The demo waits for the processes' own "listening"/"ready" lines, which are logged at info.
  LOG_LEVEL: "info",
  LOOPSMITH_SCRIPTED_MODEL: "true",
  QUEUE_PREFIX: process.env.QUEUE_PREFIX ?? `loopsmith-demo-${process.pid}`,
};
const api = spawnTs("apps/api/src/server.ts", env);
const runner = spawnTs("apps/runner/src/main.ts", env);
let ok = false;
try {
  await api.waitFor(/Server listening/, 60_000);
  await runner.waitFor(/runner ready/, 180_000);
  const ready = performance.now();
  const base = `http://127.0.0.1:${port}`;

  const model = args.provider === "scripted" ? undefined : { provider: "openai-compatible", ...(args.model ? { model: args.model } : {}) };
  const body = demoGoal({ max_attempts: Number(args["max-attempts"]), ...(model ? { model } : {}) });
  const res = await fetch(`${base}/goals`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const accepted = (await res.json()) as { id?: string; status_url?: string };
  if (res.status !== 202 || !accepted.status_url) throw new Error(`POST /goals -> ${res.status} ${JSON.stringify(accepted)}`);
  console.error(`POST /goals -> 202 ${accepted.id}; polling ${accepted.status_url}`);

  let goal: GoalView;
  for (;;) {
    goal = (await (await fetch(`${base}${accepted.status_url}`)).json()) as GoalView;
    if (goal.state === "verified" || goal.state === "failed") break;
    await new Promise((r) => setTimeout(r, 200));
  }

  // Where the time went, from the tape's own timestamps: time spent in each state until the next move
  // (a state's time includes picking up its queued job).
  const inState: Record<string, number> = {};
  goal.transitions.forEach((t, i) => {
    const next = goal.transitions[i + 1];
    if (next) inState[t.to] = (inState[t.to] ?? 0) + (Date.parse(next.at) - Date.parse(t.at));
  });
  const result = {
    goal_id: goal.id,
    final_state: goal.state,
    verified: goal.verified,
    attempts: goal.attempts,
    failure_reason: goal.failure_reason,
    model: goal.model,
    tape: goal.tape,
    report: goal.report,
    cost: goal.cost,
    timings_ms: {
      demo_total: Math.round(performance.now() - started),
      start_api_and_runner: Math.round(ready - started),
      goal_wall: goal.cost.wall_time_ms,
      model_turns_reported_latency: goal.cost.model_latency_ms,
      programs_running_in_containers: goal.cost.sandbox_ms,
      time_in_state: inState,
    },
  };
  console.log(JSON.stringify(result, null, 2));
  ok = goal.state === "verified";
  if (args.provider === "scripted" && goal.tape !== EXPECTED_TAPE) {
    console.error(`unexpected tape; expected:\n  ${EXPECTED_TAPE}`);
    ok = false;
  }
} catch (e) {
  console.error(String(e));
  console.error(`--- api output ---\n${api.output().slice(-4000)}\n--- runner output ---\n${runner.output().slice(-4000)}`);
} finally {
  api.child.kill("SIGTERM");
  runner.child.kill("SIGTERM");
  await Promise.all([api.exited, runner.exited]);
}
console.error(ok ? "verified" : "NOT verified");
process.exit(ok ? 0 : 1);
