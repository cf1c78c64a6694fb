// Benchmark: how fast one tenant's burst of demo goals drains (goals per minute), for several runner
// layouts, beside the one-goal-at-a-time figure measured first in the same run. Real API and runner
// processes, Postgres, Redis and Docker; the scripted model (no provider latency), so the sandbox and the
// machine's CPU are the limits.
//
// With --model-latency MS the goals use a model that answers after MS milliseconds, as a provider does: a
// local fake of the OpenAI-compatible wire format (in this process) that answers by the schema asked for
// (the demo's plan, its correct program, a verifying inspection: plan, generate, execute, inspect, verified).
// Then a goal mostly waits, as real goals do, and concurrency has idle time to fill.
//
//   npx tsx bench/throughput.ts [--goals 20] [--layouts 1x1,1x2,1x4,2x2] [--tenant-cap 0] [--model-latency 2000]
//
// A layout RxC is R runner processes with RUNNER_CONCURRENCY=C (each with the default pool: C idle
// containers). --tenant-cap sets TENANT_MAX_ACTIVE_GOALS for every layout (default 4; 0: no cap, what a
// single-tenant deployment should run: docs/operations.md).
import { parseArgs } from "node:util";
import { createClient, type CreateGoal } from "@loopsmith/client";
import type { GoalView } from "@loopsmith/schemas";
import { startFakeOpenAI, type FakeOpenAI } from "../packages/models/test/support/fake-openai";
import { demoGoal, demoScript, EXPECTED_TAPE, INSPECT_VERIFIED, program, SCRIPT_CORRECT } from "../scripts/demo/scenario";
import { spawnTs, type Spawned } from "../scripts/lib/proc";
import { runGoal, startStack, timeInStates, type Stack } from "../scripts/lib/stack";
import { machineCpuMs } from "./lib/cpu";
import { median } from "./lib/stats";

const { values } = parseArgs({
  options: {
    goals: { type: "string", default: "20" },
    layouts: { type: "string", default: "1x1,1x2,1x4,2x2" },
    "tenant-cap": { type: "string" },
    "model-latency": { type: "string", default: "0" },
  },
});
const total = Number(values.goals);
const latencyMs = Number(values["model-latency"]);

/** The model with latency: every answer by the schema asked for, after latencyMs. */
let fake: FakeOpenAI | undefined;
if (latencyMs > 0) {
  const answers = { Plan: demoScript().plan, GeneratedCode: program(SCRIPT_CORRECT), Inspection: INSPECT_VERIFIED };
  const answer = (body: unknown) => {
    const name = (body as { response_format: { json_schema: { name: keyof typeof answers } } }).response_format.json_schema.name;
    return { content: JSON.stringify(answers[name]), usage: { prompt_tokens: 500, completion_tokens: 200 }, delayMs: latencyMs };
  };
  fake = await startFakeOpenAI(Array.from({ length: 100_000 }, () => answer));
}
const goal = () => (fake ? demoGoal({ model: { provider: "openai-compatible" } }) : demoGoal());
const expectedTape = fake ? "plan → generate → execute → inspect → verified" : EXPECTED_TAPE;

