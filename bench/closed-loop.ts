// Benchmark: the running example (3 attempts, scripted model) end to end through the HTTP API, against
// real API and runner processes, Postgres, Redis and Docker. Prints where a goal's time goes.
//
//   npx tsx bench/closed-loop.ts [--goals 10] [--concurrent 1] [--pool 0,default]
//
// --concurrent N submits N goals at a time (the runner takes RUNNER_CONCURRENCY from the environment).
// --pool runs the whole bench once per SANDBOX_POOL_SIZE listed, one after the other in this run
// ("default": the runner's own, RUNNER_CONCURRENCY; 0: no pool, every run in a container started for it),
// and ends with the EXECUTE times side by side: the sandbox pool's before and after (issue 12).
import { parseArgs } from "node:util";
import type { GoalView } from "@loopsmith/schemas";
import { demoGoal, EXPECTED_TAPE } from "../scripts/demo/scenario";
import { freePort, runGoal, startStack, timeInStates } from "../scripts/lib/stack";
import { samples } from "../packages/metrics/test/parse";
import { containersCpuMs, cpuSince, cpuSnapshot, pidsNamed } from "./lib/cpu";
import { pct } from "./lib/stats";

const { values } = parseArgs({
  options: { goals: { type: "string", default: "10" }, concurrent: { type: "string", default: "1" }, pool: { type: "string", default: "default" } },
});
const total = Number(values.goals);
// How often the bench asks for each goal. Its figures come from the goal's own timestamps, not from when the bench
// saw the end; each GET /goals/:id is about ten queries, and at 10 a second the polling loaded the two cores the
// runner and the sandbox share.
const POLL_MS = 1000;
const concurrent = Number(values.concurrent);

const stat = (xs: number[]) => `median ${pct(xs, 50)} ms, p90 ${pct(xs, 90)} ms`;

const summary: string[] = [];
for (const size of values.pool.split(",")) {
  const env: Record<string, string | undefined> = { ...process.env, LOOPSMITH_SCRIPTED_MODEL: "true", QUEUE_PREFIX: `loopsmith-bench-${process.pid}-${size}` };
  if (size !== "default") env.SANDBOX_POOL_SIZE = size;
  // The runner's own timers of each step's parts (loopsmith_step_phase_duration_seconds), read before and after.
  env.RUNNER_METRICS_PORT = String(await freePort());
  console.log(`-- SANDBOX_POOL_SIZE=${env.SANDBOX_POOL_SIZE ?? "(default: RUNNER_CONCURRENCY)"}`);
  const stack = await startStack(env);
  try {
    console.log(`api + runner ready in ${Math.round(stack.startMs)} ms`);
    // One warm-up goal: first-use costs (connections, module loading) are not what is measured.
    await runGoal<GoalView>(stack, demoGoal(), POLL_MS);

    const goals: GoalView[] = [];
    // CPU per goal by party: the runner process (its main thread, check threads and pool worker), the API
    // (answering the bench's polls too), Postgres, and the whole machine (the sandbox containers and the
    // engine's own processes are most of what is left).
    const parties = {
      runner: () => [stack.runner.child.pid!],
      api: () => [stack.api.child.pid!],
      postgres: () => pidsNamed(/^postgres$/),
      // Long-lived engine processes; a container's short-lived runc processes count only in the machine's.
      engine: () => pidsNamed(/^(dockerd|containerd|containerd-shim)/),
    };
    const scrape = async () => samples(await (await fetch(`http://127.0.0.1:${env.RUNNER_METRICS_PORT}/metrics`)).text());
    const metricsBefore = await scrape();
    const cpuBefore = cpuSnapshot(parties);
    const containersBefore = containersCpuMs();
    const started = performance.now();
    for (let i = 0; i < total; i += concurrent) {
      const batch = Array.from({ length: Math.min(concurrent, total - i) }, () => runGoal<GoalView>(stack, demoGoal(), POLL_MS));
      for (const { goal } of await Promise.all(batch)) {
        if (goal.tape !== EXPECTED_TAPE) throw new Error(`unexpected tape ${goal.tape}`);
        goals.push(goal);
      }
    }
    const elapsed = performance.now() - started;
    const metricsAfter = await scrape();
    const cpu = cpuSince(cpuBefore, cpuSnapshot(parties));
    const containers = containersCpuMs() - containersBefore;

    const states = goals.map((g) => timeInStates(g.transitions));
    const col = (f: (g: GoalView, s: Record<string, number>) => number) => goals.map((g, i) => Math.round(f(g, states[i]!)));
    console.log(`${goals.length} goals, ${concurrent} at a time, in ${(elapsed / 1000).toFixed(1)} s (${((goals.length / elapsed) * 60_000).toFixed(1)} goals/min)`);
    console.log(`goal wall (POST to verified):          ${stat(col((g) => g.cost.wall_time_ms))}`);
    console.log(`  in EXECUTE (3 container runs):       ${stat(col((_, s) => s.execute ?? 0))}`);
    console.log(`    of which the programs ran:         ${stat(col((g) => g.cost.sandbox_ms))}`);
    console.log(`  in PLAN/GENERATE/REFINE (4 turns):   ${stat(col((_, s) => (s.plan ?? 0) + (s.generate ?? 0) + (s.refine ?? 0)))}`);
    console.log(`  in INSPECT (checks + 3 turns):       ${stat(col((_, s) => s.inspect ?? 0))}`);
    console.log(`  model latency reported (scripted):   ${stat(col((g) => g.cost.model_latency_ms))}`);
    // The control plane: everything but the sandbox runs (planning a step, loading its evidence, the checks,
    // the model turn, the commit, the queue hop). The target is at most 10% of the goal's wall time.
    const plane = col((g) => g.cost.wall_time_ms - g.cost.sandbox_ms);
    const share = goals.map((g) => (100 * (g.cost.wall_time_ms - g.cost.sandbox_ms)) / g.cost.wall_time_ms);
    console.log(`control plane (wall - sandbox runs):   ${stat(plane)}; median ${pct(share, 50).toFixed(0)}% of the goal (target <= 10%: ${pct(share, 50) <= 10 ? "met" : "NOT met"})`);
    const perGoal = (ms: number) => `${Math.round(ms / goals.length)} ms`;
    console.log(
      `CPU per goal:                          runner ${perGoal(cpu.parties.runner!)}, API ${perGoal(cpu.parties.api!)}, Postgres ${perGoal(cpu.parties.postgres!)}, ` +
        `engine ${perGoal(cpu.parties.engine!)}, inside containers ${Number.isNaN(containers) ? "(not measured here)" : perGoal(containers)}; ` +
        `machine ${perGoal(cpu.machineBusy)} (${Math.round((100 * cpu.machineBusy) / cpu.machineTotal)}% busy)`,
    );
    printPhases(metricsBefore, metricsAfter, goals);
    console.log(`per EXECUTE step:                      ${stat(goals.flatMap((g) => timeInStatesList(g, "execute")))}`);
    console.log(`per model step (PLAN/GENERATE/REFINE): ${stat(goals.flatMap((g) => ["plan", "generate", "refine"].flatMap((s) => timeInStatesList(g, s))))}`);
    summary.push(
      `pool ${size.padEnd(8)} EXECUTE per goal ${stat(col((_, s) => s.execute ?? 0))}; per EXECUTE step ${stat(goals.flatMap((g) => timeInStatesList(g, "execute")))}`,
    );
  } finally {
    await stack.stop();
  }
}
if (summary.length > 1) console.log(`\n${summary.join("\n")}`);

