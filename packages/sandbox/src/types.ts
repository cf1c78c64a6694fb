// The sandbox's public contract: what a run is asked (RunRequest) and what it returns (RunResult), the
// limits a run gets, and the Sandbox interfaces. No effects here: every other file of the sandbox imports it.

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
  /** The engine runtime the container ran under ("runc", "runsc": gVisor, ...). */
  ociRuntime: string;
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
   * What the bootstrap made root's for the run (RunRequest.protect's files, the directories above them,
   * an isolated run's placeholders) and found replaced by another file afterwards: paths under /work
   * relative to it, others absolute. Only a kernel that lets a rename replace another uid's entry in a
   * sticky directory (gVisor does) allows it; a replaced file's original cannot be put back.
   */
  protectedReplaced?: string[];
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
  /** The engine runtime its containers run under (see RunResult.ociRuntime). */
  readonly ociRuntime: string;
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

export const MiB = 1024 * 1024;

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

/** What a run is for, as a container label (PURPOSE_LABEL) and in its container's name. */
export type RunPurpose = "program" | "check" | "probe";

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
  /**
   * When the replacement for a handed-out container starts. 0: at hand-out, so it is being made while the
   * program runs and the goal's next steps come (the goal's next run then waits least). Otherwise once
   * the run ends, or after this long if it has not (a long run must not leave the pool empty for a
   * concurrent one): the program then has the CPU to itself, without a container start and a pre-import
   * beside it, at the cost of the next run's wait.
   */
  refillDelayMs: number;
}

export const DEFAULT_PREIMPORT: readonly string[] = Object.freeze(["numpy", "pandas"]);

/** The pool's settings where the owner gives none (the runner's SANDBOX_POOL_* defaults are these). */
export const DEFAULT_POOL_OPTIONS: Readonly<PoolOptions> = Object.freeze({
  size: 0,
  ttlMs: 10 * 60_000,
  maxIdleBytes: 2048 * MiB,
  preimport: DEFAULT_PREIMPORT,
  maxRunMs: 30 * 60_000,
  refillDelayMs: 0,
});

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

/** A run cut short by something outside the program (the engine stopped its container): an infrastructure failure. */
export class SandboxInterrupted extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxInterrupted";
  }
}
