// Running a program the way an attempt runs: one fresh container for the program with the goal's
// inputs (and nothing else: checker files never enter it), then a fresh container for each run a check
// asks for (cases, test suites). EXECUTE runs the model's programs this way, and the evaluator's
// self-test runs its probes and the client's fixtures the same way, so both are judged on equal terms.
import { LoopSmithError } from "@loopsmith/core";
import { SANDBOX_INPUT_DIR, SANDBOX_OUTPUT_DIR, type RunRequest, type RunResult, type SandboxFile } from "@loopsmith/sandbox";
import type { FrozenCheck } from "@loopsmith/schemas";
import type { RunEvidence, VerifyContext } from "@loopsmith/verifier";
import { runCheckRuns, type CheckRunsOfCheck } from "./check-runs";
import type { StepDeps } from "./context";

export interface ProgramRun {
  run: RunResult;
  checkRuns: CheckRunsOfCheck[];
}

/** The variables every program sees (the contract the generator and refiner are told about). */
export function programEnv(inputs: SandboxFile[]): Record<string, string> {
  const paths = inputs.map((f) => `${SANDBOX_INPUT_DIR}/${f.name}`);
  return { INPUT_PATH: paths[0] ?? "", INPUT_PATHS: JSON.stringify(paths), INPUT_DIR: SANDBOX_INPUT_DIR, OUTPUT_DIR: SANDBOX_OUTPUT_DIR };
}

export async function runProgram(
  deps: Pick<StepDeps, "sandbox">,
  opts: {
    code: { filename: string; source: string };
    inputs: SandboxFile[];
    checkerFiles: SandboxFile[];
    checks: FrozenCheck[];
    timeoutMs: number;
    /** What is left for the checks' own runs, asked before each. */
    timeLeftMs: () => number;
    signal: AbortSignal;
    /** "probe" for the evaluator's self-test (its containers are labelled so, the checks' runs too). */
    purpose?: "program" | "probe";
  },
): Promise<ProgramRun> {
  const env = programEnv(opts.inputs);
  const run = await runSandbox(deps, {
    files: opts.inputs,
    script: { filename: opts.code.filename, source: opts.code.source },
    command: ["python3", opts.code.filename],
    env,
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    purpose: opts.purpose ?? "program",
  });
  // A run that timed out or ran out of memory already failed; its checks are not run again.
  const checkRuns =
    run.timedOut || run.oomKilled || run.aborted
      ? []
      : await runCheckRuns({
          sandbox: deps.sandbox,
          checks: opts.checks,
          code: opts.code,
          inputs: opts.inputs,
          checkerFiles: opts.checkerFiles,
          env,
          timeLeftMs: opts.timeLeftMs,
          signal: opts.signal,
          run: (req) => runSandbox(deps, req),
          purpose: opts.purpose === "probe" ? "probe" : "check",
        });
  return { run, checkRuns };
}

/** What the verifier sees of a run (stored or fresh). */
export function verifyContext(
  run: RunEvidence,
  goalFiles: { inputs: SandboxFile[]; checkerFiles: SandboxFile[] },
  program: { filename: string; source: string } | null,
): VerifyContext {
  return {
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    oomKilled: run.oomKilled,
    stdout: run.stdout,
    stderr: run.stderr,
    durationMs: run.durationMs,
    artifacts: run.artifacts,
    artifactErrors: run.artifactErrors,
    inputs: goalFiles.inputs,
    checkerFiles: goalFiles.checkerFiles,
    program,
    runs: [],
  };
}

/**
 * A sandbox that cannot run at all (engine down, image missing) is an infrastructure failure: the step is
 * retried with backoff and, past the cap, the goal is parked in errored with this code on its tape.
 */
export async function runSandbox(deps: Pick<StepDeps, "sandbox">, req: RunRequest): Promise<RunResult> {
  try {
    return await deps.sandbox.run(req);
  } catch (e) {
    throw new LoopSmithError("LS_ERR_SANDBOX_UNAVAILABLE", `sandbox: ${(e as Error).message}`);
  }
}
