// npm run demo: start the API and a runner, show /readyz, stop both.
// (Until the closed loop lands, that is the whole demo: it proves every part is wired and reachable.)
import { createServer } from "node:net";
import { spawnTs } from "./lib/proc";

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

const port = Number(process.env.PORT ?? (await freePort()));
const env = { ...process.env, PORT: String(port), LOG_LEVEL: process.env.LOG_LEVEL ?? "warn" };
const started = performance.now();
const api = spawnTs("apps/api/src/server.ts", { ...env, LOG_LEVEL: "info" });
const runner = spawnTs("apps/runner/src/main.ts", { ...env, LOG_LEVEL: "info" });
let ok = false;
try {
  await api.waitFor(/Server listening/, 60_000);
  const check = await runner.waitFor(/sandbox self-check passed/, 180_000);
  await runner.waitFor(/runner ready/, 30_000);
  const selfCheck = JSON.parse(check) as { output: string; durationMs: number };
  console.log(`runner sandbox self-check: ${selfCheck.output} (${selfCheck.durationMs} ms)`);
  const res = await fetch(`http://127.0.0.1:${port}/readyz`);
  const body = await res.json();
  console.log(`GET /readyz -> ${res.status}`);
  console.log(JSON.stringify(body, null, 2));
  ok = res.status === 200;
} catch (e) {
  console.error(String(e));
} finally {
  api.child.kill("SIGTERM");
  runner.child.kill("SIGTERM");
  await Promise.all([api.exited, runner.exited]);
}
console.log(`${ok ? "all green" : "NOT READY"} in ${((performance.now() - started) / 1000).toFixed(1)}s`);
process.exit(ok ? 0 : 1);
