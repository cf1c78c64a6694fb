import { createHash, randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import * as tar from "tar-stream";
import { BOOTSTRAP_ACK, BOOTSTRAP_PY, BOOTSTRAP_READY } from "./bootstrap";
import { BoundedBuffer, ClippedCapture, MarkerSplitter, createDemuxer } from "./output";
import { Sanitiser } from "./storable";

/** Where things live inside the container. Inputs are read-only by convention, outputs are collected. */
export const SANDBOX_WORKDIR = "/work";
export const SANDBOX_INPUT_DIR = "/work/inputs";
export const SANDBOX_OUTPUT_DIR = "/work/out";
export const SANDBOX_UID = 10001;
/** The judge's uid (RunRequest.judge): a process the program can neither read, trace nor signal. */
export const JUDGE_UID = 10002;
/**
 * The bootstrap starts as root with only these capabilities, to hand files to their owners, become the
 * program's (or the judge's) uid, read what the program wrote and stop what it left running; it drops
 * them all (bounding set included) in every process it starts.
 */
export const BOOTSTRAP_CAPS = ["CHOWN", "SETUID", "SETGID", "SETPCAP", "KILL", "DAC_READ_SEARCH"];

/** Structural so that a pino logger, a child logger or a test double all fit. */
export interface SandboxLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SandboxFile {
  name: string;
  content: Buffer;
}

export interface RunRequest {
  /** Inputs, placed at /work/inputs/<name>. */
  files: SandboxFile[];
  /** The program, placed at /work/<filename>. */
  script?: { filename: string; source: string };
  /**
   * Further files under /work at a relative path (e.g. `tests/test_solution.py`, `.loopsmith/harness.py`),
   * for material that must sit beside the program rather than among its inputs. Never under inputs/ or out/.
   */
  workFiles?: { path: string; content: Buffer }[];
  /** argv, run with cwd /work, e.g. ["python3", "analysis.py"]. */
  command: string[];
  /** The only variables the program sees besides the basics (PYTHON* variables, thread counts) (e.g. input paths). */
  env?: Record<string, string>;
  timeoutMs: number;
  /** Aborting kills the container (the result then reports `aborted`). */
  signal?: AbortSignal;
  /** What the run is for, as a container label (PURPOSE_LABEL): a goal's program, a check's own run, an evaluator probe. */
  purpose?: RunPurpose;
  /**
   * false: a pristine interpreter, never the pool's pre-imported one (for programs that must start clean).
   * The run still uses a pool container when one is ready, exec'ing a fresh process in it.
   */
  preimport?: boolean;
  /**
   * issue 14: the image the run needs (default python). A sandbox serves one runtime and refuses the
   * others; routeSandbox puts one per runtime behind one interface.
   */
  runtime?: "python" | "node";
  /**
   * issue 26: work file paths the program may read but never change, for the whole run: owned by root,
   * read-only, in directories the program cannot remove or rename them from (a client's locked tests,
   * the runner's configuration, a harness).
   */
  protect?: string[];
  /**
   * issue 26: a second process, the judge, started beside the program under its own uid (JUDGE_UID) in
   * /work/<dir>: the work files under <dir>/ are its alone (the program can neither read nor change them),
   * and what it writes to <dir>/out comes back as `judge.files`. The two talk only through pipes: the
   * judge's fd 3 reaches the program's fd 4, the program's fd 3 reaches the judge's fd 4. The run lasts as
   * long as the judge; the program is stopped when the judge ends.
   */
  judge?: { dir: string; command: string[]; env?: Record<string, string> };
  /** issue 26: the program gets fd 3, a pipe to the bootstrap; what it writes comes back as `channel`. */
  channel?: boolean;
  /**
   * issue 26: run as a judge must: HOME=/tmp/home (root's, sticky) holding empty, unwritable
   * .node_modules, .node_libraries, .local and .npmrc; an unwritable /tmp/.loopsmith-pycache for a
   * bytecode cache prefix; and an empty, unwritable node_modules beside protected files that have none.
   */
  isolate?: boolean;
}

/** What the judge of a run (RunRequest.judge) produced. */
export interface JudgeResult {
  exitCode: number;
  /** Regular files the judge left in its out/ directory. */
  files: { name: string; content: Buffer }[];
  errors: string[];
}

export interface Artifact {
  /** Path relative to /work/out. */
  name: string;
  size: number;
  sha256: string;
  content: Buffer;
}

export interface RunResult {
  /** The program's exit code; 128+N when killed by signal N; 124 on timeout. */
  exitCode: number;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  stdoutTruncatedBytes: number;
  stderrTruncatedBytes: number;
  /** From container start until the program's container stopped (what the timeout is measured against). */
  durationMs: number;
  /** Regular files found under /work/out when the program ended, sorted by name. */
  artifacts: Artifact[];
  /** Files that were not returned (links, devices, over a limit) and collection failures. */
  artifactErrors: string[];
  /** The image's id: the sha256 of its config, content-addressed, also for images built by docker import. */
  imageId: string;
  /** The image's RepoDigest (`repo@sha256:...`) when it came from or went to a registry; null otherwise. */
  imageDigest: string | null;
  /** What the run was allowed (the timeout is the request's). */
  limits: Readonly<SandboxLimits>;
  oomKilled: boolean;
  /** The caller aborted the run (RunRequest.signal) and the container was killed. */
  aborted: boolean;
  /** The run took a pre-started container from the pool (false: a container started for it). */
  pooled: boolean;
  /** issue 26: the judge's outcome, for runs with RunRequest.judge. */
  judge?: JudgeResult;
  /** issue 26: what the program wrote to its channel (RunRequest.channel), up to 1 MiB. */
  channel?: { text: string; clipped: boolean };
  /**
   * What was changed so that the output can be stored (NUL shown as U+2400, invalid UTF-8 and unpaired
   * surrogates as U+FFFD), one line per field. Every string of a RunResult is storable in Postgres text and jsonb.
   */
  notes: string[];
}

/**
 * Runs one program in a fresh, throwaway environment: a container started for the run, or (issue 12) a
 * pre-started, single-use one from the pool (createDockerSandbox), behind the same interface.
 */
export interface Sandbox {
  readonly image: string;
  run(req: RunRequest): Promise<RunResult>;
}

export interface SandboxLimits {
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  workTmpfsBytes: number;
  tmpTmpfsBytes: number;
  nofile: number;
  fileSizeBytes: number;
  stdoutCapBytes: number;
  stderrCapBytes: number;
  artifactMaxBytes: number;
  artifactsTotalBytes: number;
  artifactMaxCount: number;
}

const MiB = 1024 * 1024;

/** The limits a run had, as stored with its execution and shown in GET /goals/:id (snake_case, bytes and ms). */
export function describeLimits(limits: Readonly<SandboxLimits>, timeoutMs: number) {
  return {
    timeout_ms: timeoutMs,
    memory_bytes: limits.memoryBytes,
    nano_cpus: limits.nanoCpus,
    pids_limit: limits.pidsLimit,
    work_tmpfs_bytes: limits.workTmpfsBytes,
    tmp_tmpfs_bytes: limits.tmpTmpfsBytes,
    nofile: limits.nofile,
    file_size_bytes: limits.fileSizeBytes,
    stdout_cap_bytes: limits.stdoutCapBytes,
    stderr_cap_bytes: limits.stderrCapBytes,
    artifact_max_bytes: limits.artifactMaxBytes,
    artifacts_total_bytes: limits.artifactsTotalBytes,
    artifact_max_count: limits.artifactMaxCount,
  };
}

export const DEFAULT_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  memoryBytes: 512 * MiB,
  nanoCpus: 1_000_000_000,
  pidsLimit: 128,
  workTmpfsBytes: 64 * MiB,
  tmpTmpfsBytes: 16 * MiB,
  nofile: 1024,
  fileSizeBytes: 64 * MiB,
  stdoutCapBytes: 64 * 1024,
  stderrCapBytes: 64 * 1024,
  artifactMaxBytes: 5 * MiB,
  artifactsTotalBytes: 20 * MiB,
  artifactMaxCount: 100,
});

