// Benchmark: POST /goals (the demo goal, 5 KB) through a real API process, with a tenant that already has
// --open goals open (no runner drains the queue, so they stay open and the tenant's open-goal cap,
// TENANT_MAX_OPEN_GOALS, is checked against all of them). Prints, from one run:
// - the unloaded figure: one POST at a time;
// - the same POSTs offered open-loop at --rate req/s for --seconds: what came back, p50/p99 of the 202s.
// Target (docs/benchmarks.md): p99 <= 20 ms at 200 req/s with 2,000 goals open.
//
// With --cpu-prof DIR the API process writes a V8 CPU profile there when it stops (node --cpu-prof).
// With --heap-sample DIR it writes DIR/<pid>.heapprofile: what it allocated (garbage included) over the
// unloaded and offered phases, from V8's sampling heap profiler (bench/lib/heap-sampler.mjs); the bench
// prints the total per request.
// With --baseline BUNDLE (another build's apps/api/dist/server.mjs, e.g. of an earlier commit) each round
// measures that API process first and then this tree's, one after the other, so that a before/after
// comparison comes from one run on a shared machine.
//
//   npx tsx bench/submit-load.ts [--open 2000] [--rate 200] [--seconds 5] [--unloaded 200] [--rounds 1] [--cpu-prof DIR] [--heap-sample DIR] [--baseline BUNDLE]
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { DEFAULT_DATABASE_URL } from "@loopsmith/core";
import { createPrisma } from "@loopsmith/db";
import { QUEUES } from "@loopsmith/schemas";
import { demoGoal } from "../scripts/demo/scenario";
import { repoRoot, spawnTs } from "../scripts/lib/proc";
import { createTenantWithCli, freePort } from "../scripts/lib/stack";
import { cpuMsOf, cpuSince, cpuSnapshot, pidsNamed } from "./lib/cpu";
import { pct } from "./lib/stats";

const { values } = parseArgs({
  options: {
    open: { type: "string", default: "2000" },
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "5" },
    unloaded: { type: "string", default: "200" },
    rounds: { type: "string", default: "1" },
    "cpu-prof": { type: "string" },
    "heap-sample": { type: "string" },
    baseline: { type: "string" },
  },
});
const open = Number(values.open);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const body = JSON.stringify(demoGoal());

let runs = 0;

