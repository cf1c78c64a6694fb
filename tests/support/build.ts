// Vitest global setup: compiles the API and the runner once, before any worker starts, so that the files
// that spawn them as processes (scripts/lib/proc.ts) find the bundles fresh and none builds beside another.
// Teardown: the loops that the files of a worker share (startLoop({ shared: true })) are never closed, since
// no file knows it is the last; their containers and queue keys are removed here, after every worker has ended.
import { Redis } from "ioredis";
import { dockerClient, RUNNER_LABEL, SANDBOX_LABEL } from "@loopsmith/sandbox";
import { buildAll, buildConsole } from "../../scripts/build";
import { REDIS_URL, SHARED_RUNNER_PREFIX } from "./services";

export default async function setup(): Promise<() => Promise<void>> {
  await buildAll();
  await buildConsole();
  return async () => {
    const docker = dockerClient();
    const all = await docker.listContainers({ all: true, filters: { label: [`${SANDBOX_LABEL}=1`] } });
    const left = all.filter((c) => c.Labels[RUNNER_LABEL]?.startsWith(SHARED_RUNNER_PREFIX));
    await Promise.all(left.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    // And their queues' keys (the queue prefix is the runner id).
    const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      await redis.connect();
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${SHARED_RUNNER_PREFIX}*`, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) await redis.unlink(...keys);
      } while (cursor !== "0");
    } finally {
      redis.disconnect();
    }
  };
}
