// Benchmark (issue 28, item 4): what the socket proxy adds to a sandbox run, in one run, interleaved, on the
// real engine and image.
//
//   npx tsx bench/socket-proxy.ts [--n 10]
//
// The same sandbox.run() of `pass`, cold and pooled, with the Docker client on the engine's socket (the
// baseline) and on the proxy (apps/socket-proxy, in this process, over TCP on 127.0.0.1). Rounds alternate
// which goes first; the pools are warmed before each timed pooled run.
import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { createDockerSandbox, dockerClient, pingDocker, removeLeftovers, sandboxImageTag, type RunRequest } from "@loopsmith/sandbox";
import { createSocketProxy } from "../apps/socket-proxy/src/server";
import { pct } from "./lib/stats";

const { values } = parseArgs({ options: { n: { type: "string", default: "10" } } });
const rounds = Number(values.n);
const direct = dockerClient();
await pingDocker(direct);
const image = sandboxImageTag();
const runnerId = `bench-socket-proxy-${randomBytes(3).toString("hex")}`;

let calls = 0;
const server = createSocketProxy({ socketPath: "/var/run/docker.sock", policy: { images: [image], runtimes: ["runc", "runsc"], maxBodyBytes: 1024 * 1024 }, log: () => void calls++ });
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const proxied = dockerClient(`tcp://127.0.0.1:${(server.address() as AddressInfo).port}`);

const sandboxes = {
  direct: { cold: createDockerSandbox({ docker: direct, image, runnerId }), pooled: createDockerSandbox({ docker: direct, image, runnerId, pool: { size: 1 } }) },
  proxy: { cold: createDockerSandbox({ docker: proxied, image, runnerId }), pooled: createDockerSandbox({ docker: proxied, image, runnerId, pool: { size: 1 } }) },
};
for (const s of Object.values(sandboxes)) s.pooled.start();

const req: RunRequest = { files: [], command: ["python3", "-c", "pass"], timeoutMs: 60_000 };
const times: Record<string, number[]> = {};
const timed = async (key: string, run: () => Promise<{ exitCode: number }>) => {
  const t0 = performance.now();
  const res = await run();
  const ms = performance.now() - t0;
  if (res.exitCode !== 0) throw new Error(`${key}: exit ${res.exitCode}`);
  (times[key] ??= []).push(ms);
};

try {
  // One untimed run each: image inspect cached, connections open.
  for (const s of Object.values(sandboxes)) await s.cold.run(req);
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? (["direct", "proxy"] as const) : (["proxy", "direct"] as const);
    for (const via of order) await timed(`cold/${via}`, () => sandboxes[via].cold.run(req));
    for (const via of order) {
      await sandboxes[via].pooled.warm({ timeoutMs: 60_000 });
      await timed(`pooled/${via}`, () => sandboxes[via].pooled.run(req));
    }
  }
} finally {
  for (const s of Object.values(sandboxes)) await s.pooled.close();
  await removeLeftovers(direct, { runnerId });
  server.close();
  server.closeAllConnections();
}

const med = (k: string) => pct(times[k]!, 50);
const diff = (ms: number) => `${ms >= 0 ? "+" : "-"}${Math.abs(Math.round(ms))} ms`;
console.log(`socket proxy bench: ${rounds} interleaved rounds, sandbox.run() of \`pass\`, median (p90)`);
for (const path of ["cold", "pooled"]) {
  const row = (via: string) => `${Math.round(med(`${path}/${via}`))} (${Math.round(pct(times[`${path}/${via}`]!, 90))}) ms`;
  console.log(`${path.padEnd(8)} socket ${row("direct").padStart(14)}   proxy ${row("proxy").padStart(14)}   ${diff(med(`${path}/proxy`) - med(`${path}/direct`))}`);
}
console.log(`${calls} Engine API calls went through the proxy`);
