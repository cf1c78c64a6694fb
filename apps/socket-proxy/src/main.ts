// The proxy's process: settings from the environment, once; one line of JSON per request on stdout.
import { loadProxyConfig } from "./policy";
import { createSocketProxy } from "./server";

let config: ReturnType<typeof loadProxyConfig>;
try {
  config = loadProxyConfig(process.env);
} catch (e) {
  console.error(JSON.stringify({ level: "fatal", msg: `loopsmith-socket-proxy: invalid configuration: ${(e as Error).message}` }));
  process.exit(78);
}

const line = (level: string, obj: object) => process.stdout.write(`${JSON.stringify({ level, time: new Date().toISOString(), name: "loopsmith-socket-proxy", ...obj })}\n`);

const server = createSocketProxy({
  socketPath: config.socketPath,
  policy: config.policy,
  // Refusals at warn: a refused call from the runner is either a bug in the policy or someone trying.
  log: (e) => line(e.refused ? "warn" : "debug", e),
});
server.listen(config.port, config.host, () => {
  line("info", { msg: "listening", host: config.host, port: config.port, socket: config.socketPath, images: config.policy.images, runtimes: config.policy.runtimes });
});
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  });
}
