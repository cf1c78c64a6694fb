// Benchmark: the comparators on large artifacts, in-process and through the runner's check pool, beside
// a floor measured in the same run (JSON.parse / a plain split of the same bytes: what reading the data
// costs before any comparing). Prints medians of --runs runs.
//
//   npx tsx bench/checks.ts [--rows 100000] [--runs 5]
import { parseArgs } from "node:util";
import type { CheckSpec } from "@loopsmith/schemas";
import { createCheckPool, runCheck, type VerifyContext } from "@loopsmith/verifier";
import { median } from "./lib/stats";

const { values } = parseArgs({ options: { rows: { type: "string", default: "100000" }, runs: { type: "string", default: "5" } } });
const ROWS = Number(values.rows);
const RUNS = Number(values.runs);

const time = (f: () => unknown) => {
  const t = performance.now();
  f();
  return performance.now() - t;
};

const header = Array.from({ length: 10 }, (_, j) => `c${j}`);
const rows = Array.from({ length: ROWS }, (_, i) => header.map((_, j) => (j === 0 ? String(i) : j % 3 === 0 ? `name-${i}-${j}` : String((i * 7 + j) / 8))));
const csv = (rs: string[][]) => `${header.join(",")}\n${rs.map((r) => r.join(",")).join("\n")}\n`;
const expectedCsv = csv(rows);
const produced = rows.map((r) => [...r]);
produced[Math.floor(ROWS / 2)]![4] = "1.5";
const producedCsv = csv(produced);
const reversedCsv = csv(produced.slice().reverse());
const report = { rows: rows.map((r) => Object.fromEntries(header.map((h, j) => [h, j % 3 === 0 ? r[j] : Number(r[j])]))) };
const reportText = JSON.stringify(report);
// The dirty input csv_repair scores against: every 10th row's c1 off (so 10% of rows need a fix).
const dirtyCsv = csv(rows.map((r, i) => (i % 10 === 0 ? r.map((c, j) => (j === 1 ? `${c}x` : c)) : r)));

const ctx = (artifacts: Record<string, string>, checker: Record<string, string> = {}, inputs: Record<string, string> = {}): VerifyContext => ({
  exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 1,
  artifacts: Object.entries(artifacts).map(([name, t]) => ({ name, content: Buffer.from(t) })),
  artifactErrors: [], inputs: Object.entries(inputs).map(([name, t]) => ({ name, content: Buffer.from(t) })), checkerFiles: Object.entries(checker).map(([name, t]) => ({ name, content: Buffer.from(t) })), program: null, runs: [],
});
const spec = (id: string, params: Record<string, unknown>): CheckSpec => ({ id, params, kind: "deterministic", description: "" });

const cases: [string, CheckSpec, VerifyContext, () => unknown][] = [
  ["csv_matches strict", spec("csv_matches", { artifact: "out.csv", expected_file: "e.csv" }), ctx({ "out.csv": producedCsv }, { "e.csv": expectedCsv }), () => [producedCsv.split("\n").map((l) => l.split(",")), expectedCsv.split("\n").map((l) => l.split(","))]],
  ["csv_matches any order", spec("csv_matches", { artifact: "out.csv", expected_file: "e.csv", row_order: "any" }), ctx({ "out.csv": reversedCsv }, { "e.csv": expectedCsv }), () => [reversedCsv.split("\n").map((l) => l.split(",")), expectedCsv.split("\n").map((l) => l.split(","))]],
  ["csv_matches by key", spec("csv_matches", { artifact: "out.csv", expected_file: "e.csv", row_order: "key", key: ["c0"] }), ctx({ "out.csv": reversedCsv }, { "e.csv": expectedCsv }), () => [reversedCsv.split("\n").map((l) => l.split(",")), expectedCsv.split("\n").map((l) => l.split(","))]],
  ["csv_repair by key", spec("csv_repair", { artifact: "out.csv", expected_file: "e.csv", input_file: "in.csv", key: ["c0"], min_recall: 0.9 }), ctx({ "out.csv": reversedCsv }, { "e.csv": expectedCsv }, { "in.csv": dirtyCsv }), () => [reversedCsv, expectedCsv, dirtyCsv].map((t) => t.split("\n").map((l) => l.split(",")))],
  ["csv_schema 4 rules", spec("csv_schema", { artifact: "out.csv", rules: { c0: { type: "integer", unique: true, not_null: true }, c1: { type: "number", between: [0, 1e9] } } }), ctx({ "out.csv": producedCsv }), () => producedCsv.split("\n").map((l) => l.split(","))],
  ["row_count", spec("row_count", { artifact: "out.csv", min: 1 }), ctx({ "out.csv": producedCsv }), () => producedCsv.split("\n").length],
  ["json_matches", spec("json_matches", { artifact: "r.json", expected_file: "e.json", atol: 1e-9 }), ctx({ "r.json": reportText }, { "e.json": reportText }), () => [JSON.parse(reportText), JSON.parse(reportText)]],
  ["json_matches ignore_order", spec("json_matches", { artifact: "r.json", expected_file: "e.json", ignore_order: true }), ctx({ "r.json": reportText }, { "e.json": JSON.stringify({ rows: [...report.rows].reverse() }) }), () => [JSON.parse(reportText), JSON.parse(reportText)]],
  ["text_matches lines", spec("text_matches", { artifact: "out.csv", expected_file: "e.csv" }), ctx({ "out.csv": producedCsv }, { "e.csv": expectedCsv }), () => [producedCsv.split("\n"), expectedCsv.split("\n")]],
];

console.log(`${ROWS} rows x 10 columns (CSV ${(expectedCsv.length / 1e6).toFixed(1)} MB, JSON ${(reportText.length / 1e6).toFixed(1)} MB); medians of ${RUNS} runs`);
console.log(`${"check".padEnd(28)} ${"in-process".padStart(11)} ${"via pool".padStart(10)} ${"floor".padStart(8)}  verdict`);
const pool = createCheckPool({ timeoutMs: 120_000 });
await pool.warm();
try {
  for (const [name, s, c, floor] of cases) {
    const inProcess: number[] = [];
    const viaPool: number[] = [];
    const floors: number[] = [];
    let verdict = "";
    for (let i = 0; i < RUNS; i++) {
      floors.push(time(floor));
      inProcess.push(time(() => (verdict = runCheck(s, c).passed ? "passed" : "failed")));
      const t = performance.now();
      await pool.run([s], c);
      viaPool.push(performance.now() - t);
    }
    console.log(`${name.padEnd(28)} ${`${Math.round(median(inProcess))} ms`.padStart(11)} ${`${Math.round(median(viaPool))} ms`.padStart(10)} ${`${Math.round(median(floors))} ms`.padStart(8)}  ${verdict}`);
  }
} finally {
  await pool.close();
}
console.log("floor: splitting (CSV) or JSON.parse of the same bytes; via pool includes copying the evidence to the check thread");
