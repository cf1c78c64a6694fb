// Benchmark: a 7-tick schedule on changing inputs, against real API and runner processes, Postgres, Redis
// and Docker (scripted model). Tick 1 has clean numbers (the model's first, naive program is right and is
// pinned); tick 2 brings currency strings and blank regions (the pin fails and the loop repairs it); ticks
// 3-7 bring new messy files of other sizes (the repaired pin holds). Per tick it prints the outcome, the
// model calls, the attempts and the wall time, beside the same inputs submitted as plain goals in the
// same run (no pin: every goal plans and generates from scratch).
//
//   npx tsx bench/schedule.ts [--ticks 7]
import { parseArgs } from "node:util";
import type { GoalView, ScheduleGoal, ScheduleView } from "@loopsmith/schemas";
import { demoGoal, demoScript, INSPECT_VERIFIED, program, SALES_CSV, SCRIPT_CORRECT, SCRIPT_CRASHES } from "../scripts/demo/scenario";
import { runGoal, startStack } from "../scripts/lib/stack";

const { values } = parseArgs({ options: { ticks: { type: "string", default: "7" } } });
const TICKS = Math.max(3, Number(values.ticks));

const CLEAN_CSV = "order_id,date,region,product,revenue\n1,2024-03-01,North,Widget,100.50\n2,2024-03-02,South,Gadget,200.00\n3,2024-03-03,North,Gizmo,50.25\n";

/** A messy file of `rows` rows: currency strings with thousands separators, padded and blank regions. */
function messyCsv(seed: number, rows: number): string {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const regions = ["North", "South", "East", "West", " North ", ""];
  const lines = ["order_id,date,region,product,revenue"];
  for (let i = 0; i < rows; i++) {
    const cents = Math.floor(next() * 500_000);
    const amount = (cents / 100).toLocaleString("en-US", { minimumFractionDigits: 2 });
    lines.push(`${seed * 1000 + i},2024-05-${String((i % 28) + 1).padStart(2, "0")},${regions[Math.floor(next() * regions.length)]},Widget,"$${amount}"`);
  }
  return lines.join("\n") + "\n";
}

const inputsOf = (tick: number) => [{ name: "sales.csv", text: tick === 1 ? CLEAN_CSV : tick === 2 ? SALES_CSV : messyCsv(tick, 20 * tick) }];
const goalBody = (tick: number) =>
  demoGoal({
    inputs: inputsOf(tick),
    model: { provider: "scripted", script: { ...demoScript(), generate: program(SCRIPT_CRASHES), inspect: [INSPECT_VERIFIED], refine: [program(SCRIPT_CORRECT)] } },
  });

const stack = await startStack({ ...process.env, LOOPSMITH_SCRIPTED_MODEL: "true", QUEUE_PREFIX: `loopsmith-bench-schedule-${process.pid}` });
const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
  const res = await fetch(`${stack.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${stack.tenant.api_key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path} -> ${res.status} ${await res.text()}`);
  return (res.status === 204 ? null : await res.json()) as T;
};
const getGoal = (id: string) => call<GoalView>("GET", `/goals/${id}`);

try {
  console.log(`api + runner ready in ${Math.round(stack.startMs)} ms`);
  // The same inputs as plain goals first: the baseline.
  const plain: GoalView[] = [];
  for (let t = 1; t <= TICKS; t++) plain.push((await runGoal<GoalView>(stack, goalBody(t))).goal);

  const s = await call<ScheduleView>("POST", "/schedules", { name: "bench", goal: goalBody(1), every_seconds: 1, skip_unchanged: true });
  const ticks: { goal: GoalView; outcome: string }[] = [];
  for (let t = 1; t <= TICKS; t++) {
    if (t > 1) await call("PUT", `/schedules/${s.id}/inputs`, { inputs: inputsOf(t) });
    for (;;) {
      const { goals } = await call<{ goals: ScheduleGoal[] }>("GET", `/schedules/${s.id}/goals?limit=100`);
      if (goals.length > t) throw new Error(`tick ${t}: ${goals.length} goals`);
      const latest = goals.length === t ? goals[0]! : undefined;
      if (latest && latest.tick_outcome !== "running") {
        ticks.push({ goal: await getGoal(latest.id), outcome: latest.tick_outcome });
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await call("DELETE", `/schedules/${s.id}`);

  console.log(`\n${TICKS} ticks on changing inputs (a plain goal per tick beside each):`);
  console.log("tick  rows  outcome    model calls  attempts  wall ms   | plain goal: model calls  attempts  wall ms");
  for (let i = 0; i < TICKS; i++) {
    const { goal, outcome } = ticks[i]!;
    const p = plain[i]!;
    const rows = inputsOf(i + 1)[0]!.text.trim().split("\n").length - 1;
    console.log(
      `${String(i + 1).padStart(4)}  ${String(rows).padStart(4)}  ${outcome.padEnd(9)}  ${String(goal.cost.model_calls).padStart(11)}  ${String(goal.attempts).padStart(8)}  ${String(goal.cost.wall_time_ms).padStart(7)}   | ${String(p.cost.model_calls).padStart(22)}  ${String(p.attempts).padStart(8)}  ${String(p.cost.wall_time_ms).padStart(7)}`,
    );
  }
  const held = ticks.filter((t) => t.outcome === "held");
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  console.log(
    `\nmodel calls in all: schedule ${sum(ticks.map((t) => t.goal.cost.model_calls))}, plain goals ${sum(plain.map((g) => g.cost.model_calls))}; ` +
      `held ticks ${held.length} of ${TICKS}, median wall ${median(held.map((t) => t.goal.cost.wall_time_ms))} ms (plain goals on the same inputs: ${median(plain.slice(2).map((g) => g.cost.wall_time_ms))} ms)`,
  );
  const outcomes = ticks.map((t) => t.outcome).join(",");
  const expected = ["verified", "healed", ...Array(TICKS - 2).fill("held")].join(",");
  if (outcomes !== expected) throw new Error(`tick outcomes ${outcomes}, expected ${expected}`);
} finally {
  await stack.stop();
}
