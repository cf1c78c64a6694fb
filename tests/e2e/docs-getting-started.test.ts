// Issue 28: docs/getting-started.md stays true. Its ```sh / ```bash blocks run in order, in one bash, the
// way a reader pastes them: the page itself provisions (npm run setup), starts the API and a runner as
// background processes, creates a tenant, submits a goal with curl and with the CLI, checks the receipt
// and stops both. They run in a temporary copy of the checkout (a symlink per top-level entry, so the
// page's .loopsmith-local/ is the copy's own and a reader's files are never touched), on a random PORT and
// QUEUE_PREFIX. A block that exits non-zero fails the test, naming the block; whatever the blocks started
// is stopped at the end, the page's own `kill` or not.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { dockerClient, RUNNER_LABEL } from "@loopsmith/sandbox";
import { repoRoot } from "../../scripts/lib/proc";
import { freePort } from "../../scripts/lib/stack";
import { DATABASE_URL, randomPrefix, REDIS_URL } from "../support/services";

const PAGE = path.join(repoRoot, "docs/getting-started.md");

/** The shell blocks of a Markdown page, in order. */
function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```(?:sh|bash)\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/**
 * One bash script running the blocks in order. errexit and pipefail make a failing command fail its block
 * (a reader sees the error; the test needs the exit code); a marker before each block says which one ran last.
 */
function scriptOf(blocks: string[]): string {
  return ["set -eo pipefail", ...blocks.flatMap((b, i) => [`echo "::block ${i + 1}"`, b]), 'echo "::done"', ""].join("\n");
}

interface Ran {
  code: number | null;
  output: string;
  /** The block running when the script ended (1-based), or "done". */
  last: string;
  /** Processes of the script's process group still alive when it exited. */
  leftBehind: boolean;
}

const groupAlive = (pgid: number) => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stopGroup(pgid: number): Promise<void> {
  if (!groupAlive(pgid)) return;
  // SIGTERM first: a runner drains its sandbox pool on the way out.
  process.kill(-pgid, "SIGTERM");
  for (let i = 0; i < 80 && groupAlive(pgid); i++) await sleep(500);
  if (groupAlive(pgid)) process.kill(-pgid, "SIGKILL");
  for (let i = 0; i < 20 && groupAlive(pgid); i++) await sleep(250);
}

/**
 * Runs the script in its own process group (background jobs of a non-interactive bash stay in it), then
 * stops the group whatever happened, so nothing it started outlives the test.
 */
async function runScript(script: string, opts: { cwd: string; env: Record<string, string>; timeoutMs: number }): Promise<Ran> {
  const child = spawn("bash", ["-c", script], { cwd: opts.cwd, env: opts.env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const pgid = child.pid!;
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  let timer: NodeJS.Timeout | undefined;
  const code = await new Promise<number | null>((resolve) => {
    // "exit", not "close": a background process left running would hold the pipes open.
    child.on("exit", (c) => resolve(c));
    timer = setTimeout(() => {
      output += `\n[test] timed out after ${opts.timeoutMs} ms`;
      process.kill(-pgid, "SIGKILL");
    }, opts.timeoutMs);
  });
  clearTimeout(timer);
  // What the page's own `kill ...; wait` should already have ended.
  for (let i = 0; i < 20 && groupAlive(pgid); i++) await sleep(250);
  const leftBehind = groupAlive(pgid);
  await stopGroup(pgid);
  child.stdout.destroy();
  child.stderr.destroy();
  const last = [...output.matchAll(/^::(block \d+|done)$/gm)].at(-1)?.[1] ?? "none";
  return { code, output, last, leftBehind };
}

const tail = (s: string, n = 6000) => (s.length > n ? `…${s.slice(-n)}` : s);

describe("the harness", () => {
  it("reads a page's sh and bash blocks in order, and only those", () => {
    const page = "x\n```sh\necho 1\n```\n\n```json\n{}\n```\n```bash\necho 2\necho 3\n```\n```\nnot shell\n```\n";
    expect(shellBlocks(page)).toEqual(["echo 1\n", "echo 2\necho 3\n"]);
  });

  it("fails on the block that fails, runs nothing after it, and stops what the blocks left running", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), "loopsmith-docs-harness-"));
    try {
      const script = scriptOf(["sleep 600 > /dev/null 2>&1 &\necho started\n", "echo before\nfalse\necho after\n", "echo third\n"]);
      const ran = await runScript(script, { cwd: dir, env: { PATH: process.env.PATH ?? "" }, timeoutMs: 30_000 });
      expect(ran.code).toBe(1);
      expect(ran.last).toBe("block 2");
      expect(ran.output).toContain("before");
      expect(ran.output).not.toContain("after");
      expect(ran.output).not.toContain("third");
      expect(ran.leftBehind).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("counts a failing command inside a pipeline as a failure", async () => {
    const ran = await runScript(scriptOf(["false | cat\necho after\n"]), { cwd: tmpdir(), env: { PATH: process.env.PATH ?? "" }, timeoutMs: 30_000 });
    expect([ran.code, ran.last, ran.output.includes("after")]).toEqual([1, "block 1", false]);
  });
});

describe("docs/getting-started.md", () => {
  const prefix = randomPrefix("docs");
  const copy = mkdtempSync(path.join(tmpdir(), "loopsmith-docs-"));
  for (const entry of readdirSync(repoRoot)) {
    if (entry === ".git" || entry === ".loopsmith-local") continue;
    symlinkSync(path.join(repoRoot, entry), path.join(copy, entry));
  }

  afterAll(async () => {
    // A runner stopped by SIGKILL leaves its idle sandbox containers; they carry its id.
    const docker = dockerClient();
    const leftover = await docker.listContainers({ all: true, filters: { label: [`${RUNNER_LABEL}=${prefix}`] } });
    await Promise.all(leftover.map((c) => docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined)));
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    rmSync(copy, { recursive: true, force: true });
  });

  it("runs every shell block in order against a real stack, and stops what it started", async () => {
    const blocks = shellBlocks(readFileSync(PAGE, "utf8"));
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? copy,
      DATABASE_URL,
      REDIS_URL,
      PORT: String(await freePort()),
      QUEUE_PREFIX: prefix,
      RUNNER_ID: prefix,
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    };
    const ran = await runScript(scriptOf(blocks), { cwd: copy, env, timeoutMs: 420_000 });
    const at = ran.last.startsWith("block ") ? blocks[Number(ran.last.slice(6)) - 1] : "";
    expect(ran.code, `${ran.last} failed (exit ${ran.code}):\n${at}\n--- output ---\n${tail(ran.output)}`).toBe(0);
    expect(ran.last).toBe("done");
    // The page stops the API and the runner itself (kill ...; wait).
    expect(ran.leftBehind, tail(ran.output)).toBe(false);
    // What the reader is told to expect.
    expect(ran.output).toMatch(/event: end\ndata: \{"state":"verified"\}/);
    expect(ran.output).toContain("1,Ada Lovelace");
    expect(ran.output).toMatch(/^receipt OK$/m);
  }, 480_000);
});
