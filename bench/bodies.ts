// Benchmark: what large request bodies cost the API process, through a real API process on loopback.
// Prints, side by side with the idle baseline measured in the same run:
// - /healthz latency while idle, and while N clients each POST a goal with a ~10 MB input at once;
// - the wall time of those N posts and what they got back;
// - the API process's peak resident memory (VmHWM) before and after the bursts;
// for two API processes started in the same run: one that lets every large body in at once
// (LARGE_BODY_CONCURRENCY = clients: the baseline, as before the large-body slots), and one with the
// default of 2 slots.
//
//   npx tsx bench/bodies.ts [--clients 4] [--mb 10]
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { demoGoal } from "../scripts/demo/scenario";
import { spawnTs } from "../scripts/lib/proc";
import { createTenantWithCli, freePort } from "../scripts/lib/stack";
import { stat } from "./lib/stats";

const { values } = parseArgs({ options: { clients: { type: "string", default: "4" }, mb: { type: "string", default: "10" } } });
const clients = Number(values.clients);
const mb = Number(values.mb);

const memKb = (pid: number, field: "VmHWM" | "VmRSS") => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN);

const line = "2024-01-01,North,Widget,3,$1,299.00,notes about this sale that make the line longer\n";
// A CSV of about `mb` MB: long enough lines that the body is mostly one big JSON string, like a real upload.
const csv = line.repeat(Math.floor((mb * 1024 * 1024) / line.length));
const body = JSON.stringify(demoGoal({ inputs: [{ name: "sales.csv", text: csv }] }));

async function measure(label: string, concurrency: number) {
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    LOG_LEVEL: "info",
    LOOPSMITH_SCRIPTED_MODEL: "true",
    RATE_LIMIT_PER_MINUTE: "0",
    LARGE_BODY_CONCURRENCY: String(concurrency),
    QUEUE_PREFIX: `loopsmith-bench-bodies-${process.pid}`,
  };
  const tenant = await createTenantWithCli(env, `bench-bodies-${process.pid}`);
  const api = spawnTs("apps/api/src/server.ts", env);
  await api.waitFor(/Server listening/, 60_000);
  const base = `http://127.0.0.1:${port}`;
  const pid = api.child.pid!;

  // The /healthz probe runs in its own process, so that this process's own work (sending the bodies)
  // does not show up as API latency.
  const probe = (ms: number): Promise<number[]> => {
    const code = `const end = Date.now() + ${ms}; const xs = [];
      (async () => { while (Date.now() < end) { const t = performance.now(); await (await fetch("${base}/healthz")).arrayBuffer();
        xs.push(performance.now() - t); await new Promise((r) => setTimeout(r, 20)); } console.log(JSON.stringify(xs)); })();`;
    const child = spawn(process.execPath, ["-e", code], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    return new Promise((resolve) => child.on("exit", () => resolve(JSON.parse(out) as number[])));
  };
  const burst = async () => {
    const t0 = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: clients }, async () => {
        const res = await fetch(`${base}/goals`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${tenant.api_key}` },
          body,
        });
        await res.arrayBuffer();
        return res.status;
      }),
    );
    return { statuses, wall: performance.now() - t0 };
  };

  try {
    const hwmIdle = memKb(pid, "VmHWM");
    await burst(); // warm-up: the first requests compile the route code
    const idle = await probe(1500);
    const during = probe(3000);
    const { statuses, wall } = await burst();
    const duringMs = await during;
    const hwm = memKb(pid, "VmHWM");
    console.log(`${label}`);
    console.log(`  statuses                 ${statuses.join(", ")}`);
    console.log(`  wall time                ${wall.toFixed(0)} ms`);
    console.log(`  /healthz idle            ${stat(idle)}`);
    console.log(`  /healthz during burst    ${stat(duringMs)}`);
    console.log(`  API peak RSS             ${(hwmIdle / 1024).toFixed(0)} MB idle -> ${(hwm / 1024).toFixed(0)} MB peak over two bursts (+${((hwm - hwmIdle) / 1024).toFixed(0)} MB)`);
  } finally {
    api.child.kill("SIGTERM");
    await api.exited;
  }
}

console.log(`bodies: ${clients} clients x ${(body.length / 1024 / 1024).toFixed(1)} MB POST /goals at once (after one warm-up burst)`);
await measure(`baseline: every body at once (LARGE_BODY_CONCURRENCY=${clients})`, clients);
await measure("default: 2 large-body slots (LARGE_BODY_CONCURRENCY=2)", 2);
