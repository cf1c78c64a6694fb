// Benchmark: how long a runner process takes from spawn to taking work ("runner ready"), and to its sandbox
// self-check passing, started as production starts it (the compiled bundle, scripts/build.ts) and, for the
// baseline in the same run, from the TypeScript sources through tsx. Every crash recovery with a
// supervisor restarting the runner waits on this (bench/recovery.ts --restart measures the whole path).
//
//   npx tsx bench/runner-start.ts [--trials 5] [--pool 0]
//
// Real Postgres, Redis and Docker engine; the scripted model (no provider). The bound is 3 s to ready.
import { parseArgs } from "node:util";
import { spawn } from "node:child_process";
import { Redis } from "ioredis";
import { buildAll } from "../scripts/build";
import { repoRoot } from "../scripts/lib/proc";
import { DATABASE_URL, REDIS_URL } from "../tests/support/services";
import { median } from "./lib/stats";

const { values } = parseArgs({ options: { trials: { type: "string", default: "5" }, pool: { type: "string", default: "0" } } });
const trials = Number(values.trials);
const BOUND_MS = 3000;
const prefix = `loopsmith-bench-start-${process.pid}`;

await buildAll();

/** Spawn to each milestone (ms), then SIGTERM and wait for the exit. */
async function once(argv: string[]): Promise<{ ready: number; checked: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, argv, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL, REDIS_URL, QUEUE_PREFIX: prefix, LOOPSMITH_SCRIPTED_MODEL: "true", SANDBOX_POOL_SIZE: values.pool },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const at: { ready?: number; checked?: number } = {};
  let out = "";
  const done = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      if (at.ready === undefined && out.includes('"msg":"runner ready"')) at.ready = performance.now() - started;
      if (at.checked === undefined && out.includes('"msg":"sandbox kills a never-ending program')) at.checked = performance.now() - started;
      if (at.ready !== undefined && at.checked !== undefined) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`runner exited (${code}) before ready and checked:\n${out}`)));
  });
  await done;
  child.kill("SIGTERM");
  await new Promise((r) => child.once("exit", r));
  return { ready: at.ready!, checked: at.checked! };
}

const modes = [
  { name: "compiled (node apps/runner/dist/main.mjs)", argv: ["apps/runner/dist/main.mjs"] },
  { name: "tsx (node --import tsx apps/runner/src/main.ts)", argv: ["--import", "tsx", "apps/runner/src/main.ts"] },
];
const results = new Map<string, { ready: number[]; checked: number[] }>(modes.map((m) => [m.name, { ready: [], checked: [] }]));
await once(modes[0]!.argv); // warm the OS caches and the image layers once, not counted
for (let i = 0; i < trials; i++) {
  // Interleaved, so that the machine's load falls on both alike.
  for (const m of modes) {
    const r = await once(m.argv);
    results.get(m.name)!.ready.push(r.ready);
    results.get(m.name)!.checked.push(r.checked);
  }
}
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`runner start-up, ${trials} trials each, SANDBOX_POOL_SIZE=${values.pool}, medians (min-max):`);
for (const [name, r] of results) {
  console.log(
    `  ${name.padEnd(50)} ready ${s(median(r.ready))} (${s(Math.min(...r.ready))}-${s(Math.max(...r.ready))})` +
      `   self-check passed ${s(median(r.checked))}   bound ${s(BOUND_MS)}: ${median(r.ready) <= BOUND_MS ? "met" : "NOT met"}`,
  );
}
const redis = new Redis(REDIS_URL);
const keys = await redis.keys(`${prefix}:*`);
if (keys.length) await redis.del(...keys);
await redis.quit();
