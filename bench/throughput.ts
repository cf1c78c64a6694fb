// Benchmark: how fast one tenant's burst of demo goals drains (goals per minute), for several runner
// layouts, beside the one-goal-at-a-time figure measured first in the same run. Real API and runner
// processes, Postgres, Redis and Docker; the scripted model (no provider latency), so the sandbox and the
// machine's CPU are the limits.
//
//   npx tsx bench/throughput.ts [--goals 20] [--layouts 1x1,1x2,1x4,2x2] [--tenant-cap 0]
//
// A layout RxC is R runner processes with RUNNER_CONCURRENCY=C (each with the default pool: C idle
// containers). --tenant-cap sets TENANT_MAX_ACTIVE_GOALS for every layout (default 4; 0: no cap, what a
// single-tenant deployment should run: docs/operations.md).
import { parseArgs } from "node:util";
import type { GoalView } from "@loopsmith/schemas";
import { demoGoal, EXPECTED_TAPE } from "../scripts/demo/scenario";
import { spawnTs, type Spawned } from "../scripts/lib/proc";
import { runGoal, startStack } from "../scripts/lib/stack";

const { values } = parseArgs({
  options: { goals: { type: "string", default: "20" }, layouts: { type: "string", default: "1x1,1x2,1x4,2x2" }, "tenant-cap": { type: "string" } },
});
const total = Number(values.goals);

/** Goals per minute for `total` goals submitted at once (or one at a time), on R runners of concurrency C. */
async function drain(runners: number, concurrency: number, oneAtATime: boolean): Promise<number> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    LOOPSMITH_SCRIPTED_MODEL: "true",
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
    await runGoal<GoalView>(stack, demoGoal());
    const started = performance.now();
    const check = ({ goal }: { goal: GoalView }) => {
      if (goal.tape !== EXPECTED_TAPE) throw new Error(`unexpected tape ${goal.tape}`);
    };
    if (oneAtATime) for (let i = 0; i < total; i++) check(await runGoal<GoalView>(stack, demoGoal()));
    else (await Promise.all(Array.from({ length: total }, () => runGoal<GoalView>(stack, demoGoal(), 250)))).forEach(check);
    return (total / (performance.now() - started)) * 60_000;
  } finally {
    for (const r of extra) r.child.kill("SIGTERM");
    await Promise.all(extra.map((r) => r.exited));
    await stack.stop();
  }
}

const rows: string[] = [];
const base = await drain(1, 1, true);
rows.push(`  one at a time (1 runner, concurrency 1)        ${base.toFixed(1).padStart(6)} goals/min   1.00x`);
console.log(rows.at(-1));
for (const layout of values.layouts.split(",")) {
  const [r, c] = layout.split("x").map(Number) as [number, number];
  const rate = await drain(r, c, false);
  rows.push(`  burst of ${total}, ${r} runner(s) x concurrency ${c}`.padEnd(48) + `${rate.toFixed(1).padStart(6)} goals/min   ${(rate / base).toFixed(2)}x`);
  console.log(rows.at(-1));
}
console.log(`\nthroughput, ${total} demo goals of one tenant, TENANT_MAX_ACTIVE_GOALS=${values["tenant-cap"] ?? "4 (default)"}:\n${rows.join("\n")}`);
