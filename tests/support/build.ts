// Vitest global setup: compiles the API and the runner once, before any worker starts, so that the files
// that spawn them as processes (scripts/lib/proc.ts) find the bundles fresh and none builds beside another.
// Teardown: the loops that the files of a worker share (startLoop({ shared: true })) are never closed, since
// no file knows it is the last; their containers and queue keys are removed here, after every worker has ended.
//
// Two runs of the suite may share the machine (CI beside a developer's run): each run's shared loops carry
// its run id in their prefix (lstest-shared-<run>-<loop>), and the run keeps a marker key alive in Redis
// while it lasts. The teardown removes its own run's leftovers and those of runs whose marker has expired
// (a run that was killed), never those of a run still going.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { TestProject } from "vitest/node";
import { dockerClient, RUNNER_LABEL, SANDBOX_LABEL } from "@loopsmith/sandbox";
import { buildAll, buildConsole } from "../../scripts/build";
import { REDIS_URL, SHARED_RUNNER_PREFIX } from "./services";

declare module "vitest" {
  export interface ProvidedContext {
    /** This run's id, in the prefix of its shared loops. */
    sharedLoopRun: string;
  }
}

const ALIVE_PREFIX = "lstest-run-alive:";
const ALIVE_TTL_S = 60;

/** The run id in a shared loop's prefix (lstest-shared-<run>-<loop>...), or null for another shape. */
function runOf(prefixed: string): string | null {
  return /^lstest-shared-([0-9a-f]{8})-/.exec(prefixed)?.[1] ?? null;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const run = randomBytes(4).toString("hex");
  project.provide("sharedLoopRun", run);
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
  await redis.connect();
  const alive = () => redis.set(`${ALIVE_PREFIX}${run}`, "1", "EX", ALIVE_TTL_S).catch(() => undefined);
  await alive();
  // Redis may be stopped and restarted empty under the run (tests/durability/infra-restart.test.ts): the
  // marker is written again every 20 s.
  const beat = setInterval(() => void alive(), 20_000);
  await buildAll();
  await buildConsole();
  return async () => {
    clearInterval(beat);
    const gone = async (other: string | null) => other !== null && (other === run || (await redis.exists(`${ALIVE_PREFIX}${other}`).catch(() => 1)) === 0);
    try {
      const docker = dockerClient();
      const all = await docker.listContainers({ all: true, filters: { label: [`${SANDBOX_LABEL}=1`] } });
      const left = [];
      for (const c of all) if (c.Labels[RUNNER_LABEL]?.startsWith(SHARED_RUNNER_PREFIX) && (await gone(runOf(c.Labels[RUNNER_LABEL])))) left.push(c);
      await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
      // And their queues' keys (the queue prefix is the runner id).
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${SHARED_RUNNER_PREFIX}*`, "COUNT", 1000);
        cursor = next;
        const mine = [];
        for (const k of keys) if (await gone(runOf(k))) mine.push(k);
        if (mine.length > 0) await redis.unlink(...mine);
      } while (cursor !== "0");
      await redis.del(`${ALIVE_PREFIX}${run}`);
    } finally {
      redis.disconnect();
    }
  };
}
