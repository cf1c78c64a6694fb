// Runners' liveness keys in Redis, shared by the runners (which write them) and the API (whose /readyz can
// read the sandbox's readiness from them instead of asking the Docker engine itself).

/** Refreshed by a live runner (its value: the time of the beat); expires HEARTBEAT_TTL_MS after the last one. */
export const runnerHeartbeatKey = (prefix: string, runnerId: string) => `${prefix}:runner:${runnerId}`;
/**
 * Written beside the heartbeat once the runner's start-up sandbox self-check passed (the image runs,
 * imports pandas, and a never-ending program is killed at its time limit); its value names the image.
 */
export const runnerReadyKey = (prefix: string, runnerId: string) => `${prefix}:runner-ready:${runnerId}`;
export const runnerHeartbeatPattern = (prefix: string) => `${prefix}:runner:*`;
export const runnerReadyPattern = (prefix: string) => `${prefix}:runner-ready:*`;
