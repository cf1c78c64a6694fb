// Shared by the durability tests: what a goal left in the database, the sandbox containers a runner owns,
// and stopping/restarting the real Redis and Docker engine exactly the way scripts/setup.sh starts them.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createConnection } from "node:net";
import { promisify } from "node:util";
import type { PrismaClient } from "@loopsmith/db";
import { dockerClient, RUNNER_LABEL, type RunPurpose, SANDBOX_LABEL, sandboxPurpose } from "@loopsmith/sandbox";
import { startFakeOpenAI, type FakeAnswer, type FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { demoGoal, demoScript, INSPECT_VERIFIED, program, SCRIPT_CORRECT } from "../../scripts/demo/scenario";
import { REDIS_URL } from "../support/services";

const run = promisify(execFile);
export const docker = dockerClient();
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const TERMINAL = ["verified", "failed", "cancelled"];

/** Polls `probe` until it returns something truthy; fails naming `what` after timeoutMs. */
export async function waitUntil<T>(what: string, probe: () => Promise<T> | T, timeoutMs = 30_000, everyMs = 100): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

// ------------------------------------------------------------------------------ a fake provider
export const FAKE_MODEL = "fake-durable-7b";
/** What the fake reports per call: [prompt_tokens, completion_tokens] by the schema asked for. */
export const FAKE_USAGE = { Plan: [400, 80], GeneratedCode: [500, 400], Inspection: [700, 30] } as const;
export type SchemaName = keyof typeof FAKE_USAGE;
export const schemaOf = (body: unknown) => (body as { response_format: { json_schema: { name: SchemaName } } }).response_format.json_schema.name;

/**
 * An OpenAI-compatible fake that answers by the schema asked for (so a repeated request gets the same
 * kind of answer): the demo's plan, its correct program, a verifying inspection. The first generator
 * request can be held (a delay, or a gate the test opens).
 */
export async function fakeProvider(opts: { firstGenerate?: { delayMs?: number; gate?: Promise<unknown> } } = {}): Promise<FakeOpenAI> {
  let generates = 0;
  const answer = async (body: unknown): Promise<FakeAnswer> => {
    const name = schemaOf(body);
    const content = { Plan: demoScript().plan, GeneratedCode: program(SCRIPT_CORRECT), Inspection: INSPECT_VERIFIED }[name];
    const [prompt_tokens, completion_tokens] = FAKE_USAGE[name];
    const first = name === "GeneratedCode" && generates++ === 0;
    if (first) await opts.firstGenerate?.gate;
    return { content: JSON.stringify(content), usage: { prompt_tokens, completion_tokens }, delayMs: first ? (opts.firstGenerate?.delayMs ?? 0) : 0 };
  };
  return startFakeOpenAI(Array.from({ length: 50 }, () => answer));
}
export const fakeEnv = (fake: FakeOpenAI) => ({ OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: FAKE_MODEL });
/** The demo goal on the openai-compatible provider: plan → generate → execute → inspect → verified. */
export const fakeGoal = () => demoGoal({ model: { provider: "openai-compatible" } });

// ------------------------------------------------------------------------------ what a goal left
/** Sandbox containers (running or not) labelled with this runner's id. */
/**
 * A runner's sandbox containers; with `purpose`, only those (a goal's "program", not the self-test's
 * "probe"s). The pool's idle containers (issue 12) are not a goal's and count only with `withIdle`; a pool
 * container's purpose is in its name once handed out (its labels were fixed before), see sandboxPurpose.
 */
export async function containersOf(runnerId: string, purpose?: RunPurpose, opts: { withIdle?: boolean } = {}): Promise<{ id: string; state: string }[]> {
  const list = await docker.listContainers({ all: true, filters: { label: [`${SANDBOX_LABEL}=1`, `${RUNNER_LABEL}=${runnerId}`] } });
  return list
    .filter((c) => (purpose ? sandboxPurpose(c) === purpose : opts.withIdle === true || sandboxPurpose(c) !== "idle"))
    .map((c) => ({ id: c.Id.slice(0, 12), state: c.State }));
}

/** The goal's tape rows, in order, straight from the database. */
export async function tapeRows(prisma: PrismaClient, goalId: string) {
  return prisma.transition.findMany({ where: { goalId }, orderBy: { seq: "asc" }, select: { seq: true, fromState: true, toState: true } });
}

/** Model calls that settled with a response (what was really answered and counted). */
export async function settledCalls(prisma: PrismaClient, goalId: string) {
  const rows = await prisma.modelCall.findMany({ where: { goalId }, orderBy: { createdAt: "asc" } });
  const settled = rows.filter((r) => r.response !== null);
  return {
    all: rows,
    settled,
    count: settled.length,
    tokensIn: settled.reduce((n, r) => n + r.tokensIn, 0),
    tokensOut: settled.reduce((n, r) => n + r.tokensOut, 0),
    byState: settled.map((r) => `${r.state}#${r.attempt}`),
  };
}

// ------------------------------------------------------------------------------------------ Redis
// scripts/setup.sh starts it as:
//   redis-server --port "$rd_port" --bind 127.0.0.1 --daemonize yes --save "" --appendonly no \
//     --logfile /tmp/loopsmith-redis.log
// (no persistence: a restarted Redis is empty, every queued job is gone).
const redisUrl = new URL(REDIS_URL);
const redisHost = redisUrl.hostname;
const redisPort = Number(redisUrl.port || 6379);

async function redisPing(): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: redisHost, port: redisPort });
    let reply = "";
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(2000, () => done(false));
    s.on("error", () => done(false));
    s.on("connect", () => s.write("PING\r\n"));
    s.on("data", (d) => {
      reply += d.toString();
      if (reply.includes("\r\n")) done(reply.startsWith("+PONG") || reply.startsWith("-NOAUTH"));
    });
  });
}

