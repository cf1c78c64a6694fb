// Mutation testing of the pure core: `npm run mutate [target ...]`. For each target, StrykerJS mutates
// its source files and runs the target's unit tests (no services) against every mutant; a mutant no test
// notices ("survived") is a change in behaviour the tests would let through. Prints one row per target
// and exits 1 when a target scores below its committed threshold. Not part of `npm test`: it is slow
// (minutes per target on two cores). Reports: reports/mutation/<target>.json (Stryker's mutation-testing
// report schema; open with any mutation-testing-elements viewer).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot } from "./lib/proc";
import { TARGETS } from "../mutation/targets";

const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !TARGETS.some((t) => t.name === w));
if (unknown.length) {
  console.error(`unknown target(s) ${unknown.join(", ")}; targets: ${TARGETS.map((t) => t.name).join(", ")}`);
  process.exit(2);
}
const targets = wanted.length ? TARGETS.filter((t) => wanted.includes(t.name)) : TARGETS;
const reports = join(repoRoot, "reports", "mutation");
mkdirSync(reports, { recursive: true });

interface Mutant {
  status: string;
}
const rows: { name: string; score: number; killed: number; survived: number; noCoverage: number; threshold: number; seconds: number }[] = [];
for (const t of targets) {
  const report = join(reports, `${t.name}.json`);
  const config = join(reports, `${t.name}.stryker.json`);
  writeFileSync(
    config,
    JSON.stringify(
      {
        testRunner: "vitest",
        vitest: { configFile: "mutation/vitest.config.ts", related: false },
        mutate: t.mutate,
        // mutation/ignore-docs.mjs: .describe() and .meta() arguments are documentation, not behaviour.
        plugins: ["@stryker-mutator/*", join(repoRoot, "mutation", "ignore-docs.mjs")],
        ignorers: ["docs"],
        // Static mutants (module-level code: param schemas, constants) rerun every test of the target;
        // a target may skip them when that makes the run too slow (see mutation/targets.ts).
        ignoreStatic: t.ignoreStatic ?? false,
        reporters: ["clear-text", "json", "progress-append-only"],
        clearTextReporter: { allowColor: false, logTests: false, reportScoreTable: true },
        jsonReporter: { fileName: report },
        concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 2),
        coverageAnalysis: "perTest",
        timeoutMS: 20_000,
        dryRunTimeoutMinutes: 15,
        // A rerun tests again only the mutants whose code or covering tests changed since the last run. Not
        // for targets with static mutants: a rerun keeps a static mutant's old "survived" even when new
        // tests kill it (seen on schemas), so those always run in full.
        incremental: t.ignoreStatic ?? false,
        incrementalFile: join(reports, `${t.name}.incremental.json`),
        // One sandbox folder per target, so that two targets can run side by side.
        tempDirName: join(".stryker-tmp", t.name),
        cleanTempDir: "always",
        thresholds: { high: 95, low: t.threshold, break: null },
      },
      null,
      2,
    ),
  );
  console.log(`\n== ${t.name}: mutating ${t.mutate.join(" ")} against ${t.tests.join(" ")}`);
  const started = Date.now();
  const run = spawnSync("npx", ["stryker", "run", config], {
    cwd: repoRoot,
    stdio: "inherit",
    env: { ...process.env, MUTATE_TESTS: t.tests.join(","), MUTATE_STATIC: t.ignoreStatic ? "0" : "1" },
  });
  if (run.status !== 0) {
    console.error(`stryker failed for ${t.name} (exit ${run.status})`);
    process.exit(1);
  }
  const files = (JSON.parse(readFileSync(report, "utf8")) as { files: Record<string, { mutants: Mutant[] }> }).files;
  const all = Object.values(files).flatMap((f) => f.mutants);
  const count = (s: string) => all.filter((m) => m.status === s).length;
  const detected = count("Killed") + count("Timeout");
  const valid = detected + count("Survived") + count("NoCoverage");
  rows.push({
    name: t.name,
    score: valid ? (100 * detected) / valid : 100,
    killed: detected,
    survived: count("Survived"),
    noCoverage: count("NoCoverage"),
    threshold: t.threshold,
    seconds: Math.round((Date.now() - started) / 1000),
  });
}

console.log("\n| target | score | threshold | detected | survived | no coverage | time |");
console.log("|---|---|---|---|---|---|---|");
for (const r of rows)
  console.log(`| ${r.name} | ${r.score.toFixed(1)}% | ${r.threshold}% | ${r.killed} | ${r.survived} | ${r.noCoverage} | ${r.seconds} s |`);
const below = rows.filter((r) => r.score < r.threshold);
if (below.length) {
  console.error(`\nbelow threshold: ${below.map((r) => `${r.name} ${r.score.toFixed(1)}% < ${r.threshold}%`).join(", ")}`);
  process.exit(1);
}
