// Benchmark: what keeping a goal's material (inputs, checker files, workspace, frozen plan) between its
// steps saves when the inputs are large. The demo goal (3 attempts, scripted model) with its sales CSV
// grown to --mb megabytes, run end to end through real API and runner processes twice in this run: with
// RUNNER_GOAL_CACHE_MB=0 (every step reads the material from Postgres, the baseline) and with the default.
// Also times one read of those inputs through Prisma against the kept value.
//
//   npx tsx bench/goal-material.ts [--mb 8] [--goals 3]
import { parseArgs } from "node:util";
import type { GoalView } from "@loopsmith/schemas";
import { createPrisma } from "@loopsmith/db";
import { loadInputs } from "../apps/runner/src/states/evidence";
import { createGoalMaterial } from "../apps/runner/src/states/material";
import { demoGoal, SALES_CSV } from "../scripts/demo/scenario";
import { runGoal, startStack } from "../scripts/lib/stack";
import { pct } from "./lib/stats";

const { values } = parseArgs({ options: { mb: { type: "string", default: "8" }, goals: { type: "string", default: "3" } } });
const [header, ...rows] = SALES_CSV.trimEnd().split("\n");
const body = `${rows.join("\n")}\n`;
const csv = `${header}\n${body.repeat(Math.max(1, Math.floor((Number(values.mb) * 1024 * 1024) / body.length)))}`;
const goalBody = () => demoGoal({ inputs: [{ name: "sales.csv", text: csv }] });
console.log(`input: sales.csv, ${(csv.length / 1048576).toFixed(1)} MB; ${values.goals} goals per setting, one at a time, runc unless SANDBOX_RUNTIME says otherwise`);

const results: string[] = [];
for (const cacheMb of ["0", "64"]) {
  const stack = await startStack({ ...process.env, LOOPSMITH_SCRIPTED_MODEL: "true", SANDBOX_RUNTIME: process.env.SANDBOX_RUNTIME ?? "runc", RUNNER_GOAL_CACHE_MB: cacheMb, QUEUE_PREFIX: `loopsmith-bench-material-${process.pid}-${cacheMb}` });
  try {
    await runGoal<GoalView>(stack, goalBody(), 500); // warm-up
    const goals: GoalView[] = [];
    for (let i = 0; i < Number(values.goals); i++) goals.push((await runGoal<GoalView>(stack, goalBody(), 500)).goal);
    const wall = goals.map((g) => g.cost.wall_time_ms);
    const plane = goals.map((g) => g.cost.wall_time_ms - g.cost.sandbox_ms);
    results.push(
      `RUNNER_GOAL_CACHE_MB=${cacheMb.padEnd(3)} goal wall median ${pct(wall, 50)} ms, outside the sandbox runs median ${pct(plane, 50)} ms (tapes: ${[...new Set(goals.map((g) => g.tape))].length} distinct, states ${[...new Set(goals.map((g) => g.state))].join(",")})`,
    );
    if (cacheMb === "0") {
      // One read of the goal's inputs as a step made it before, against the kept value.
      const prisma = createPrisma(process.env.DATABASE_URL ?? "postgresql://postgres:postgres@127.0.0.1:5432/loopsmith");
      const id = goals[0]!.id;
      const reads: number[] = [];
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        await loadInputs(prisma, id);
        reads.push(performance.now() - t);
      }
      const kept = createGoalMaterial(prisma, 64 * 1024 * 1024);
      await kept.inputs(id);
      const t = performance.now();
      await kept.inputs(id);
      results.push(`one read of the inputs through Prisma: median ${pct(reads.map(Math.round), 50)} ms; the kept value: ${(performance.now() - t).toFixed(3)} ms`);
      await prisma.$disconnect();
    }
  } finally {
    await stack.stop();
  }
}
console.log(results.join("\n"));