/** One API process (this tree's, or `bundle`): fill the open goals, then the unloaded and the offered figures. */
async function measure(label: string, bundle?: string): Promise<void> {
  const port = await freePort();
  const prefix = `loopsmith-bench-submit-${process.pid}-${++runs}`;
  const env = {
    ...process.env,
    PORT: String(port),
    LOG_LEVEL: "info",
    LOOPSMITH_SCRIPTED_MODEL: "true",
    // The rate limit stays on (its Redis round trip is part of every submit), far above what is offered.
    RATE_LIMIT_PER_MINUTE: "1000000",
    // The cap is checked (and not reached): counting the tenant's open goals is part of every submit.
    TENANT_MAX_OPEN_GOALS: String(open + rate * seconds + 10_000),
    QUEUE_PREFIX: prefix,
  };
  const tenant = await createTenantWithCli(env, `bench-submit-${process.pid}`);
  const heapDir = values["heap-sample"] ? path.resolve(values["heap-sample"]) : undefined;
  const prof = [
    ...(values["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${values["cpu-prof"]}`] : []),
    ...(heapDir ? ["--import", path.join(repoRoot, "bench/lib/heap-sampler.mjs")] : []),
  ];
  if (heapDir) mkdirSync(heapDir, { recursive: true });
  const api = bundle
    ? spawnTs(bundle, { ...env, HEAP_SAMPLE_DIR: heapDir }, [], prof)
    : spawnTs("apps/api/src/server.ts", { ...env, HEAP_SAMPLE_DIR: heapDir }, [], prof);
  await api.waitFor(/Server listening/, 60_000);

  interface Outcome {
    status: string;
    ms: number;
  }
  const post = async (): Promise<Outcome> => {
    const t = performance.now();
    try {
      const res = await fetch(`http://127.0.0.1:${port}/goals`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${tenant.api_key}` },
        body,
        signal: AbortSignal.timeout(30_000),
      });
      const json = (await res.json()) as { error?: { code?: string } };
      return { status: res.status === 202 ? "202" : `${res.status} ${json.error?.code ?? "?"}`, ms: performance.now() - t };
    } catch (e) {
      return { status: `client error ${(e as Error).name}`, ms: performance.now() - t };
    }
  };
  // Whose CPU a phase spent, per request: the API process, Postgres (all its processes), Redis, this bench
  // (the client), and the rest of the machine (other work on a shared machine competes for the same cores).
  const parties = {
    api: () => [api.child.pid!],
    postgres: () => pidsNamed(/^postgres$/),
    redis: () => pidsNamed(/^redis-server$/),
    client: () => [process.pid],
  };
  const cpuLine = (before: ReturnType<typeof cpuSnapshot>, requests: number, wallMs: number, apiSysBefore: number) => {
    const d = cpuSince(before, cpuSnapshot(parties));
    const apiSys = cpuMsOf(api.child.pid!, "system") - apiSysBefore;
    const ours = Object.values(d.parties).reduce((a, b) => a + b, 0);
    const per = Object.entries(d.parties).map(([k, v]) => `${k} ${(v / requests).toFixed(2)}${k === "api" ? ` (in the kernel ${(apiSys / requests).toFixed(2)})` : ""}`).join(", ");
    const cores = d.machineTotal / wallMs;
    return `CPU ms per request: ${per}; machine busy ${((100 * d.machineBusy) / d.machineTotal).toFixed(0)}% of ${cores.toFixed(0)} cores (others ${((100 * Math.max(0, d.machineBusy - ours)) / d.machineTotal).toFixed(0)}%)`;
  };
  const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms (n=${xs.length})`;

  try {
    // The open goals, through the API as any client would make them, a few at a time.
    const t0 = performance.now();
    let made = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (made < open) {
          made++;
          const o = await post();
          if (o.status !== "202") throw new Error(`filling: POST ${o.status}`);
        }
      }),
    );
    console.log(`${label}: ${open} goals opened in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    {
      for (let i = 0; i < 10; i++) await post(); // warm-up
      if (heapDir) api.child.kill("SIGUSR2"); // the sampler starts
      const unloaded: number[] = [];
      const unloadedCpu = cpuSnapshot(parties);
      const unloadedSys = cpuMsOf(api.child.pid!, "system");
      const unloadedStart = performance.now();
      for (let i = 0; i < Number(values.unloaded); i++) {
        const o = await post();
        if (o.status !== "202") throw new Error(`unloaded: POST ${o.status}`);
        unloaded.push(o.ms);
      }
      const unloadedCpuLine = cpuLine(unloadedCpu, unloaded.length, performance.now() - unloadedStart, unloadedSys);
      // Open loop: requests leave on schedule whether or not the earlier ones were answered.
      const n = rate * seconds;
      const logFrom = api.output().length;
      const offeredCpu = cpuSnapshot(parties);
      const offeredSys = cpuMsOf(api.child.pid!, "system");
      const started = performance.now();
      const pending: Promise<Outcome>[] = [];
      for (let i = 0; i < n; i++) {
        const wait = started + (i * 1000) / rate - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(post());
      }
      const outcomes = await Promise.all(pending);
      const sampled = heapDir ? await heapSample(api.child, heapDir) : undefined;
      const took = (performance.now() - started) / 1000;
      const offeredCpuLine = cpuLine(offeredCpu, n, took * 1000, offeredSys);
      const counts = new Map<string, number>();
      for (const o of outcomes) counts.set(o.status, (counts.get(o.status) ?? 0) + 1);
      const ok = outcomes.filter((o) => o.status === "202").map((o) => o.ms);
      console.log(`  unloaded, one at a time                 ${fmt(unloaded)}`);
      console.log(`    ${unloadedCpuLine}`);
      console.log(`  offered ${rate} req/s x ${seconds} s              ${ok.length ? fmt(ok) : "no 202"}`);
      console.log(`    answers                               ${[...counts].sort().map(([k, v]) => `${k}: ${v}`).join(", ")}; ${(ok.length / took).toFixed(0)} accepted/s`);
      console.log(`    ${offeredCpuLine}`);
      // The API's own figure (Fastify's elapsed time in its log line): from the request's first byte read to
      // the answer written, without the client's and the sockets' share.
      const server = api
        .output()
        .slice(logFrom)
        .split("\n")
        .filter((l) => l.includes('"request completed"') && l.includes('"POST"'))
        .map((l) => (JSON.parse(l) as { responseTime: number }).responseTime);
      console.log(`    as the API timed them                 ${server.length ? fmt(server) : "no log lines"}`);
      if (sampled !== undefined) {
        const requests = Number(values.unloaded) + n;
        console.log(`    allocated (heap sample, garbage included) ${(sampled.bytes / requests / 1024).toFixed(0)} KB per request; ${sampled.file}`);
      }
    }
  } finally {
    api.child.kill("SIGTERM");
    await api.exited;
    // Nothing will ever run these goals: take their jobs out of Redis and their rows (and the tenant) out of Postgres.
    const connection = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUES.goals, { connection, prefix });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    connection.disconnect();
    const prisma = createPrisma(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
    await prisma.tenant.delete({ where: { id: tenant.tenant_id } }).catch((e: unknown) => console.error("cleanup:", e));
    await prisma.$disconnect();
  }
}

/** Stops the API's heap sampler (bench/lib/heap-sampler.mjs) and sums what it saw. */
async function heapSample(child: ChildProcess, dir: string): Promise<{ bytes: number; file: string }> {
  const file = path.join(dir, `${child.pid}.heapprofile`);
  rmSync(file, { force: true });
  child.kill("SIGUSR2");
  for (let waited = 0; !existsSync(file); waited += 100) {
    if (waited > 30_000) throw new Error(`the API wrote no heap profile to ${file}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  type Node = { selfSize: number; children?: Node[] };
  const sum = (n: Node): number => n.selfSize + (n.children ?? []).reduce((a, c) => a + sum(c), 0);
  return { bytes: sum((JSON.parse(readFileSync(file, "utf8")) as { head: Node }).head), file };
}

console.log(`submit-load: POST /goals (${(body.length / 1024).toFixed(1)} KB), one API process (pool of 10), no runner`);
for (let round = 1; round <= Number(values.rounds); round++) {
  console.log(`round ${round}`);
  if (values.baseline) await measure(`baseline ${values.baseline}`, values.baseline);
  await measure("this tree");
}