export async function stopRedis(): Promise<void> {
  await run("redis-cli", ["-h", redisHost, "-p", String(redisPort), "SHUTDOWN", "NOSAVE"]).catch(() => undefined);
  await waitUntil("Redis to stop answering", async () => !(await redisPing()), 15_000);
}

/** Starts Redis the way setup.sh does, when it is not answering, and waits until it answers PING. */
export async function ensureRedis(): Promise<void> {
  if (await redisPing()) return;
  await run("redis-server", [
    "--port", String(redisPort), "--bind", "127.0.0.1", "--daemonize", "yes", "--save", "", "--appendonly", "no",
    "--logfile", "/tmp/loopsmith-redis.log",
  ]);
  await waitUntil("Redis to answer PING", redisPing, 15_000, 250);
}

// ------------------------------------------------------------------------------------------ dockerd
// scripts/setup.sh starts it as:
//   setsid nohup "$(command -v dockerd || echo /usr/sbin/dockerd)" >/var/log/loopsmith-dockerd.log 2>&1 < /dev/null &
const DOCKERD_START = `setsid nohup "$(command -v dockerd || echo /usr/sbin/dockerd)" >/var/log/loopsmith-dockerd.log 2>&1 < /dev/null &`;

export async function dockerUp(): Promise<boolean> {
  try {
    await run("docker", ["version", "--format", "{{.Server.Version}}"], { timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

function dockerdPid(): number | null {
  try {
    const pid = Number(readFileSync("/var/run/docker.pid", "utf8").trim());
    return pid > 0 && existsSync(`/proc/${pid}`) ? pid : null;
  } catch {
    return null;
  }
}

/** SIGTERM to dockerd (its normal stop: running containers are stopped too); waits until it is gone. */
export async function stopDockerd(): Promise<void> {
  const pid = dockerdPid();
  if (pid === null) throw new Error("dockerd is not running (no live pid in /var/run/docker.pid)");
  process.kill(pid, "SIGTERM");
  await waitUntil("dockerd to exit", () => !existsSync(`/proc/${pid}`), 30_000, 100);
}

/** Starts dockerd the way setup.sh does, when the engine does not answer, and waits until it answers. */
export async function ensureDockerd(): Promise<void> {
  if (await dockerUp()) return;
  const stale = dockerdPid();
  if (stale !== null) {
    // Still shutting down: let it finish rather than start a second one on the same pid file.
    await waitUntil("the old dockerd to exit", () => !existsSync(`/proc/${stale}`), 30_000, 100);
  }
  await run("bash", ["-c", DOCKERD_START], { env: { PATH: process.env.PATH ?? "/usr/sbin:/usr/bin:/sbin:/bin", HOME: process.env.HOME ?? "/root" } });
  await waitUntil("the Docker engine to answer", dockerUp, 60_000, 250);
}

// ------------------------------------------------------------------------------------------ Postgres
// scripts/setup.sh starts the newest installed cluster "main" with `pg_ctlcluster <version> main start`.
async function pgCluster(): Promise<string> {
  const { stdout } = await run("bash", ["-c", "ls /usr/lib/postgresql | sort -V | tail -1"]);
  return stdout.trim();
}

async function pgAnswers(): Promise<boolean> {
  try {
    await run("pg_isready", ["-h", "127.0.0.1", "-p", "5432", "-t", "2"]);
    return true;
  } catch {
    return false;
  }
}

/** Stops Postgres at once (`-m fast`: open connections are cut, as in a crash or a failover). */
export async function stopPostgres(): Promise<void> {
  await run("pg_ctlcluster", [await pgCluster(), "main", "stop", "-m", "fast"]).catch(() => undefined);
  await waitUntil("Postgres to stop answering", async () => !(await pgAnswers()), 15_000, 100);
}

/** Starts Postgres the way setup.sh does, when it is not answering, and waits until it accepts connections. */
export async function ensurePostgres(): Promise<void> {
  if (await pgAnswers()) return;
  await run("pg_ctlcluster", [await pgCluster(), "main", "start"]).catch(() => undefined);
  await waitUntil("Postgres to accept connections", pgAnswers, 30_000, 250);
}
