import { createHash, randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import * as tar from "tar-stream";
import { BOOTSTRAP_PY } from "./bootstrap";
import { BoundedBuffer, ClippedCapture, MarkerSplitter, createDemuxer } from "./output";
import { Sanitiser } from "./storable";

/** Where things live inside the container. Inputs are read-only by convention, outputs are collected. */
export const SANDBOX_WORKDIR = "/work";
export const SANDBOX_INPUT_DIR = "/work/inputs";
export const SANDBOX_OUTPUT_DIR = "/work/out";
export const SANDBOX_UID = 10001;

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
  /**
   * What was changed so that the output can be stored (NUL shown as U+2400, invalid UTF-8 and unpaired
   * surrogates as U+FFFD), one line per field. Every string of a RunResult is storable in Postgres text and jsonb.
   */
  notes: string[];
}

/**
 * Runs one program in a fresh, throwaway environment. Kept this small so that a later implementation can
 * hand out pre-started, single-use containers from a pool behind the same interface.
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
/** Labels each container with its RunRequest.purpose, so that what ran can be counted by kind. */
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
// A work file's path segments may also be hidden (".loopsmith"); "." and ".." never match.
const WORK_SEGMENT = /^\.?[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
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

export function createDockerSandbox(opts: {
  docker: Docker;
  image: string;
  runnerId: string;
  /** Labels the containers with NAMESPACE_LABEL (see removeLeftovers). */
  namespace?: string;
  limits?: Partial<SandboxLimits>;
  log?: SandboxLog;
}): Sandbox {
  const { docker, image, runnerId, log } = opts;
  const limits: Readonly<SandboxLimits> = Object.freeze({ ...DEFAULT_LIMITS, ...opts.limits });
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

  async function run(req: RunRequest): Promise<RunResult> {
    validate(req, limits);
    const [{ id, digest }, input] = await Promise.all([getImageId(), packInputs(req)]);
    const marker = `\0loopsmith-trailer-${randomBytes(16).toString("hex")}\0`;
    const header = JSON.stringify({
      marker,
      argv: req.command,
      limits: {
        maxFileBytes: limits.artifactMaxBytes,
        maxTotalBytes: limits.artifactsTotalBytes,
        maxFiles: limits.artifactMaxCount,
        maxEntries: 10_000,
      },
    });

    const container = await docker.createContainer({
      Image: image,
      Entrypoint: ["python3", "-I", "-S", "-c", BOOTSTRAP_PY],
      User: `${SANDBOX_UID}:${SANDBOX_UID}`,
      WorkingDir: SANDBOX_WORKDIR,
      Env: buildEnv(req.env),
      Labels: {
        [SANDBOX_LABEL]: "1",
        [RUNNER_LABEL]: runnerId,
        [DEADLINE_LABEL]: String(Date.now() + req.timeoutMs + DEADLINE_SLACK_MS),
        [PURPOSE_LABEL]: req.purpose ?? "program",
        ...(opts.namespace !== undefined ? { [NAMESPACE_LABEL]: opts.namespace } : {}),
      },
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      OpenStdin: true,
      StdinOnce: true,
      Tty: false,
      NetworkDisabled: true,
      HostConfig: {
        NetworkMode: "none",
        ReadonlyRootfs: true,
        Tmpfs: {
          [SANDBOX_WORKDIR]: `rw,nosuid,nodev,noexec,size=${limits.workTmpfsBytes},uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0700`,
          "/tmp": `rw,nosuid,nodev,noexec,size=${limits.tmpTmpfsBytes},mode=1777`,
        },
        CapDrop: ["ALL"],
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
      },
    });

    try {
      const stdout = new ClippedCapture(limits.stdoutCapBytes);
      const stderr = new ClippedCapture(limits.stderrCapBytes);
      // Header line + tar; anything beyond the artifact limits plus headers is a broken or forged trailer.
      const trailer = new BoundedBuffer(limits.artifactsTotalBytes + (limits.artifactMaxCount + 8) * 2048);
      const splitter = new MarkerSplitter(Buffer.from(marker), (b) => stdout.push(b), (b) => trailer.push(b));
      const demux = createDemuxer((stream, payload) => {
        if (stream === 1) splitter.push(payload);
        else if (stream === 2) stderr.push(payload);
      });

      const stream = (await container.attach({
        stream: true,
        stdin: true,
        stdout: true,
        stderr: true,
        hijack: true,
      })) as Duplex;
      const drained = new Promise<void>((resolve) => {
        stream.on("data", (chunk: Buffer) => demux(chunk));
        stream.once("end", resolve);
        stream.once("close", resolve);
        // A broken attach stream loses output, not the run: the trailer check below reports it.
        stream.once("error", () => resolve());
      });

      const startedWallMs = Date.now();
      await container.start();
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
      stream.end(Buffer.concat([Buffer.from(header + "\n"), input]));

      let waited: { StatusCode: number };
      try {
        waited = (await container.wait()) as { StatusCode: number };
      } finally {
        clearTimeout(timer);
        req.signal?.removeEventListener("abort", onAbort);
      }
      const durationMs = Math.round(performance.now() - started);
      const drainedInTime = await Promise.race([
        drained.then(() => true),
        new Promise<boolean>((r) => setTimeout(r, STREAM_DRAIN_MS, false).unref()),
      ]);
      stream.destroy();
      splitter.end();
      const state = (await container.inspect()).State;

      const artifactErrors: string[] = [];
      let exitCode = waited.StatusCode;
      let artifacts: Artifact[] = [];
      if (timedOut) {
        exitCode = 124;
        artifactErrors.push(`timed out after ${req.timeoutMs} ms: no artifacts collected`);
      } else if (!splitter.markerSeen) {
        // The run ended before the bootstrap's trailer. If the engine (stopping or restarting), an operator
        // or a sweep stopped or killed the container, that is an outage, not what the program did: fail
        // the run (the step is retried) rather than hand the inspector a crash the program never had.
        if (!aborted && (await killedFromOutside(docker, container.id, startedWallMs))) {
          throw new SandboxInterrupted(`the sandbox container was stopped from outside during the run (container exit ${waited.StatusCode})`);
        }
        artifactErrors.push(
          state.OOMKilled
            ? "out of memory: the container was killed before artifacts were collected"
            : `no artifacts collected: the sandbox bootstrap did not finish (container exit ${waited.StatusCode}${drainedInTime ? "" : ", output stream did not drain"})`,
        );
      } else {
        const parsed = await parseTrailer(trailer, limits);
        if (parsed.exitCode !== undefined) exitCode = parsed.exitCode;
        artifacts = parsed.artifacts;
        artifactErrors.push(...parsed.errors);
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
        imageId: id,
        imageDigest: digest,
        limits,
        oomKilled: state.OOMKilled === true,
        aborted,
        notes: clean.notes,
      };
      log?.info(
        { container: container.id.slice(0, 12), exitCode, timedOut, durationMs, artifacts: artifacts.length, oomKilled: result.oomKilled },
        "sandbox run finished",
      );
      return result;
    } finally {
      await container.remove({ force: true }).catch((e: unknown) => {
        if (!isGone(e)) log?.warn({ container: container.id, err: e }, "could not remove sandbox container");
      });
    }
  }

  return { image, run };
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
  for (const [k, v] of Object.entries(req.env ?? {})) {
    if (!ENV_NAME.test(k) || v.includes("\0")) throw new Error(`sandbox: invalid environment variable ${JSON.stringify(k)}`);
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
): Promise<{ exitCode?: number; artifacts: Artifact[]; errors: string[] }> {
  const errors: string[] = [];
  const buf = trailer.value();
  const nl = buf.indexOf(0x0a);
  let exitCode: number | undefined;
  try {
    const head = JSON.parse(buf.subarray(0, nl < 0 ? buf.length : nl).toString("utf8")) as { exitCode?: unknown; errors?: unknown };
    if (typeof head.exitCode === "number") exitCode = head.exitCode;
    if (Array.isArray(head.errors)) errors.push(...head.errors.map(String));
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
  return { exitCode, artifacts, errors };
}

function isGone(e: unknown): boolean {
  const status = (e as { statusCode?: number } | null)?.statusCode;
  return status === 404 || status === 409;
}
