// Runners' liveness keys in Redis, shared by the runners (which write them) and the API (whose /readyz can
// read the sandbox's readiness from them instead of asking the Docker engine itself).

/** Refreshed by a live runner (its value: the time of the beat); expires HEARTBEAT_TTL_MS after the last one. */
export const runnerHeartbeatKey = (prefix: string, runnerId: string) => `${prefix}:runner:${runnerId}`;
/**
 * Written beside the heartbeat once the runner's start-up sandbox self-check passed (the image runs,
 * imports pandas, and a never-ending program is killed at its time limit); its value is a RunnerReady.
 */
export const runnerReadyKey = (prefix: string, runnerId: string) => `${prefix}:runner-ready:${runnerId}`;

/** A ready key's value (JSON): the runner's sandbox image, its engine runtime, and why that runtime. */
export interface RunnerReady {
  image: string;
  runtime: string;
  reason: string | null;
}

/** A ready key's value read back; a bare string (an older runner's) is the image alone. */
export function parseRunnerReady(value: string): RunnerReady {
  try {
    const v = JSON.parse(value) as Partial<RunnerReady>;
    if (v && typeof v.image === "string" && typeof v.runtime === "string") return { image: v.image, runtime: v.runtime, reason: typeof v.reason === "string" ? v.reason : null };
  } catch {
    // an older runner's value: the image's name
  }
  return { image: value, runtime: "runc", reason: null };
}
export const runnerHeartbeatPattern = (prefix: string) => `${prefix}:runner:*`;
export const runnerReadyPattern = (prefix: string) => `${prefix}:runner-ready:*`;
