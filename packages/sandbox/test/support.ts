import { randomBytes } from "node:crypto";
import Docker from "dockerode";
import { engineRuntimes, ensureSandboxImage, pingDocker, type BuildMode, type SandboxLog } from "../src/index";

export const docker = new Docker();

export const quietLog: SandboxLog = { info: () => undefined, warn: () => undefined };

/** A runner id of its own per test file, so label queries only ever see this file's containers. */
export function testRunnerId(name: string): string {
  return `test-${name}-${randomBytes(4).toString("hex")}`;
}

/**
 * Fails (never skips) when the engine is unreachable: a sandbox suite that silently passes without Docker
 * would prove nothing.
 */
export async function ensureTestImage(): Promise<string> {
  await pingDocker(docker);
  const mode = (process.env.LOOPSMITH_SANDBOX_BUILD ?? "auto") as BuildMode;
  const res = await ensureSandboxImage({ docker, mode, log: quietLog });
  return res.tag;
}

export async function containersOf(runnerId: string): Promise<Docker.ContainerInfo[]> {
  return docker.listContainers({ all: true, filters: { label: [`loopsmith.runner=${runnerId}`] } });
}

/**
 * The engine runtimes that tests covering every runtime run under: runc and runsc (gVisor), or the comma
 * list in LOOPSMITH_TEST_RUNTIMES. requireRuntimes fails (never skips) when the engine lacks one.
 */
export const TEST_RUNTIMES: readonly string[] = (process.env.LOOPSMITH_TEST_RUNTIMES ?? "runc,runsc")
  .split(",")
  .map((s) => s.trim())
  .filter(Boolean);

/**
 * The runtime of the rest of the suite's sandboxes: SANDBOX_RUNTIME as the runner reads it, default runc
 * (the faster start; the files that cover both runtimes name theirs). `SANDBOX_RUNTIME=runsc npm test` runs
 * the whole suite under gVisor.
 */
export const SUITE_RUNTIME = !process.env.SANDBOX_RUNTIME || process.env.SANDBOX_RUNTIME === "auto" ? "runc" : process.env.SANDBOX_RUNTIME;

/** Throws, naming the fix, unless the engine offers every one of `names`. */
export async function requireRuntimes(names: readonly string[] = TEST_RUNTIMES, d: Docker = docker): Promise<void> {
  const { runtimes } = await engineRuntimes(d);
  const missing = names.filter((n) => !runtimes.includes(n));
  if (missing.length > 0) {
    throw new Error(
      `the Docker engine has no runtime ${missing.join(", ")} (it has ${runtimes.join(", ")}): run scripts/setup.sh, which installs gVisor and registers runsc, or set LOOPSMITH_TEST_RUNTIMES=${runtimes.filter((r) => names.includes(r)).join(",") || "runc"}`,
    );
  }
}
