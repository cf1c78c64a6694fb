// Benchmark (issue 25): POST /goals offered at a fixed rate to a real API process with no runner draining
// the queue. Before the fix, 50/100/200 req/s gave 13/48/65% 500 LS_ERR_INTERNAL (Prisma P2028: no
// transaction could start within the pool wait). Now a saturated pool or a full in-flight bound is a 503
// with Retry-After, and a 500 is a bug. Prints, per rate, what came back and how long it took, beside the
// unloaded POST /goals latency measured in the same run, for two API processes: the default
// (API_MAX_IN_FLIGHT=64) and one that never sheds (API_MAX_IN_FLIGHT=0, every request queues for the pool).
//
// With --rounds 2 (the default) the two processes take turns twice, so that a neighbour's load shows as a
// difference between rounds rather than between the two settings.
//
//   npx tsx bench/saturation.ts [--seconds 5] [--rates 50,100,200] [--rounds 2]
import { parseArgs } from "node:util";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { QUEUES } from "@loopsmith/schemas";
import { demoGoal } from "../scripts/demo/scenario";
import { spawnTs } from "../scripts/lib/proc";
import { createTenantWithCli, freePort } from "../scripts/lib/stack";
import { pct, stat } from "./lib/stats";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "5" }, rates: { type: "string", default: "50,100,200" }, rounds: { type: "string", default: "2" } },
});
const seconds = Number(values.seconds);
const rates = values.rates.split(",").map(Number);
const body = JSON.stringify(demoGoal());

interface Outcome {
  label: string;
  ms: number;
}

async function measure(label: string, maxInFlight: number) {
  const port = await freePort();
  const prefix = `loopsmith-bench-saturation-${process.pid}-${maxInFlight}`;
  const env = {
    ...process.env,
    PORT: String(port),
    LOG_LEVEL: "info",
    LOOPSMITH_SCRIPTED_MODEL: "true",
    RATE_LIMIT_PER_MINUTE: "0",
    AUTH_FAILURES_PER_MINUTE: "0",
    // Thousands of goals stay open (no runner): the per-tenant cap would answer 429 long before the pool saturates.
    TENANT_MAX_OPEN_GOALS: "0",
    API_MAX_IN_FLIGHT: String(maxInFlight),
    QUEUE_PREFIX: prefix,
  };
  const tenant = await createTenantWithCli(env, `bench-saturation-${process.pid}`);
  const api = spawnTs("apps/api/src/server.ts", env);
  await api.waitFor(/Server listening/, 60_000);
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
      const retry = res.headers.get("retry-after");
      return { label: res.status < 300 ? String(res.status) : `${res.status} ${json.error?.code ?? "?"}${res.status === 503 && !retry ? " (no Retry-After!)" : ""}`, ms: performance.now() - t };
    } catch (e) {
      return { label: `client error ${(e as Error).name}`, ms: performance.now() - t };
    }
  };
  try {
    for (let i = 0; i < 5; i++) await post(); // warm-up
    const unloaded: number[] = [];
    for (let i = 0; i < 40; i++) unloaded.push((await post()).ms);
    console.log(label);
    console.log(`  unloaded POST /goals, one at a time         ${stat(unloaded)}`);
    for (const rate of rates) {
      // Open loop: requests leave on schedule whether or not the earlier ones were answered.
      const n = rate * seconds;
      const started = performance.now();
      const pending: Promise<Outcome>[] = [];
      for (let i = 0; i < n; i++) {
        const due = started + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        pending.push(post());
      }
      const outcomes = await Promise.all(pending);
      const counts = new Map<string, number>();
      for (const o of outcomes) counts.set(o.label, (counts.get(o.label) ?? 0) + 1);
      const fivexx = outcomes.filter((o) => o.label.startsWith("5")).length;
      const five00 = outcomes.filter((o) => o.label.startsWith("500")).length;
      const ok = outcomes.filter((o) => o.label === "202").map((o) => o.ms);
      const shed = outcomes.filter((o) => o.label.startsWith("503")).map((o) => o.ms);
      const share = (x: number) => `${((100 * x) / n).toFixed(1)}%`;
      console.log(`  ${String(rate).padStart(3)} req/s x ${seconds} s (${n})`);
      console.log(`    answers                                   ${[...counts].sort().map(([k, v]) => `${k}: ${v}`).join(", ")}`);
      console.log(`    5xx share                                 ${share(fivexx)} (500s: ${five00})`);
      console.log(`    202 latency                               ${ok.length ? stat(ok) : "none"} (unloaded p50 ${pct(unloaded, 50).toFixed(1)} ms)`);
      if (shed.length) console.log(`    503 latency                               ${stat(shed)}`);
    }
  } finally {
    api.child.kill("SIGTERM");
    await api.exited;
    // Nothing will ever run these goals' jobs: take them out of Redis.
    const connection = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUES.goals, { connection, prefix });
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    connection.disconnect();
  }
}

console.log(`saturation: POST /goals (${(body.length / 1024).toFixed(1)} KB) at fixed rates, no runner, one API process with a pool of 10`);
for (let round = 1; round <= Number(values.rounds); round++) {
  await measure(`round ${round}, default: API_MAX_IN_FLIGHT=64`, 64);
  await measure(`round ${round}, no shedding: API_MAX_IN_FLIGHT=0 (every request waits for the pool; errors still mapped to 503)`, 0);
}
