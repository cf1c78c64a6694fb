// Running a program the way an attempt runs: one fresh container for the program with the goal's
// inputs (and nothing else: checker files never enter it), then a fresh container for each run a check
// asks for (cases, test suites). EXECUTE runs the model's programs this way, and the evaluator's
// self-test runs its probes and the client's fixtures the same way, so both are judged on equal terms.
import { LoopSmithError } from "@loopsmith/core";
import { SANDBOX_INPUT_DIR, SANDBOX_OUTPUT_DIR, TS_REGISTER, type RunRequest, type RunResult, type SandboxFile } from "@loopsmith/sandbox";
import type { FrozenCheck, GeneratedCode, Language } from "@loopsmith/schemas";
import { applyAttempt, type RunEvidence, type VerifyContext, type WorkspaceEvidence, type WorkspaceFile } from "@loopsmith/verifier";
import { runCheckRuns, type CheckRunsOfCheck } from "./check-runs";
import type { StepDeps } from "./context";
import type { GoalWorkspace } from "./evidence";

export interface ProgramRun {
  run: RunResult;
  checkRuns: CheckRunsOfCheck[];
}

/** The variables every program sees (the contract the generator and refiner are told about). */
export function programEnv(inputs: SandboxFile[]): Record<string, string> {
  const paths = inputs.map((f) => `${SANDBOX_INPUT_DIR}/${f.name}`);
  return { INPUT_PATH: paths[0] ?? "", INPUT_PATHS: JSON.stringify(paths), INPUT_DIR: SANDBOX_INPUT_DIR, OUTPUT_DIR: SANDBOX_OUTPUT_DIR };
}

/** issue 14: the same contract in every language; only the interpreter (and its image) differs. */
export function programCommand(language: Language, filename: string): { command: string[]; runtime: "python" | "node" } {
  if (language === "javascript") return { command: ["node", filename], runtime: "node" };
  // Types are stripped by the image's loader (TypeScript's own transpiler); type checking is tsc's job.
  if (language === "typescript") return { command: ["node", "--import", TS_REGISTER, filename], runtime: "node" };
  return { command: ["python3", filename], runtime: "python" };
}

export type { GoalWorkspace } from "./evidence";

/** The files an attempt writes: its program (at its filename) and the further files it gives. */
export function attemptFiles(code: Pick<GeneratedCode, "filename" | "source"> & { files?: GeneratedCode["files"] }): WorkspaceFile[] {
  const others = (code.files ?? []).filter((f) => f.path !== code.filename);
  return [{ path: code.filename, content: Buffer.from(code.source, "utf8") }, ...others.map((f) => ({ path: f.path, content: Buffer.from(f.content, "utf8") }))];
}

/**
 * Where the program's files go: a plain program is the sandbox's script, as it always was; a program
 * with a workspace, further files or a path of its own goes in as work files over the original workspace.
 */
function placement(code: { filename: string; source: string; files?: GeneratedCode["files"] }, workspace: GoalWorkspace | null): Pick<RunRequest, "script" | "workFiles"> {
  if (workspace === null && (code.files ?? []).length === 0 && !code.filename.includes("/")) return { script: { filename: code.filename, source: code.source } };
  return { workFiles: applyAttempt(workspace?.files ?? [], attemptFiles(code), [], false).files };
}

export async function runProgram(
  deps: Pick<StepDeps, "sandbox"> & Partial<Pick<StepDeps, "checks">>,
  opts: {
    code: { filename: string; source: string; files?: GeneratedCode["files"] };
    inputs: SandboxFile[];
    /** issue 14 (default python, no workspace). */
    language?: Language;
    workspace?: GoalWorkspace | null;
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
  const language = opts.language ?? "python";
  const workspace = opts.workspace ?? null;
  const { command, runtime } = programCommand(language, opts.code.filename);
  const run = await runSandbox(deps, {
    files: opts.inputs,
    ...placement(opts.code, workspace),
    command,
    runtime,
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
          language,
          workspace: { original: workspace?.files ?? [], attempt: attemptFiles(opts.code), locked: workspace?.locked ?? [] },
          inputs: opts.inputs,
          checkerFiles: opts.checkerFiles,
          env,
          timeLeftMs: opts.timeLeftMs,
          signal: opts.signal,
          run: (req) => runSandbox(deps, req),
          purpose: opts.purpose === "probe" ? "probe" : "check",
          // rerun_failed: the check judged on its runs so far, off the event loop as INSPECT judges it.
          ...(deps.checks ? { failedPlainly: failedPlainly(deps.checks, run, opts, workspace) } : {}),
        });
  return { run, checkRuns };
}

/**
 * Whether a check failed on `runs` (all of them made) as a plain failure: not passed, no tampering seen (the
 * attempt's code is never run again for that), not already flaky.
 */
function failedPlainly(
  checks: NonNullable<StepDeps["checks"]>,
  run: RunResult,
  opts: { code: { filename: string; source: string; files?: GeneratedCode["files"] }; inputs: SandboxFile[]; checkerFiles: SandboxFile[] },
  workspace: GoalWorkspace | null,
) {
  return async (check: FrozenCheck, runs: RunEvidence[]): Promise<boolean> => {
    const program = { filename: opts.code.filename, source: opts.code.source };
    const ctx = verifyContext(run, { inputs: opts.inputs, checkerFiles: opts.checkerFiles }, program, workspaceEvidence(workspace, opts.code));
    const [outcome] = await checks.run([check], ctx, () => runs);
    return outcome !== undefined && !outcome.passed && outcome.tampered === undefined && outcome.flaky === undefined;
  };
}

/** What the verifier sees of an attempt's workspace: what it changed (command checks fail an edit of a locked file). */
export function workspaceEvidence(workspace: GoalWorkspace | null, code: Parameters<typeof attemptFiles>[0]): WorkspaceEvidence | undefined {
  if (!workspace) return undefined;
  const { changed } = applyAttempt(workspace.files, attemptFiles(code), workspace.locked, false);
  return { changed, locked: workspace.locked, original: workspace.files.map((f) => f.path) };
}

/** What the verifier sees of a run (stored or fresh). */
export function verifyContext(
  run: RunEvidence,
  goalFiles: { inputs: SandboxFile[]; checkerFiles: SandboxFile[] },
  program: { filename: string; source: string } | null,
  workspace?: WorkspaceEvidence,
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
    ...(workspace ? { workspace } : {}),
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