/** Goals per minute for `total` goals submitted at once (or one at a time), on R runners of concurrency C. */
async function drain(runners: number, concurrency: number, oneAtATime: boolean): Promise<{ rate: number; states: string; cpu: string }> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    ...(fake ? { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: "fake-latency-7b" } : { LOOPSMITH_SCRIPTED_MODEL: "true" }),
    QUEUE_PREFIX: `loopsmith-bench-throughput-${process.pid}-${runners}x${concurrency}-${oneAtATime ? 1 : 0}`,
    RUNNER_CONCURRENCY: String(concurrency),
    RATE_LIMIT_PER_MINUTE: "100000",
    ...(values["tenant-cap"] !== undefined ? { TENANT_MAX_ACTIVE_GOALS: values["tenant-cap"] } : {}),
  };
  const stack = await startStack(env);
  const extra: Spawned[] = [];
  try {
    for (let i = 1; i < runners; i++) extra.push(spawnTs("apps/runner/src/main.ts", { ...env, LOG_LEVEL: "info", PORT: undefined }));
    await Promise.all(extra.map((r) => r.waitFor(/runner ready/, 180_000)));
    // One warm-up goal per layout: connections, pools and first imports are not what is measured.
    await runGoal<GoalView>(stack, goal());
    const started = performance.now();
    const cpuBefore = machineCpuMs();
    const ended: GoalView[] = [];
    const check = ({ goal }: { goal: GoalView }) => {
      if (goal.tape !== expectedTape) throw new Error(`unexpected tape ${goal.tape}`);
      ended.push(goal);
    };
    if (oneAtATime) for (let i = 0; i < total; i++) check(await runGoal<GoalView>(stack, goal()));
    else (await burst(stack, total)).forEach(check);
    const wallMs = performance.now() - started;
    const cpuAfter = machineCpuMs();
    // Where a goal's time went (medians over the goals, from their tapes: a state's time includes the wait
    // for its step's pickup), and how busy the machine was meanwhile (every process on it, this bench's too).
    const inStates = ended.map((g) => timeInStates(g.transitions));
    const names = [...new Set(inStates.flatMap((t) => Object.keys(t)))];
    const states = names.map((n) => `${n} ${median(inStates.map((t) => t[n] ?? 0)).toFixed(0)}`).join(", ");
    const busy = (100 * (cpuAfter.busy - cpuBefore.busy)) / (cpuAfter.total - cpuBefore.total);
    const cpu = `machine busy ${busy.toFixed(0)}%, ${((cpuAfter.busy - cpuBefore.busy) / 1000 / total).toFixed(1)} CPU-s per goal`;
    return { rate: (total / wallMs) * 60_000, states, cpu };
  } finally {
    for (const r of extra) r.child.kill("SIGTERM");
    await Promise.all(extra.map((r) => r.exited));
    await stack.stop();
  }
}

/**
 * Submits n goals at once and waits for all of them with one list request every 500 ms (polling each goal
 * as runGoal does loaded the machine: 16 goals at 250 ms were 64 GET /goals/:id a second, about half a core
 * of the API and Postgres taken from the runners being measured); then reads each ended goal once.
 */
async function burst(stack: Stack, n: number): Promise<{ goal: GoalView }[]> {
  const client = createClient({ url: stack.base, apiKey: stack.tenant.api_key });
  const ids = await Promise.all(
    Array.from({ length: n }, async () => {
      const { data, response } = await client.POST("/goals", { body: goal() as CreateGoal });
      if (response.status !== 202 || !data) throw new Error(`POST /goals -> ${response.status}`);
      return data.id;
    }),
  );
  const waiting = new Set(ids);
  while (waiting.size > 0) {
    await new Promise((r) => setTimeout(r, 500));
    let cursor: string | undefined;
    do {
      const { data } = await client.GET("/goals", { params: { query: { limit: 100, ...(cursor ? { cursor } : {}) } } });
      if (!data) throw new Error("GET /goals failed");
      for (const g of data.goals) if (["verified", "failed", "cancelled", "errored"].includes(g.state)) waiting.delete(g.id);
      cursor = data.next_cursor ?? undefined;
    } while (cursor);
  }
  return Promise.all(
    ids.map(async (id) => {
      const { data } = await client.GET("/goals/{id}", { params: { path: { id } } });
      if (!data) throw new Error(`GET /goals/${id} failed`);
      return { goal: data as unknown as GoalView };
    }),
  );
}

const rows: string[] = [];
const detail = (d: { states: string; cpu: string }) => `      ms per state (median): ${d.states}; ${d.cpu}`;
const first = await drain(1, 1, true);
const base = first.rate;
rows.push(`  one at a time (1 runner, concurrency 1)        ${base.toFixed(1).padStart(6)} goals/min   1.00x`, detail(first));
console.log(rows.slice(-2).join("\n"));
for (const layout of values.layouts.split(",").filter((l) => l && l !== "none")) {
  const [r, c] = layout.split("x").map(Number) as [number, number];
  const d = await drain(r, c, false);
  rows.push(`  burst of ${total}, ${r} runner(s) x concurrency ${c}`.padEnd(48) + `${d.rate.toFixed(1).padStart(6)} goals/min   ${(d.rate / base).toFixed(2)}x`, detail(d));
  console.log(rows.slice(-2).join("\n"));
}
const model = fake ? `a model answering after ${latencyMs} ms` : "the scripted model (no latency)";
console.log(`\nthroughput, ${total} demo goals of one tenant, ${model}, TENANT_MAX_ACTIVE_GOALS=${values["tenant-cap"] ?? "4 (default)"}:\n${rows.join("\n")}`);
await fake?.close();
