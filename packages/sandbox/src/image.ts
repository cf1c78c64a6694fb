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
/** issue 14: the image JavaScript and TypeScript goals run in (Node 20, npm, tsc, the TypeScript loader). */
export const NODE_IMAGE_REPO = "loopsmith/sandbox-node";
export const NODE_IMAGE_DIR = fileURLToPath(new URL("../../../sandbox-images/node", import.meta.url));
/** Where the Node image keeps the TypeScript loader: `node --import TS_REGISTER file.ts` runs TypeScript. */
export const TS_REGISTER = "/opt/loopsmith/ts-register.mjs";

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
  return `${SANDBOX_IMAGE_REPO}:${hashDir(dir).digest("hex").slice(0, 12)}`;
}

function hashDir(dir: string, extra: string[] = []) {
  const hash = createHash("sha256");
  for (const name of listFiles(dir).sort()) {
    const content = readFileSync(join(dir, name));
    hash.update(`${name}\0${content.length}\0`).update(content);
  }
  for (const e of extra) hash.update(`\0${e}`);
  return hash;
}

/**
 * The Node image's tag: its directory, the Python image it is built from (the bootstrap's interpreter)
 * and the Node version that goes into it (the host's, which runs this code), so a new Node is a new tag.
 */
export function nodeSandboxImageTag(dir: string = NODE_IMAGE_DIR, base: string = sandboxImageTag()): string {
  return `${NODE_IMAGE_REPO}:${hashDir(dir, [base, process.version]).digest("hex").slice(0, 12)}`;
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
  /** Which image (default python). The Node image is built from the Python one, ensured first. */
  runtime?: "python" | "node";
}): Promise<EnsureImageResult> {
  const { docker, log } = opts;
  const node = opts.runtime === "node";
  const dir = opts.dir ?? (node ? NODE_IMAGE_DIR : DEFAULT_IMAGE_DIR);
  const tag = opts.tag ?? (node ? nodeSandboxImageTag(dir) : sandboxImageTag(dir));
  const t0 = performance.now();
  const seconds = () => Math.round((performance.now() - t0) / 100) / 10;

  if (await imageExists(docker, tag)) {
    return { tag, built: false, seconds: seconds(), imageId: (await docker.getImage(tag).inspect()).Id };
  }
  const requested = opts.mode ?? "auto";
  const offlineTool = node ? onPath("npm") : onPath("debootstrap");
  const mode = requested === "auto" ? (offlineTool ? "offline" : "dockerfile") : requested;
  log.info({ tag, mode }, "building sandbox image");
  if (mode === "offline") {
    // The offline Node image starts from the Python image's file system (its python3 runs the bootstrap).
    const extra = node ? [(await ensureSandboxImage({ docker, mode: opts.mode, log })).tag] : [];
    await buildOffline(dir, tag, log, extra);
  } else await buildFromDockerfile(docker, dir, tag, log);

  try {
    await verifyImage(docker, tag, node ? NODE_VERIFY : PYTHON_VERIFY);
  } catch (e) {
    // A broken image under a content-addressed tag would otherwise be "skipped" by every later ensure.
    await docker.getImage(tag).remove({ force: true }).catch(() => undefined);
    throw e;
  }
  const imageId = (await docker.getImage(tag).inspect()).Id;
  return { tag, built: true, mode, seconds: seconds(), imageId };
}

async function buildOffline(dir: string, tag: string, log: SandboxLog, extra: string[] = []): Promise<void> {
  const scratch = mkdtempSync(join(tmpdir(), "loopsmith-rootfs-"));
  try {
    const child = spawn("bash", [join(dir, "build-offline.sh"), join(scratch, "rootfs"), tag, ...extra], {
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

const PYTHON_VERIFY = ["python3", "-c", "import os, pandas, numpy; print(os.getuid(), pandas.__version__, numpy.__version__)"];
// tsc through the loader's own TypeScript: the compiler loads, and the loader finds it.
const NODE_VERIFY = ["node", "--import", TS_REGISTER, "-e", "const ts = require('/usr/local/lib/node_modules/typescript'); console.log(process.getuid(), process.version, ts.version)"];

/** The image must work under the real sandbox restrictions, not just exist. */
async function verifyImage(docker: Docker, tag: string, command: string[]): Promise<void> {
  const sandbox = createDockerSandbox({ docker, image: tag, runnerId: "image-verify" });
  const res = await sandbox.run({ files: [], command, timeoutMs: 120_000 });
  if (res.exitCode !== 0 || !res.stdout.startsWith("10001 ")) {
    throw new Error(`sandbox image ${tag} failed verification: exit ${res.exitCode}\n${res.stdout}\n${res.stderr}`);
  }
}
