// Replay a folder of exported goals (GET /goals/:id/script) against a local stack (API and runner as real
// processes, scripted model, real sandbox and checks) and print, for each, the original's state and tape
// against the replay's, the check results that changed, and the time; then the judge agreement report of
// the originals (from their tapes) and of the replays (GET /reports/judges). Exits 1 when a replay differs.
//
//   npx tsx bench/replay.ts [--dir tests/fixtures/replay]
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { compareRuns, describeComparison, judgeReport } from "@loopsmith/replay";
import type { GoalScript, GoalView, JudgeCounts, JudgeReport } from "@loopsmith/schemas";
import { runGoal, startStack } from "../scripts/lib/stack";

const { values } = parseArgs({ options: { dir: { type: "string", default: "tests/fixtures/replay" } } });
const files = (await readdir(values.dir)).filter((n) => n.endsWith(".json")).sort();
if (files.length === 0) {
  console.error(`no exported goals (*.json) in ${values.dir}`);
  process.exit(64);
}
const scripts = await Promise.all(files.map(async (f) => ({ file: f, doc: JSON.parse(await readFile(path.join(values.dir, f), "utf8")) as GoalScript })));

const stack = await startStack({ ...process.env, LOOPSMITH_SCRIPTED_MODEL: "true", QUEUE_PREFIX: `loopsmith-replay-${process.pid}` });
let differing = 0;
const started = new Date(Date.now() - 1000);
try {
  console.log(`api + runner ready in ${Math.round(stack.startMs)} ms; replaying ${files.length} goal(s) from ${values.dir}\n`);
  for (const { file, doc } of scripts) {
    const t0 = performance.now();
    const { goal } = await runGoal<GoalView>(stack, doc.body);
    const ms = Math.round(performance.now() - t0);
    const cmp = compareRuns(doc.original, goal);
    if (!cmp.same) differing++;
    console.log(`${file}  (${doc.original.provider}/${doc.original.model ?? "-"}, exported from ${doc.original.loopsmith_version ?? "unknown"})`);
    console.log(`  original: ${doc.original.state.padEnd(8)} ${doc.original.tape}  (${doc.original.wall_time_ms ?? "?"} ms)`);
    console.log(`  replayed: ${goal.state.padEnd(8)} ${goal.tape}  (${ms} ms, ${goal.cost.sandbox_ms} ms in programs)`);
    if (doc.gaps.length) console.log(`  gaps (placeholders): ${doc.gaps.join(", ")}`);
    for (const line of describeComparison(cmp)) console.log(`  ${cmp.same ? "" : "! "}${line}`);
    console.log("");
  }

  const originals = judgeReport(
    scripts.map(({ doc }) => ({ id: doc.goal_id, state: doc.original.state, transitions: doc.original.transitions, calls: [] })),
    { since: new Date(0), until: new Date() },
  );
  const res = await fetch(`${stack.base}/reports/judges?since=${encodeURIComponent(started.toISOString())}`, { headers: { authorization: `Bearer ${stack.tenant.api_key}` } });
  const replays = (await res.json()) as JudgeReport;
  const row = (name: string, c: JudgeCounts) =>
    `${name.padEnd(10)} ${String(c.goals).padStart(5)} ${String(c.inspections).padStart(11)} ${String(c.agree).padStart(6)} ${String(c.false_accepts).padStart(13)} ${String(c.false_rejects).padStart(13)} ${String(c.false_reject_attempts).padStart(9)}`;
  console.log("judge agreement (inspector model vs deterministic checks)");
  console.log(`${"".padEnd(10)} goals inspections  agree false_accepts false_rejects attempts*`);
  console.log(row("originals", originals.tenant));
  console.log(row("replays", replays.tenant));
  const vetoes = originals.by_check.map((c) => `${c.id} ${c.false_accepts}`).join(", ");
  console.log(`checks that vetoed the inspector (originals): ${vetoes || "none"}`);
  console.log("* attempts run after a false reject (the replays' tokens are the scripted model's estimates)");
  console.log(`\n${scripts.length - differing} of ${scripts.length} replay(s) match their original`);
} finally {
  await stack.stop();
}
process.exit(differing > 0 ? 1 : 0);
