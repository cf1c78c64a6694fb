import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, relative } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type Docker from "dockerode";
import { createDockerSandbox, type SandboxLog } from "./sandbox";

export const SANDBOX_IMAGE_REPO = "loopsmith/sandbox-python";
export const DEFAULT_IMAGE_DIR = fileURLToPath(new URL("../../../sandbox-images/python", import.meta.url));

export type BuildMode = "auto" | "offline" | "dockerfile";

export interface EnsureImageResult {
  tag: string;
  built: boolean;
  /** How it was built; absent when the image already existed. */
  mode?: "offline" | "dockerfile";
  seconds: number;
  imageId: string;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => relative(dir, join(d.parentPath, d.name)));
}

/**
 * The tag is a hash of everything that defines the image, so editing the package list or a build script
 * yields a new tag, and a runner never runs an image built from other sources than its checkout.
 */
export function sandboxImageTag(dir: string = DEFAULT_IMAGE_DIR): string {
  const hash = createHash("sha256");
  for (const name of listFiles(dir).sort()) {
    const content = readFileSync(join(dir, name));
    hash.update(`${name}\0${content.length}\0`).update(content);
  }
  return `${SANDBOX_IMAGE_REPO}:${hash.digest("hex").slice(0, 12)}`;
}

export async function imageExists(docker: Docker, tag: string): Promise<boolean> {
  try {
    await docker.getImage(tag).inspect();
    return true;
  } catch (e) {
    if ((e as { statusCode?: number }).statusCode === 404) return false;
    throw e;
  }
}

function onPath(cmd: string): boolean {
  return (process.env.PATH ?? "").split(delimiter).some((d) => {
    try {
      accessSync(join(d, cmd), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

export async function ensureSandboxImage(opts: {
  docker: Docker;
  tag?: string;
  dir?: string;
  mode?: BuildMode;
  log: SandboxLog;
}): Promise<EnsureImageResult> {
  const { docker, log } = opts;
  const dir = opts.dir ?? DEFAULT_IMAGE_DIR;
  const tag = opts.tag ?? sandboxImageTag(dir);
  const t0 = performance.now();
  const seconds = () => Math.round((performance.now() - t0) / 100) / 10;

  if (await imageExists(docker, tag)) {
    return { tag, built: false, seconds: seconds(), imageId: (await docker.getImage(tag).inspect()).Id };
  }
  const requested = opts.mode ?? "auto";
  const mode = requested === "auto" ? (onPath("debootstrap") ? "offline" : "dockerfile") : requested;
  log.info({ tag, mode }, "building sandbox image");
  if (mode === "offline") await buildOffline(dir, tag, log);
  else await buildFromDockerfile(docker, dir, tag, log);

  try {
    await verifyImage(docker, tag);
  } catch (e) {
    // A broken image under a content-addressed tag would otherwise be "skipped" by every later ensure.
    await docker.getImage(tag).remove({ force: true }).catch(() => undefined);
    throw e;
  }
  const imageId = (await docker.getImage(tag).inspect()).Id;
  return { tag, built: true, mode, seconds: seconds(), imageId };
}

async function buildOffline(dir: string, tag: string, log: SandboxLog): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "loopsmith-rootfs-"));
  try {
    const child = spawn("bash", [join(dir, "build-offline.sh"), join(scratch, "rootfs"), tag], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tail: string[] = [];
    for (const s of [child.stdout, child.stderr]) {
      createInterface({ input: s }).on("line", (line) => {
        tail.push(line);
        if (tail.length > 30) tail.shift();
        // debootstrap's per-package "I: ..." chatter is kept for the failure message only.
        if (!line.startsWith("I: ")) log.info({ build: "offline" }, line);
      });
    }
    const code = await new Promise<number | null>((resolve, reject) => {
      child.on("error", reject);
      child.on("close", resolve);
    });
    if (code !== 0) throw new Error(`build-offline.sh failed with exit ${code}:\n${tail.join("\n")}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

async function buildFromDockerfile(docker: Docker, dir: string, tag: string, log: SandboxLog): Promise<void> {
  const stream = await docker.buildImage({ context: dir, src: listFiles(dir) }, { t: tag, rm: true, forcerm: true });
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err: Error | null, events: { error?: string }[]) => {
        const failed = err?.message ?? events.find((e) => e.error)?.error;
        if (failed) reject(new Error(`docker build failed: ${failed}`));
        else resolve();
      },
      (e: { stream?: string; status?: string }) => {
        const line = (e.stream ?? e.status ?? "").trimEnd();
        if (line) log.info({ build: "dockerfile" }, line);
      },
    );
  });
}

/** The image must work under the real sandbox restrictions, not just exist. */
async function verifyImage(docker: Docker, tag: string): Promise<void> {
  const sandbox = createDockerSandbox({ docker, image: tag, runnerId: "image-verify" });
  const res = await sandbox.run({
    files: [],
    command: ["python3", "-c", "import os, pandas, numpy; print(os.getuid(), pandas.__version__, numpy.__version__)"],
    timeoutMs: 120_000,
  });
  if (res.exitCode !== 0 || !res.stdout.startsWith("10001 ")) {
    throw new Error(`sandbox image ${tag} failed verification: exit ${res.exitCode}\n${res.stdout}\n${res.stderr}`);
  }
}
