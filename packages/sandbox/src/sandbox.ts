// The Docker sandbox: createDockerSandbox wires the pieces, one file per concern. types.ts holds the
// contract (requests, results, limits), validate.ts checks a request, container.ts creates, labels and
// removes containers, io.ts speaks to the bootstrap, execute.ts runs one request in a started container,
// and pool.ts keeps pre-started, single-use containers ready.
import { randomBytes } from "node:crypto";
import type Docker from "dockerode";
import { BOOTSTRAP_PY } from "./bootstrap";
import { DEADLINE_SLACK_MS, SANDBOX_NAME_PREFIX, createContainers } from "./container";
import { execute } from "./execute";
import { packInputs, startAttached } from "./io";
import { createPool } from "./pool";
import { DEFAULT_LIMITS, DEFAULT_POOL_OPTIONS, type PoolOptions, type PooledSandbox, type RunRequest, type RunResult, type SandboxLimits, type SandboxLog } from "./types";
import { validate } from "./validate";

export {
  BOOTSTRAP_CAPS,
  DEFAULT_LIMITS,
  DEFAULT_POOL_OPTIONS,
  DEFAULT_PREIMPORT,
  JUDGE_UID,
  MiB,
  SANDBOX_INPUT_DIR,
  SANDBOX_OUTPUT_DIR,
  SANDBOX_UID,
  SANDBOX_WORKDIR,
  SandboxInterrupted,
  describeLimits,
  type Artifact,
  type JudgeResult,
  type PoolOptions,
  type PooledSandbox,
  type RunPurpose,
  type RunRequest,
  type RunResult,
  type Sandbox,
  type SandboxFile,
  type SandboxLimits,
  type SandboxLog,
} from "./types";
export {
  DEADLINE_LABEL,
  NAMESPACE_LABEL,
  POOL_PURPOSE,
  PURPOSE_LABEL,
  RUNNER_LABEL,
  SANDBOX_LABEL,
  SANDBOX_NAME_PREFIX,
  pingDocker,
  removeLeftovers,
  sandboxPurpose,
} from "./container";
export { runsInProcess } from "./pool";

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
  /** The engine runtime containers run under (default runc; see chooseOciRuntime). */
  ociRuntime?: string;
}): PooledSandbox {
  const { docker, image, runnerId, log } = opts;
  const ociRuntime = opts.ociRuntime ?? "runc";
  const runtime = opts.runtime ?? "python";
  const limits: Readonly<SandboxLimits> = Object.freeze({ ...DEFAULT_LIMITS, ...opts.limits });
  const poolOpts: PoolOptions = { ...DEFAULT_POOL_OPTIONS, ...opts.pool };
  const target = Math.max(0, Math.min(poolOpts.size, Math.floor(poolOpts.maxIdleBytes / limits.memoryBytes)));
  const containers = createContainers({ docker, image, runnerId, namespace: opts.namespace, limits, ociRuntime, log });
  const pool = createPool({ containers, options: poolOpts, target, log });
  const deps = { docker, limits, ociRuntime, log };

  async function runCold(req: RunRequest, input: Buffer, img: { id: string; digest: string | null }): Promise<RunResult> {
    const container = await containers.create({
      name: `${SANDBOX_NAME_PREFIX}${req.purpose ?? "program"}-${randomBytes(8).toString("hex")}`,
      entrypoint: ["python3", "-I", "-S", "-c", BOOTSTRAP_PY],
      env: req.env,
      purpose: req.purpose ?? "program",
      deadline: Date.now() + req.timeoutMs + DEADLINE_SLACK_MS,
    });
    try {
      const { io, exited } = await startAttached(container);
      // A cold container has nothing to pre-import: the program is exec'd, as python3 <file> always was.
      return (await execute(deps, { container, io, exited }, req, { input, img, pooled: false, inProcess: false }))!;
    } finally {
      await containers.remove(container);
    }
  }

  async function run(req: RunRequest): Promise<RunResult> {
    validate(req, limits);
    if ((req.runtime ?? "python") !== runtime) throw new Error(`sandbox: this sandbox runs ${runtime} (image ${image}), not ${req.runtime ?? "python"}`);
    const [img, input] = await Promise.all([containers.imageRef(), packInputs(req)]);
    const purpose = req.purpose ?? "program";
    for (let w = await pool.next(req.timeoutMs, purpose); w; w = await pool.next(req.timeoutMs, purpose)) {
      try {
        const res = await execute(deps, w, req, { input, img, pooled: true, inProcess: pool.inProcess(req) });
        if (res) return res;
        log?.warn({ container: w.container.id.slice(0, 12) }, "sandbox pool: container was dead when handed out; trying another");
      } finally {
        pool.release(w);
      }
    }
    return runCold(req, input, img);
  }

  const { start, close, warm, poolStats } = pool;
  return { image, ociRuntime, run, start, close, poolStats, warm, settled: containers.settled };
}
