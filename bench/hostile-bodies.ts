// Benchmark (issue 25): what hostile JSON bodies cost a real API process. Before the pre-parse scan, a
// 15 MiB integer literal held the event loop for 21.9 s (BigInt) and came back in the 400, and a 10 MB
// "[[[[...]]]]" took 17-25 s and about 1 GB to refuse: every other request of the process waited. For
// each body below, one client sends it over and over for a few seconds to a listening API while another
// process samples GET /healthz; printed beside the /healthz latency of the same process unloaded, in
// the same run. An honest 10 MB CSV goal (accepted) is the last row, for scale.
//
//   npx tsx bench/hostile-bodies.ts [--seconds 4]
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { demoGoal } from "../scripts/demo/scenario";
import { spawnTs } from "../scripts/lib/proc";
import { createTenantWithCli, freePort } from "../scripts/lib/stack";
import { stat } from "./lib/stats";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "4" } } });
const windowMs = Number(values.seconds) * 1000;

const line = "2024-01-01,North,Widget,3,$1,299.00,notes about this sale that make the line longer\n";
const MB = 1024 * 1024;
const bodies: [string, () => string][] = [
  ["15 MiB integer literal", () => `{"objective":"x","n":${"9".repeat(15 * MB)}}`],
  ["10 MB of nested arrays (5 million deep)", () => "[".repeat(5_000_000) + "]".repeat(5_000_000)],
  ['10 MB of nested objects ({"a":{"a":...)', () => '{"a":'.repeat(1_700_000) + "1" + "}".repeat(1_700_000)],
  ["9 MB of empty objects (3 million, flat)", () => "[" + "{},".repeat(3_000_000) + "{}]"],
  ["10 MB of numbers (5 million, flat)", () => "[" + "0,".repeat(5_000_000) + "0]"],
  ["honest: a goal with a 10 MB CSV input", () => JSON.stringify(demoGoal({ inputs: [{ name: "sales.csv", text: line.repeat(Math.floor((10 * MB) / line.length)) }] }))],
];

const port = await freePort();
const env = {
  ...process.env,
  PORT: String(port),
  LOG_LEVEL: "info",
  LOOPSMITH_SCRIPTED_MODEL: "true",
  RATE_LIMIT_PER_MINUTE: "0",
  QUEUE_PREFIX: `loopsmith-bench-hostile-${process.pid}`,
};
const tenant = await createTenantWithCli(env, `bench-hostile-${process.pid}`);
const api = spawnTs("apps/api/src/server.ts", env);
await api.waitFor(/Server listening/, 60_000);
let stopping = false;
void api.exited.then(({ code, signal }) => {
  if (!stopping) console.error(`the API exited (${code ?? signal}) during the run:\n${api.output().slice(-4000)}`);
});
const base = `http://127.0.0.1:${port}`;
const pid = api.child.pid!;
const hwm = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024;

/** /healthz latencies sampled every 20 ms for `ms`, from a process of its own (this one is busy sending). */
function probe(ms: number): Promise<number[]> {
  const code = `const end = Date.now() + ${ms}; const xs = [];
    (async () => { while (Date.now() < end) { const t = performance.now(); await (await fetch("${base}/healthz")).arrayBuffer();
      xs.push(performance.now() - t); await new Promise((r) => setTimeout(r, 20)); } console.log(JSON.stringify(xs)); })();`;
  const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) => child.on("exit", () => resolve(JSON.parse(out) as number[])));
}

async function send(body: string) {
  const t = performance.now();
  const res = await fetch(`${base}/goals`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${tenant.api_key}` }, body });
  const text = await res.text();
  const code = res.status < 300 ? "" : ((JSON.parse(text) as { error?: { code?: string } }).error?.code ?? "?");
  return { ms: performance.now() - t, label: `${res.status} ${code}`.trim(), answerBytes: text.length };
}

try {
  await send(JSON.stringify(demoGoal())); // warm-up: the first request compiles the route code
  const idle = await probe(2000);
  console.log(`hostile bodies: one client sending each body back to back for ${windowMs / 1000} s; /healthz sampled every 20 ms meanwhile`);
  console.log(`  /healthz unloaded (same process, same run)   ${stat(idle)}`);
  for (const [label, make] of bodies) {
    const body = make();
    const hwmBefore = hwm();
    const during = probe(windowMs);
    const end = Date.now() + windowMs - 200;
    const sent: Awaited<ReturnType<typeof send>>[] = [];
    do sent.push(await send(body));
    while (Date.now() < end);
    const samples = await during;
    const labels = [...new Set(sent.map((s) => s.label))].join(", ");
    console.log(`${label} (${(body.length / MB).toFixed(1)} MB)`);
    console.log(`  answered                                    ${labels} x${sent.length}, each ${stat(sent.map((s) => s.ms))}; answer <= ${Math.max(...sent.map((s) => s.answerBytes))} bytes`);
    console.log(`  /healthz meanwhile                          ${stat(samples)}`);
    console.log(`  API peak RSS                                ${hwmBefore.toFixed(0)} MB -> ${hwm().toFixed(0)} MB`);
  }
} finally {
  stopping = true;
  api.child.kill("SIGTERM");
  await api.exited;
}