export const SANDBOX_LABEL = "loopsmith.sandbox";
/**
 * Labels each container with its RunRequest.purpose, so that what ran can be counted by kind. A pool
 * container is labelled POOL_PURPOSE (labels are fixed at creation) and renamed for its purpose when
 * handed out: sandboxPurpose reads either.
 */
export const PURPOSE_LABEL = "loopsmith.purpose";
export type RunPurpose = "program" | "check" | "probe";
export const RUNNER_LABEL = "loopsmith.runner";
/** Epoch ms after which the container has outlived its run's timeout: whoever finds it may remove it. */
export const DEADLINE_LABEL = "loopsmith.deadline";
/**
 * Where the owner's liveness can be judged (the runner's queue prefix: heartbeats live there). Runners of
 * other namespaces may share the Docker engine; their heartbeats are invisible from here.
 */
export const NAMESPACE_LABEL = "loopsmith.namespace";
const DEADLINE_SLACK_MS = 60_000;

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
// A work file's path segments may also be hidden (".loopsmith") or hold @ + ~ (a workspace's
// node_modules/@types, issue 14); "." and ".." never match.
const WORK_SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9._@+~-]{1,128}$/;
const WORK_PATH_MAX = 255;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// After the container stops, Docker still has to flush the last frames of the attach stream.
const STREAM_DRAIN_MS = 10_000;