function timeInStatesList(g: GoalView, state: string): number[] {
  return g.transitions.flatMap((t, i) => (t.to === state && g.transitions[i + 1] ? [Date.parse(g.transitions[i + 1]!.at) - Date.parse(t.at)] : []));
}

type Samples = Awaited<ReturnType<typeof samples>>;

/** Milliseconds per goal of each step part, from the runner's histograms' sums between two scrapes. */
function printPhases(before: Samples, after: Samples, goals: GoalView[]): void {
  const sum = (xs: Samples, name: string, match: (l: Record<string, string>) => boolean) =>
    xs.filter((x) => x.name === name && match(x.labels)).reduce((n, x) => n + x.value, 0);
  const grew = (name: string, match: (l: Record<string, string>) => boolean) => (1000 * (sum(after, name, match) - sum(before, name, match))) / goals.length;
  const phases = ["read", "handler", "commit", "schedule"] as const;
  console.log(`per goal, by the runner's timers (ms): state: ${phases.join(" / ")}`);
  let steps = 0;
  for (const state of ["plan", "generate", "execute", "inspect", "refine"]) {
    const ms = phases.map((phase) => grew("loopsmith_step_phase_duration_seconds_sum", (l) => l.state === state && l.phase === phase));
    steps += ms.reduce((a, b) => a + b, 0);
    console.log(`  ${state.padEnd(9)} ${ms.map((m) => m.toFixed(1)).join(" / ")}`);
  }
  const runs = grew("loopsmith_sandbox_run_duration_seconds_sum", () => true);
  const executeHandler = grew("loopsmith_step_phase_duration_seconds_sum", (l) => l.state === "execute" && l.phase === "handler");
  const handOver = grew("loopsmith_queue_job_latency_seconds_sum", (l) => l.queue === "goals");
  // The runner times a sandbox run from the call, so a wait for the pool's container counts as the run's here
  // (not in the goal's sandbox_ms, which starts at the request).
  console.log(`  EXECUTE's handler besides its sandbox runs (pool waits in the runs) ${(executeHandler - runs).toFixed(1)} ms; the queue's hand-overs ${handOver.toFixed(1)} ms`);
  // The control plane above, taken apart (means, where the lines above are medians): the steps' own parts,
  // the hand-overs between them, and the part of each sandbox run that is not the goal's sandbox_ms (waiting
  // for the pool's container to exist, taking it, inspecting and handing it back); the rest is the submit
  // and what falls between the timers, less the move to verified's commit and what it schedules, which the steps
  // count and the goal's wall time (it ends at that move's tape row) does not: so the rest can be negative.
  const mean = (f: (g: GoalView) => number) => goals.reduce((n, g) => n + f(g), 0) / goals.length;
  const plane = mean((g) => g.cost.wall_time_ms - g.cost.sandbox_ms);
  const ownSteps = steps - runs;
  const outsideProgram = runs - mean((g) => g.cost.sandbox_ms);
  const rest = plane - ownSteps - handOver - outsideProgram;
  console.log(
    `control plane, mean ${plane.toFixed(0)} ms per goal = the steps' own work ${ownSteps.toFixed(0)} + hand-overs ${handOver.toFixed(0)} + ` +
      `sandbox runs outside sandbox_ms ${outsideProgram.toFixed(0)} (the pool's container being made, taken, handed back) + the rest ${rest.toFixed(0)} (the submit and gaps, less the last commit)`,
  );
}
