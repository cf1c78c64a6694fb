// npm run demo: the running example through the public HTTP API. It starts the API and a runner as real
// processes, submits sales.csv with a scripted model (or a real OpenAI-compatible server, see --help),
// polls GET /goals/:id until the goal ends, and prints the result. Exit 0 only when verified.
import { parseArgs } from "node:util";
import type { GoalView } from "@loopsmith/schemas";
import { demoGoal, EXPECTED_TAPE } from "./demo/scenario";
import { TS_EXPECTED_TAPE, typescriptDemoGoal } from "./demo/typescript";
import { runGoal, startStack, timeInStates, type Stack } from "./lib/stack";

const HELP = `usage: npm run demo [-- --provider scripted|openai-compatible] [--model NAME] [--max-attempts N] [--language python|typescript]

  --language typescript  a TypeScript workspace (issue 14): tsc --noEmit and npm test (node --test) must
                         pass; 2 attempts with the scripted model, then verified with the patch.

  scripted (default)   the pre-written model of the running example: 3 attempts, then verified.
  openai-compatible    a real model server; set OPENAI_COMPATIBLE_BASE_URL (e.g. http://127.0.0.1:8080/v1),
                       OPENAI_COMPATIBLE_MODEL and, if the server needs one, OPENAI_COMPATIBLE_API_KEY.
Environment: DEMO_PROVIDER, DEMO_MODEL, DEMO_MAX_ATTEMPTS do the same as the flags.`;

const { values: args } = parseArgs({
  options: {
    provider: { type: "string", default: process.env.DEMO_PROVIDER ?? "scripted" },
    model: { type: "string", default: process.env.DEMO_MODEL },
    "max-attempts": { type: "string", default: process.env.DEMO_MAX_ATTEMPTS ?? "5" },
    language: { type: "string", default: process.env.DEMO_LANGUAGE ?? "python" },
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

if (args.language !== "python" && args.language !== "typescript") {
  console.error(`unknown language ${args.language}\n\n${HELP}`);
  process.exit(2);
}
const typescript = args.language === "typescript";

const started = performance.now();
let stack: Stack | undefined;
let ok = false;
try {
  stack = await startStack({ ...process.env, LOOPSMITH_SCRIPTED_MODEL: "true", QUEUE_PREFIX: process.env.QUEUE_PREFIX ?? `loopsmith-demo-${process.pid}` });
  const model = args.provider === "scripted" ? undefined : { provider: "openai-compatible", ...(args.model ? { model: args.model } : {}) };
  const maxAttempts = Number(args["max-attempts"]);
  const body = typescript ? await typescriptDemoGoal({ max_attempts: maxAttempts, ...(model ? { model } : {}) }) : demoGoal({ max_attempts: maxAttempts, ...(model ? { model } : {}) });
  const { id, goal } = await runGoal<GoalView>(stack, body, 200);
  console.error(`goal ${id} ended ${goal.state}`);

  const result = {
    goal_id: goal.id,
    final_state: goal.state,
    verified: goal.verified,
    attempts: goal.attempts,
    failure_reason: goal.failure_reason,
    model: goal.model,
    tape: goal.tape,
    report: goal.report,
    ...(typescript
      ? {
          deliverable: goal.deliverable,
          checks: goal.checks.map((c) => ({ id: c.id, params: c.params, passed: c.latest?.passed ?? null, message: c.latest?.message ?? null })),
          patch: (goal.transitions.filter((t) => t.from === "execute").at(-1)?.detail.workspace as { patch?: string } | undefined)?.patch ?? null,
        }
      : {}),
    cost: goal.cost,
    timings_ms: {
      demo_total: Math.round(performance.now() - started),
      start_api_and_runner: Math.round(stack.startMs),
      goal_wall: goal.cost.wall_time_ms,
      model_turns_reported_latency: goal.cost.model_latency_ms,
      programs_running_in_containers: goal.cost.sandbox_ms,
      time_in_state: timeInStates(goal.transitions),
    },
  };
  console.log(JSON.stringify(result, null, 2));
  ok = goal.state === "verified";
  const expected = typescript ? TS_EXPECTED_TAPE : EXPECTED_TAPE;
  if (args.provider === "scripted" && goal.tape !== expected) {
    console.error(`unexpected tape; expected:\n  ${expected}`);
    ok = false;
  }
} catch (e) {
  console.error(String(e));
  if (stack) console.error(`--- api output ---\n${stack.api.output().slice(-4000)}\n--- runner output ---\n${stack.runner.output().slice(-4000)}`);
} finally {
  await stack?.stop();
}
console.error(ok ? "verified" : "NOT verified");
process.exit(ok ? 0 : 1);