export async function pingDocker(docker: Docker): Promise<void> {
  try {
    await docker.ping();
  } catch (e) {
    throw new Error(`Docker engine unreachable: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * Removes sandbox containers left behind by a runner that died: those of `runnerId`, or every runner's when
 * omitted. Several runners may share one engine, so `olderThanMs` (longer than any run's timeout) spares
 * containers that a live runner is still using.
 */
export async function removeLeftovers(
  docker: Docker,
  opts: {
    runnerId?: string;
    olderThanMs?: number;
    /** Remove only containers whose runner is not alive (or whose deadline passed); spares the live ones. */
    isAlive?: (runnerId: string) => Promise<boolean>;
    /**
     * With isAlive: the namespace isAlive can speak for. Containers of another namespace (or of none) are
     * spared until their deadline passes, since their runner's heartbeat cannot be seen from here.
     */
    namespace?: string;
  } = {},
): Promise<number> {
  const label = [`${SANDBOX_LABEL}=1`];
  if (opts.runnerId !== undefined) label.push(`${RUNNER_LABEL}=${opts.runnerId}`);
  const found = await docker.listContainers({ all: true, filters: { label } });
  const cutoff = Date.now() - (opts.olderThanMs ?? 0);
  let removed = 0;
  for (const c of found) {
    if (c.Created * 1000 > cutoff) continue;
    if (opts.isAlive) {
      const owner = c.Labels?.[RUNNER_LABEL] ?? "";
      const deadline = Number(c.Labels?.[DEADLINE_LABEL] ?? "NaN");
      const overdue = Number.isFinite(deadline) && deadline < Date.now();
      const foreign = opts.namespace !== undefined && c.Labels?.[NAMESPACE_LABEL] !== opts.namespace;
      if (!overdue && (foreign || (owner && (await opts.isAlive(owner))))) continue;
    }
    try {
      await docker.getContainer(c.Id).remove({ force: true });
      removed++;
    } catch (e) {
      if (!isGone(e)) throw e;
    }
  }
  return removed;
}

/** A pool of pre-started, single-use containers (see createDockerSandbox). */
export interface PoolOptions {
  /** Idle containers to keep ready (0: no pool, every run starts its own container). */
  size: number;
  /** An idle container older than this is replaced (a fresh one for a long-idle runner, and a bound on drift). */
  ttlMs: number;
  /**
   * Ceiling on what the idle containers may hold: idle count x the memory limit of one container (the
   * most an idle container can ever use) stays at or under it, whatever `size` says.
   */
  maxIdleBytes: number;
  /** Modules the waiting interpreter imports before it gets a program; [] turns pre-import off. */
  preimport: readonly string[];
  /** The longest run a pool container takes (its deadline label covers ttlMs + this); longer runs go cold. */
  maxRunMs: number;
}

export const DEFAULT_PREIMPORT: readonly string[] = Object.freeze(["numpy", "pandas"]);

/** A Sandbox whose pool the owner starts (after its leftover sweep) and drains (on shutdown). */
export interface PooledSandbox extends Sandbox {
  /** Starts filling the pool in the background. Without a pool (size 0), does nothing. */
  start(): void;
  /** Stops refilling and removes every idle container; runs in flight finish and remove their own. */
  close(): Promise<void>;
  /** What the pool holds now (for tests, benches and logs). */
  poolStats(): { idle: number; ready: number; target: number; creating: boolean };
  /** Resolves once the containers of finished runs are removed (a pool container is removed after its result returns). */
  settled(): Promise<void>;
  /** Resolves once `n` (default: the target) idle containers are ready, or rejects after `timeoutMs`. */
  warm(opts?: { n?: number; timeoutMs?: number }): Promise<void>;
}

/** Everything about a sandbox container that does not depend on the request. */
function hostConfig(limits: Readonly<SandboxLimits>): Docker.HostConfig {
  return {
    NetworkMode: "none",
    ReadonlyRootfs: true,
    Tmpfs: {
      // Root's until the bootstrap has placed the request's files and handed each to its owner.
      [SANDBOX_WORKDIR]: `rw,nosuid,nodev,noexec,size=${limits.workTmpfsBytes},uid=0,gid=0,mode=0755`,
      "/tmp": `rw,nosuid,nodev,noexec,size=${limits.tmpTmpfsBytes},mode=1777`,
    },
    CapDrop: ["ALL"],
    CapAdd: BOOTSTRAP_CAPS,
    SecurityOpt: ["no-new-privileges"],
    Privileged: false,
    PidsLimit: limits.pidsLimit,
    Memory: limits.memoryBytes,
    MemorySwap: limits.memoryBytes,
    NanoCpus: limits.nanoCpus,
    IpcMode: "private",
    ShmSize: 16 * MiB,
    Ulimits: [
      { Name: "nofile", Soft: limits.nofile, Hard: limits.nofile },
      { Name: "fsize", Soft: limits.fileSizeBytes, Hard: limits.fileSizeBytes },
      { Name: "core", Soft: 0, Hard: 0 },
    ],
    Init: true,
    AutoRemove: false,
    // Output reaches us through the attach stream; a log driver would only copy it to the host's disk.
    LogConfig: { Type: "none", Config: {} },
  };
}

/** A started container's streams: the bootstrap's preamble (READY, ACK) is stripped before the program's output. */
interface Io {
  stream: Duplex;
  /** True once READY arrived; false if the stream ended first. */
  ready: Promise<boolean>;
  /** Whether the bootstrap acknowledged the request (so the program may have run). */
  acked(): boolean;
  /** Ends when the container's output ends. */
  drained: Promise<void>;
  /** Where the program's output goes; stderr before this (a pre-import warning) is dropped. */
  bind(stdout: (b: Buffer) => void, stderr: (b: Buffer) => void): void;
}

async function attachIo(container: Docker.Container): Promise<Io> {
  const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as Duplex;
  const preamble = Buffer.concat([BOOTSTRAP_READY, BOOTSTRAP_ACK]);
  let pre: Buffer | null = Buffer.alloc(0);
  let acked = false;
  let out: ((b: Buffer) => void) | undefined;
  let err: ((b: Buffer) => void) | undefined;
  let setReady!: (v: boolean) => void;
  const ready = new Promise<boolean>((r) => (setReady = r));
  const demux = createDemuxer((s, payload) => {
    if (s === 1) {
      if (pre !== null) {
        pre = Buffer.concat([pre, payload]);
        if (pre.length >= BOOTSTRAP_READY.length) setReady(pre.subarray(0, BOOTSTRAP_READY.length).equals(BOOTSTRAP_READY));
        if (pre.length < preamble.length) return;
        acked = pre.subarray(0, preamble.length).equals(preamble);
        // Written by the bootstrap before the program exists, so a mismatch is a broken bootstrap: keep it all.
        payload = acked ? pre.subarray(preamble.length) : pre;
        pre = null;
        if (payload.length === 0) return;
      }
      out?.(payload);
    } else if (s === 2) err?.(payload);
  });
  const drained = new Promise<void>((resolve) => {
    stream.on("data", (chunk: Buffer) => demux(chunk));
    const end = () => {
      setReady(false);
      resolve();
    };
    stream.once("end", end);
    stream.once("close", end);
    // A broken attach stream loses output, not the run: the trailer check reports it.
    stream.once("error", end);
  });
  return {
    stream,
    ready,
    acked: () => acked,
    drained,
    bind(o, e) {
      out = o;
      err = e;
    },
  };
}

/** A container started ahead of its run, waiting in the pool. */
interface Warm {
  container: Docker.Container;
  suffix: string;
  io: Io;
  exited: Promise<{ StatusCode: number }>;
  createdAt: number;
  deadline: number;
  ready: boolean;
  dead: boolean;
}

/** The env names a pre-imported interpreter has already read at its start: a request that sets one runs pristine. */
const STARTUP_ENV = /^(PYTHON|LC_|OMP_|OPENBLAS_|MKL_)|^(LANG|HOME|PATH)$/;

/**
 * Whether the request can run inside the pool container's pre-imported interpreter: `python3 <file>
 * args...`, with no variable the interpreter (or a pre-imported library) reads only at start-up, and
 * not opted out. Anything else is exec'd in the same container, a pristine process.
 */
export function runsInProcess(req: Pick<RunRequest, "command" | "env" | "preimport">): boolean {
  if (req.preimport === false) return false;
  const [exe, file] = req.command;
  if (exe !== "python3" || file === undefined || file.startsWith("-") || file.length === 0) return false;
  return Object.keys(req.env ?? {}).every((k) => !STARTUP_ENV.test(k));
}

/** Container names carry the purpose too: a pool container's labels are fixed before its purpose is known. */
export const SANDBOX_NAME_PREFIX = "loopsmith-";
/** PURPOSE_LABEL of a container created for the pool; its name says what it was used for (see sandboxPurpose). */
export const POOL_PURPOSE = "pool";
const IDLE = "idle";

/**
 * What a sandbox container is (or was) for, from its name (`loopsmith-<purpose>-<id>`; a pool container is
 * renamed when it is handed out) or, for containers named otherwise, its label. "idle": waiting in the pool.
 */
export function sandboxPurpose(c: { Names?: string[]; Labels?: Record<string, string> }): RunPurpose | "idle" | undefined {
  const name = (c.Names?.[0] ?? "").replace(/^\//, "");
  const m = /^loopsmith-(program|check|probe|idle)-[0-9a-f]+$/.exec(name);
  if (m) return m[1] as RunPurpose | "idle";
  const label = c.Labels?.[PURPOSE_LABEL];
  return label === "program" || label === "check" || label === "probe" ? label : undefined;
}

export function createDockerSandbox(opts: {
  docker: Docker;
  image: string;
  runnerId: string;
  /** Labels the containers with NAMESPACE_LABEL (see removeLeftovers). */
  namespace?: string;
  limits?: Partial<SandboxLimits>;
  /** Pre-started, single-use containers; without it (or with size 0) every run starts its own. */
  pool?: Partial<PoolOptions>;
  log?: SandboxLog;
  /** The runtime the image has (default python): requests for another runtime are refused. */
  runtime?: "python" | "node";
}): PooledSandbox {
  const { docker, image, runnerId, log } = opts;
  const runtime = opts.runtime ?? "python";
  const limits: Readonly<SandboxLimits> = Object.freeze({ ...DEFAULT_LIMITS, ...opts.limits });
  const poolOpts: PoolOptions = {
    size: 0,
    ttlMs: 10 * 60_000,
    maxIdleBytes: 2048 * MiB,
    preimport: DEFAULT_PREIMPORT,
    maxRunMs: 30 * 60_000,
    ...opts.pool,
  };
  const target = Math.max(0, Math.min(poolOpts.size, Math.floor(poolOpts.maxIdleBytes / limits.memoryBytes)));
  const preimport = poolOpts.preimport.length > 0;
  let imageId: Promise<{ id: string; digest: string | null }> | undefined;

  const getImageId = (): Promise<{ id: string; digest: string | null }> => {
    imageId ??= docker
      .getImage(image)
      .inspect()
      .then((i) => ({ id: i.Id, digest: i.RepoDigests?.[0] ?? null }))
      .catch((e: unknown) => {
        imageId = undefined;
        throw e;
      });
    return imageId;
  };

  const labels = (purpose: string, deadline: number): Record<string, string> => ({
    [SANDBOX_LABEL]: "1",
    [RUNNER_LABEL]: runnerId,
    [DEADLINE_LABEL]: String(deadline),
    [PURPOSE_LABEL]: purpose,
    ...(opts.namespace !== undefined ? { [NAMESPACE_LABEL]: opts.namespace } : {}),
  });
  const stdio = { AttachStdin: true, AttachStdout: true, AttachStderr: true, OpenStdin: true, StdinOnce: true, Tty: false } as const;

  const header = (req: RunRequest, marker: string, inProcess: boolean) =>
    JSON.stringify({
      marker,
      argv: req.command,
      env: Object.fromEntries(buildEnv(req.env).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])),
      inProcess,
      protect: req.protect ?? [],
      judgeDir: req.judge?.dir ?? null,
      judge: req.judge ? { argv: req.judge.command, env: Object.fromEntries(Object.entries(req.judge.env ?? {})), cwd: req.judge.dir } : null,
      channel: req.channel === true,
      isolate: req.isolate === true,
      limits: {
        maxFileBytes: limits.artifactMaxBytes,
        maxTotalBytes: limits.artifactsTotalBytes,
        maxFiles: limits.artifactMaxCount,
        maxEntries: 10_000,
      },
    });

  const removing = new Set<Promise<void>>();
  const removeLater = (p: Promise<void>) => {
    removing.add(p);
    void p.finally(() => removing.delete(p));
  };
  const remove = (container: Docker.Container) =>
    container.remove({ force: true }).catch((e: unknown) => {
      if (!isGone(e)) log?.warn({ container: container.id, err: e }, "could not remove sandbox container");
    });

  // ------------------------------------------------------------------------------------------- pool
  const idle: Warm[] = [];
  let closed = false;
  let started = false;
  let filling: Promise<void> | undefined;
  let failures = 0;
  let ttlTimer: NodeJS.Timeout | undefined;
  let wakeBackoff: (() => void) | undefined;
  const readyWaiters = new Set<() => void>();
  const notify = () => readyWaiters.forEach((f) => f());

  const discard = (w: Warm, why: string) => {
    const i = idle.indexOf(w);
    if (i >= 0) idle.splice(i, 1);
    w.dead = true;
    w.io.stream.destroy();
    log?.info({ container: w.container.id.slice(0, 12), why }, "sandbox pool: container discarded");
    void remove(w.container);
    refill();
  };

  async function createWarm(): Promise<Warm> {
    const suffix = randomBytes(8).toString("hex");
    const createdAt = Date.now();
    const deadline = createdAt + poolOpts.ttlMs + poolOpts.maxRunMs + DEADLINE_SLACK_MS;
    const container = await docker.createContainer({
      name: `${SANDBOX_NAME_PREFIX}${IDLE}-${suffix}`,
      Image: image,
      Entrypoint: preimport ? ["python3", "-c", BOOTSTRAP_PY, ...poolOpts.preimport] : ["python3", "-I", "-S", "-c", BOOTSTRAP_PY],
      // The bootstrap starts as root (see BOOTSTRAP_CAPS) and runs the program as SANDBOX_UID: PID 1 and the
      // bootstrap stay out of the program's reach (issue 25: docker-init ran as the program's uid).
      User: "0:0",
      WorkingDir: SANDBOX_WORKDIR,
      Env: buildEnv(undefined),
      Labels: labels(POOL_PURPOSE, deadline),
      ...stdio,
      NetworkDisabled: true,
      HostConfig: hostConfig(limits),
    });
    try {
      const io = await attachIo(container);
      await container.start();
      const w: Warm = { container, suffix, io, exited: container.wait() as Promise<{ StatusCode: number }>, createdAt, deadline, ready: false, dead: false };
      // An idle container that dies (killed from outside, the engine restarting) leaves the pool at once.
      w.exited.then(
        () => !w.dead && idle.includes(w) && discard(w, "exited while idle"),
        () => !w.dead && idle.includes(w) && discard(w, "lost while idle"),
      );
      void io.ready.then((ok) => {
        if (ok) {
          w.ready = true;
          notify();
        } else if (idle.includes(w)) discard(w, "bootstrap did not start");
      });
      return w;
    } catch (e) {
      void remove(container);
      throw e;
    }
  }

  function refill(): void {
    if (!started || closed || filling || target === 0) return;
    filling = (async () => {
      while (!closed && idle.length < target) {
        try {
          const w = await createWarm();
          if (closed) {
            w.dead = true;
            w.io.stream.destroy();
            await remove(w.container);
            break;
          }
          idle.push(w);
          failures = 0;
        } catch (e) {
          // The engine refused (or hiccuped): runs go cold meanwhile; try again after a growing pause.
          failures++;
          const pauseMs = Math.min(30_000, 250 * 2 ** Math.min(failures, 7));
          log?.warn({ err: (e as Error).message, failures, pauseMs }, "sandbox pool: could not start a container");
          await new Promise<void>((r) => {
            const t = setTimeout(r, pauseMs);
            t.unref();
            wakeBackoff = () => {
              clearTimeout(t);
              r();
            };
          });
          wakeBackoff = undefined;
        }
      }
    })().finally(() => {
      filling = undefined;
      // A container taken (or discarded) while the last one was being made.
      if (!closed && idle.length < target) refill();
    });
  }

  /** A live idle container that can take a run of `timeoutMs` (a ready one first), out of the pool for good. */
  function take(timeoutMs: number): Warm | undefined {
    const fits = (w: Warm) => !w.dead && w.deadline >= Date.now() + timeoutMs + DEADLINE_SLACK_MS;
    const w = idle.find((x) => x.ready && fits(x)) ?? idle.find(fits);
    if (!w) return undefined;
    idle.splice(idle.indexOf(w), 1);
    refill();
    return w;
  }

  // -------------------------------------------------------------------------------------------- run
  async function execute(
    c: { container: Docker.Container; io: Io; exited: Promise<{ StatusCode: number }> },
    req: RunRequest,
    input: Buffer,
    img: { id: string; digest: string | null },
    pooled: boolean,
    inProcess: boolean,
  ): Promise<RunResult | undefined> {
    const { container, io } = c;
    const marker = `\0loopsmith-trailer-${randomBytes(16).toString("hex")}\0`;
    const stdout = new ClippedCapture(limits.stdoutCapBytes);
    const stderr = new ClippedCapture(limits.stderrCapBytes);
    // Header line + tar; anything beyond the artifact limits plus headers is a broken or forged trailer.
    // The head line also carries the judge's report files (base64) and the channel (JSON-escaped).
    const trailer = new BoundedBuffer(limits.artifactsTotalBytes + (limits.artifactMaxCount + 8) * 2048 + 2 * limits.artifactMaxBytes + 8 * MiB);
    // stdout: the program's output, the marker, the trailer, the marker again; stderr: output, the marker.
    let setComplete!: () => void;
    const complete = new Promise<void>((r) => (setComplete = r));
    const check = () => trailerEnd.markerSeen && stderrEnd.markerSeen && setComplete();
    const trailerEnd = new MarkerSplitter(Buffer.from(marker), (b) => trailer.push(b), () => undefined);
    const stderrEnd = new MarkerSplitter(Buffer.from(marker), (b) => stderr.push(b), () => undefined);
    const splitter = new MarkerSplitter(Buffer.from(marker), (b) => stdout.push(b), (b) => trailerEnd.push(b));
    io.bind(
      (b) => {
        splitter.push(b);
        check();
      },
      (b) => {
        stderrEnd.push(b);
        check();
      },
    );

    const startedWallMs = Date.now();
    const started = performance.now();
    let timedOut = false;
    // There is no API to kill one process; the container is the unit we can kill.
    const timer = setTimeout(() => {
      timedOut = true;
      container.kill({ signal: "SIGKILL" }).catch(() => undefined);
    }, req.timeoutMs);
    let aborted = false;
    const onAbort = () => {
      aborted = true;
      container.kill({ signal: "SIGKILL" }).catch(() => undefined);
    };
    if (req.signal?.aborted) onAbort();
    else req.signal?.addEventListener("abort", onAbort, { once: true });
    io.stream.end(Buffer.concat([Buffer.from(header(req, marker, inProcess) + "\n"), input]));

    // A pool container's run is over once all of its output is in (both end markers): its container
    // stops and is removed after the result is returned. A cold run waits for its container, as it always did.
    let waited: { StatusCode: number } | undefined;
    try {
      waited = await (pooled ? Promise.race([c.exited, complete.then(() => undefined)]) : c.exited);
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener("abort", onAbort);
    }
    const durationMs = Math.round(performance.now() - started);
    const drainedInTime =
      waited === undefined ||
      (await Promise.race([io.drained.then(() => true), new Promise<boolean>((r) => setTimeout(r, STREAM_DRAIN_MS, false).unref())]));
    io.stream.destroy();
    splitter.end();
    trailerEnd.end();
    stderrEnd.end();
    // A pool container that died before it read the request never ran the program: the caller runs it elsewhere.
    if (pooled && !io.acked() && !timedOut && !aborted) return undefined;
    // Killed by SIGKILL: the out-of-memory flag is only certain once the container has stopped (and a
    // trailer without an exit code leaves the container's own).
    if (waited === undefined && (trailerExitCode(trailer) ?? 137) === 137) waited = await c.exited;
    const state = (await container.inspect()).State;

    const artifactErrors: string[] = [];
    let exitCode = waited?.StatusCode ?? -1;
    let artifacts: Artifact[] = [];
    let judge: JudgeResult | undefined;
    let channel: RunResult["channel"];
    if (timedOut) {
      exitCode = 124;
      artifactErrors.push(`timed out after ${req.timeoutMs} ms: no artifacts collected`);
    } else if (!splitter.markerSeen) {
      // The run ended before the bootstrap's trailer. If the engine (stopping or restarting), an operator
      // or a sweep stopped or killed the container, that is an outage, not what the program did: fail
      // the run (the step is retried) rather than hand the inspector a crash the program never had.
      if (!aborted && (await killedFromOutside(docker, container.id, startedWallMs))) {
        throw new SandboxInterrupted(`the sandbox container was stopped from outside during the run (container exit ${waited?.StatusCode})`);
      }
      artifactErrors.push(
        state.OOMKilled
          ? "out of memory: the container was killed before artifacts were collected"
          : `no artifacts collected: the sandbox bootstrap did not finish (container exit ${waited?.StatusCode}${drainedInTime ? "" : ", output stream did not drain"})`,
      );
    } else {
      const parsed = await parseTrailer(trailer, limits);
      if (parsed.exitCode !== undefined) exitCode = parsed.exitCode;
      artifacts = parsed.artifacts;
      artifactErrors.push(...parsed.errors);
      judge = parsed.judge;
      channel = parsed.channel;
    }

    // The program's bytes become strings here; nothing unstorable leaves this function.
    const clean = new Sanitiser();
    const out = stdout.decoded();
    const err = stderr.decoded();
    clean.invalidUtf8("stdout", out.invalidUtf8);
    clean.invalidUtf8("stderr", err.invalidUtf8);
    artifacts = artifacts.map((a) => ({ ...a, name: clean.clean((n) => `artifact ${JSON.stringify(n)}: its name had`, a.name) }));
    const result: RunResult = {
      exitCode,
      timedOut,
      stdout: clean.clean("stdout", out.text),
      stderr: clean.clean("stderr", err.text),
      stdoutTruncatedBytes: stdout.clippedBytes,
      stderrTruncatedBytes: stderr.clippedBytes,
      durationMs,
      artifacts,
      artifactErrors: artifactErrors.map((m) => clean.clean("an artifact error message", m)),
      imageId: img.id,
      imageDigest: img.digest,
      limits,
      oomKilled: state.OOMKilled === true,
      aborted,
      pooled,
      ...(judge ? { judge: { ...judge, errors: judge.errors.map((m) => clean.clean("a judge error message", m)) } } : {}),
      ...(channel ? { channel: { text: clean.clean("the channel", channel.text), clipped: channel.clipped } } : {}),
      notes: clean.notes,
    };
    log?.info(
      { container: container.id.slice(0, 12), pooled, inProcess, exitCode, timedOut, durationMs, artifacts: artifacts.length, oomKilled: result.oomKilled },
      "sandbox run finished",
    );
    return result;
  }

  async function runCold(req: RunRequest, input: Buffer, img: { id: string; digest: string | null }): Promise<RunResult> {
    const container = await docker.createContainer({
      name: `${SANDBOX_NAME_PREFIX}${req.purpose ?? "program"}-${randomBytes(8).toString("hex")}`,
      Image: image,
      Entrypoint: ["python3", "-I", "-S", "-c", BOOTSTRAP_PY],
      // The bootstrap starts as root (see BOOTSTRAP_CAPS) and runs the program as SANDBOX_UID: PID 1 and the
      // bootstrap stay out of the program's reach (issue 25: docker-init ran as the program's uid).
      User: "0:0",
      WorkingDir: SANDBOX_WORKDIR,
      Env: buildEnv(req.env),
      Labels: labels(req.purpose ?? "program", Date.now() + req.timeoutMs + DEADLINE_SLACK_MS),
      ...stdio,
      NetworkDisabled: true,
      HostConfig: hostConfig(limits),
    });
    try {
      const io = await attachIo(container);
      await container.start();
      const exited = container.wait() as Promise<{ StatusCode: number }>;
      // A cold container has nothing to pre-import: the program is exec'd, as python3 <file> always was.
      return (await execute({ container, io, exited }, req, input, img, false, false))!;
    } finally {
      await remove(container);
    }
  }

  async function run(req: RunRequest): Promise<RunResult> {
    validate(req, limits);
    if ((req.runtime ?? "python") !== runtime) throw new Error(`sandbox: this sandbox runs ${runtime} (image ${image}), not ${req.runtime ?? "python"}`);
    const [img, input] = await Promise.all([getImageId(), packInputs(req)]);
    for (let w = take(req.timeoutMs); w; w = take(req.timeoutMs)) {
      // Handed out: renamed for its purpose (its labels were fixed before anyone knew it), never pooled again.
      const renamed = w.container.rename({ name: `${SANDBOX_NAME_PREFIX}${req.purpose ?? "program"}-${w.suffix}` }).catch((e: unknown) => {
        if (!isGone(e)) log?.warn({ container: w!.container.id, err: e }, "could not rename a pool container");
      });
      w.dead = true;
      const container = w.container;
      try {
        const res = await execute(w, req, input, img, true, preimport && runsInProcess(req));
        if (res) return res;
        log?.warn({ container: container.id.slice(0, 12) }, "sandbox pool: container was dead when handed out; trying another");
      } finally {
        removeLater(renamed.then(() => remove(container)));
      }
    }
    return runCold(req, input, img);
  }

  function start(): void {
    if (started || closed || target === 0) return;
    started = true;
    ttlTimer = setInterval(
      () => {
        for (const w of [...idle]) if (Date.now() - w.createdAt > poolOpts.ttlMs) discard(w, "older than the pool TTL");
      },
      Math.max(1000, Math.min(30_000, Math.floor(poolOpts.ttlMs / 4))),
    );
    ttlTimer.unref();
    refill();
  }

  async function close(): Promise<void> {
    closed = true;
    if (ttlTimer) clearInterval(ttlTimer);
    wakeBackoff?.();
    await filling;
    const all = idle.splice(0);
    for (const w of all) {
      w.dead = true;
      w.io.stream.destroy();
    }
    await Promise.all(all.map((w) => remove(w.container)));
    await settled();
  }

  async function settled(): Promise<void> {
    while (removing.size > 0) await Promise.allSettled([...removing]);
  }

  async function warm(o: { n?: number; timeoutMs?: number } = {}): Promise<void> {
    const n = Math.min(o.n ?? target, target);
    const deadline = Date.now() + (o.timeoutMs ?? 60_000);
    while (idle.filter((w) => w.ready && !w.dead).length < n) {
      if (closed || !started) throw new Error("sandbox pool: not started");
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`sandbox pool: ${n} ready containers not reached in time (${idle.length} idle)`);
      await new Promise<void>((r) => {
        const done = () => {
          readyWaiters.delete(done);
          clearTimeout(t);
          r();
        };
        const t = setTimeout(done, Math.min(left, 250));
        readyWaiters.add(done);
      });
    }
  }

  const poolStats = () => ({ idle: idle.length, ready: idle.filter((w) => w.ready).length, target, creating: filling !== undefined });

  return { image, run, start, close, poolStats, warm, settled };
}

/** A run cut short by something outside the program (the engine stopped its container): an infrastructure failure. */
export class SandboxInterrupted extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxInterrupted";
  }
}

/**
 * Whether the engine logged a kill of the container since `sinceMs`. Only the engine's stop/kill/remove
 * paths log one, and this sandbox kills only on timeout or abort (checked before): a program cannot
 * produce it, whatever it does inside. Any failure to ask is a failure of the engine, so it throws.
 */
async function killedFromOutside(docker: Docker, id: string, sinceMs: number): Promise<boolean> {
  // Fractional bounds: a whole-second `until` in the future keeps the stream open until then.
  const stream = await docker.getEvents({
    since: Number(((sinceMs - 1000) / 1000).toFixed(3)),
    until: Number((Date.now() / 1000).toFixed(3)),
    filters: { type: ["container"], container: [id], event: ["kill"] },
  });
  const chunks: Buffer[] = [];
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks)
    .toString("utf8")
    .split("\n")
    .some((line) => {
      if (!line.trim()) return false;
      try {
        return (JSON.parse(line) as { Action?: string }).Action === "kill";
      } catch {
        return false;
      }
    });
}

function validate(req: RunRequest, limits: SandboxLimits): void {
  if (!Number.isFinite(req.timeoutMs) || req.timeoutMs <= 0) throw new Error(`sandbox: timeoutMs must be positive, got ${req.timeoutMs}`);
  if (req.command.length === 0 || req.command.some((a) => typeof a !== "string" || a.includes("\0"))) {
    throw new Error("sandbox: command must be a non-empty argv without NUL bytes");
  }
  const names = new Set<string>();
  for (const f of req.files) {
    if (!SAFE_NAME.test(f.name)) throw new Error(`sandbox: input name ${JSON.stringify(f.name)} is not a plain file name`);
    if (names.has(f.name)) throw new Error(`sandbox: input ${f.name} given twice`);
    names.add(f.name);
  }
  if (req.script) {
    const n = req.script.filename;
    if (!SAFE_NAME.test(n) || n === "inputs" || n === "out") throw new Error(`sandbox: script filename ${JSON.stringify(n)} is not allowed`);
  }
  validateWorkFiles(req);
  for (const [k, v] of [...Object.entries(req.env ?? {}), ...Object.entries(req.judge?.env ?? {})]) {
    if (!ENV_NAME.test(k) || v.includes("\0")) throw new Error(`sandbox: invalid environment variable ${JSON.stringify(k)}`);
  }
  const paths = new Set((req.workFiles ?? []).map((f) => f.path));
  for (const p of req.protect ?? []) if (!paths.has(p)) throw new Error(`sandbox: protected path ${JSON.stringify(p)} is not one of the work files`);
  if (req.judge) {
    const { dir, command } = req.judge;
    if (!WORK_SEGMENT.test(dir) || dir === "inputs" || dir === "out") throw new Error(`sandbox: judge directory ${JSON.stringify(dir)} must be one plain top-level name`);
    if (req.channel) throw new Error("sandbox: a run has a judge or a channel, not both");
    if (command.length === 0 || command.some((a) => typeof a !== "string" || a.includes("\0"))) throw new Error("sandbox: the judge's command must be a non-empty argv without NUL bytes");
    if (req.protect?.some((p) => p.startsWith(`${dir}/`))) throw new Error("sandbox: the judge's files are the judge's, not protected");
  }
  const inputBytes =
    req.files.reduce((n, f) => n + f.content.length, 0) +
    (req.workFiles ?? []).reduce((n, f) => n + f.content.length, 0) +
    Buffer.byteLength(req.script?.source ?? "");
  // Inputs share the /work tmpfs with everything the program writes; refuse what could never fit.
  if (inputBytes > limits.workTmpfsBytes / 2) {
    throw new Error(`sandbox: inputs take ${inputBytes} bytes, more than half of the ${limits.workTmpfsBytes}-byte work area`);
  }
}

function validateWorkFiles(req: RunRequest): void {
  const files = new Set<string>();
  const dirs = new Set<string>();
  // The script is a file at /work: a work file may neither replace it nor need it to be a directory.
  if (req.script) files.add(req.script.filename);
  for (const f of req.workFiles ?? []) {
    const p = f.path;
    const bad = (why: string) => new Error(`sandbox: work file path ${JSON.stringify(p)} ${why}`);
    if (typeof p !== "string" || p.length === 0 || p.length > WORK_PATH_MAX) throw bad(`must be 1-${WORK_PATH_MAX} characters`);
    const segments = p.split("/");
    if (!segments.every((s) => WORK_SEGMENT.test(s))) throw bad("must be relative, with plain (optionally dot-prefixed) names and no . or ..");
    if (segments[0] === "inputs" || segments[0] === "out") throw bad("must not be under inputs/ or out/ (inputs go in files, out/ is the program's)");
    if (files.has(p) || dirs.has(p)) throw bad(req.script?.filename === p ? "clashes with the script" : "is given twice or is also a directory");
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join("/");
      if (files.has(dir)) throw bad(`needs ${dir} to be a directory, but it is a file`);
      dirs.add(dir);
    }
    files.add(p);
  }
}

function buildEnv(extra: Record<string, string> | undefined): string[] {
  const env: Record<string, string> = {
    HOME: SANDBOX_WORKDIR,
    LANG: "C.UTF-8",
    PYTHONDONTWRITEBYTECODE: "1",
    PYTHONUNBUFFERED: "1",
    // BLAS/OpenMP size their thread pools by the host's CPU count, which the CPU quota does not change;
    // every thread counts against PidsLimit.
    OMP_NUM_THREADS: "1",
    OPENBLAS_NUM_THREADS: "1",
    MKL_NUM_THREADS: "1",
    ...extra,
  };
  return Object.entries(env).map(([k, v]) => `${k}=${v}`);
}

async function packInputs(req: RunRequest): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  const add = (name: string, content: Buffer) =>
    new Promise<void>((resolve, reject) => {
      pack.entry({ name, size: content.length, mode: 0o644, type: "file" }, content, (err) => (err ? reject(err) : resolve()));
    });
  for (const f of req.files) await add(`inputs/${f.name}`, f.content);
  for (const f of req.workFiles ?? []) await add(f.path, f.content);
  if (req.script) await add(req.script.filename, Buffer.from(req.script.source, "utf8"));
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

async function parseTrailer(
  trailer: BoundedBuffer,
  limits: SandboxLimits,
): Promise<{ exitCode?: number; artifacts: Artifact[]; errors: string[]; judge?: JudgeResult; channel?: { text: string; clipped: boolean } }> {
  const errors: string[] = [];
  const buf = trailer.value();
  const nl = buf.indexOf(0x0a);
  let exitCode: number | undefined;
  let judge: JudgeResult | undefined;
  let channel: { text: string; clipped: boolean } | undefined;
  try {
    const head = JSON.parse(buf.subarray(0, nl < 0 ? buf.length : nl).toString("utf8")) as { exitCode?: unknown; errors?: unknown; judge?: unknown; channel?: unknown };
    if (typeof head.exitCode === "number") exitCode = head.exitCode;
    if (Array.isArray(head.errors)) errors.push(...head.errors.map(String));
    judge = judgeOf(head.judge, limits);
    const ch = head.channel as { text?: unknown; clipped?: unknown } | undefined;
    if (ch && typeof ch.text === "string") channel = { text: ch.text, clipped: ch.clipped === true };
  } catch {
    return { artifacts: [], errors: ["artifact trailer is malformed: no artifacts collected"] };
  }
  if (trailer.overflowed) errors.push("artifact stream exceeded its size limit: later artifacts are missing");

  const artifacts: Artifact[] = [];
  let total = 0;
  const extract = tar.extract();
  extract.end(buf.subarray(nl + 1));
  try {
    for await (const entry of extract) {
      const { name, type } = entry.header;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of entry as AsyncIterable<Buffer>) {
        size += c.length;
        if (size <= limits.artifactMaxBytes) chunks.push(c);
      }
      // The bootstrap already applies these limits; checking again keeps the host safe from a forged trailer.
      if (type !== "file" || name.startsWith("/") || name.split("/").includes("..")) {
        errors.push(`${name}: rejected artifact entry (${type})`);
      } else if (size > limits.artifactMaxBytes || artifacts.length >= limits.artifactMaxCount || total + size > limits.artifactsTotalBytes) {
        errors.push(`${name}: rejected, over the artifact limits`);
      } else {
        const content = Buffer.concat(chunks);
        total += size;
        artifacts.push({ name, size, sha256: createHash("sha256").update(content).digest("hex"), content });
      }
    }
  } catch (e) {
    errors.push(`artifact tar is malformed (${(e as Error).message}): later artifacts are missing`);
  }
  artifacts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { exitCode, artifacts, errors, ...(judge ? { judge } : {}), ...(channel ? { channel } : {}) };
}

/** The judge's part of a trailer's head line, checked as strictly as the artifacts (a forged trailer gets nothing). */
function judgeOf(raw: unknown, limits: SandboxLimits): JudgeResult | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const j = raw as { exitCode?: unknown; files?: unknown; errors?: unknown };
  if (typeof j.exitCode !== "number" || !Array.isArray(j.files)) return undefined;
  const files: JudgeResult["files"] = [];
  let total = 0;
  for (const f of j.files as { name?: unknown; content?: unknown }[]) {
    if (typeof f?.name !== "string" || typeof f.content !== "string" || !SAFE_NAME.test(f.name)) continue;
    const content = Buffer.from(f.content, "base64");
    total += content.length;
    if (total > limits.artifactMaxBytes) break;
    files.push({ name: f.name, content });
  }
  return { exitCode: j.exitCode, files, errors: Array.isArray(j.errors) ? j.errors.map(String).slice(0, 20) : [] };
}

/** The exit code in a trailer's head line, if it has one (read before the trailer is parsed in full). */
function trailerExitCode(trailer: BoundedBuffer): number | undefined {
  const buf = trailer.value();
  const nl = buf.indexOf(0x0a);
  try {
    const head = JSON.parse(buf.subarray(0, nl < 0 ? buf.length : nl).toString("utf8")) as { exitCode?: unknown };
    return typeof head.exitCode === "number" ? head.exitCode : undefined;
  } catch {
    return undefined;
  }
}

function isGone(e: unknown): boolean {
  const status = (e as { statusCode?: number } | null)?.statusCode;
  return status === 404 || status === 409;
}
