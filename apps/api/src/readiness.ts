import type { Redis } from "ioredis";
import { LoopSmithError } from "@loopsmith/core";
import type { PrismaClient } from "@loopsmith/db";
import { parseRunnerReady, runnerHeartbeatPattern, runnerReadyPattern } from "@loopsmith/schemas";
import type { Readiness } from "./routes/health";

/** Keys matching `pattern` (SCAN, a bounded number of rounds): the runners' liveness keys are few. */
async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = "0";
  for (let round = 0; round < 100; round++) {
    const [next, found] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    keys.push(...found);
    cursor = next;
    if (cursor === "0") break;
  }
  return keys;
}

/**
 * /readyz's probes. The API never runs code, so it never asks the Docker engine (it needs neither the socket
 * nor root): the runners run the sandboxes, their heartbeats say they are alive, and their ready keys that
 * their start-up sandbox self-check passed (the image runs and imports pandas, a never-ending program is
 * killed at its limit). docker: some runner of this queue prefix is alive; sandbox_image: some runner passed
 * its self-check. The two names are the response's, kept for its clients.
 */
export function runnerReadiness(deps: { prisma: PrismaClient; redis: Redis; prefix: string }): Readiness {
  return {
    // Probes throw the dependency's own error (logged in full, shown as publicError in /readyz).
    postgres: async () => {
      await deps.prisma.$queryRaw`SELECT 1`;
      return "SELECT 1 answered";
    },
    redis: async () => {
      const pong = await deps.redis.ping();
      return `PING answered ${pong}`;
    },
    docker: async () => {
      const alive = await scanKeys(deps.redis, runnerHeartbeatPattern(deps.prefix));
      if (alive.length === 0) throw new LoopSmithError("LS_ERR_SANDBOX_UNAVAILABLE", `no runner heartbeat under queue prefix ${deps.prefix}: start a runner`);
      return `${alive.length} runner(s) alive (heartbeats)`;
    },
    sandbox_image: async () => {
      const ready = await scanKeys(deps.redis, runnerReadyPattern(deps.prefix));
      if (ready.length === 0) throw new LoopSmithError("LS_ERR_SANDBOX_UNAVAILABLE", "no runner has passed its sandbox self-check yet");
      const value = await deps.redis.get(ready[0]!);
      if (!value) return `${ready.length} runner(s) passed the sandbox self-check`;
      const r = parseRunnerReady(value);
      // gVisor is what a runner takes wherever the engine offers it; anything else says why.
      const runtime = r.runtime === "runsc" ? "runtime runsc (gVisor)" : `runtime ${r.runtime}${r.reason ? `: ${r.reason}` : ""}`;
      return `${ready.length} runner(s) passed the sandbox self-check (image ${r.image}, ${runtime})`;
    },
  };
}
