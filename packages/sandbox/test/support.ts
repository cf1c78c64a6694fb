import { randomBytes } from "node:crypto";
import Docker from "dockerode";
import { ensureSandboxImage, pingDocker, type BuildMode, type SandboxLog } from "../src/index";

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
