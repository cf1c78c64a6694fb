// EXECUTE: one fresh sandbox container runs the latest program against the goal's inputs. Whatever
// happens inside (crash, timeout, OOM, hostile code) is evidence for INSPECT, not an error here; only
// a sandbox that cannot run at all throws (and the job is retried).
import { createHash } from "node:crypto";
import { storable } from "@loopsmith/core";
import { artifactRow, executionRow } from "@loopsmith/db";
import { describeLimits, type Artifact } from "@loopsmith/sandbox";
import { storedBudgets, type Language } from "@loopsmith/schemas";
import { applyAttempt, WORKSPACE_FILES_PREFIX, WORKSPACE_PATCH, workspacePatch } from "@loopsmith/verifier";
import { attemptFiles, runProgram, type GoalWorkspace, type ProgramRun } from "./attempt";
import { chooseCandidate, loadLatestCandidates, triedSummary, tryCandidate, type Tried } from "./candidates";
import { checkRunRows, summarizeCheckRuns } from "./check-runs";
import type { StateHandler } from "./context";

const STDERR_TAIL = 2000;
/** The tape row keeps this much of an attempt's patch; the whole patch is the workspace.patch artifact. */
const PATCH_ON_TAPE = 64 * 1024;

/**
 * issue 14: a workspace attempt's deliverable, stored as artifacts beside the program's own: the patch
 * against the original workspace and each changed file under workspace/. The program's own artifacts
 * of those names are dropped (and said so): the deliverable is what LoopSmith computed, not a claim.
 */
async function workspaceDeliverable(workspace: GoalWorkspace, code: Parameters<typeof attemptFiles>[0]) {
  const applied = applyAttempt(workspace.files, attemptFiles(code), workspace.locked, false);
  // issue 25: bounded and yielding between files, so a large rewrite cannot stall heartbeats or lock renewals.
  const { text: patch, notMinimal } = await workspacePatch(workspace.files, applied);
  const byPath = new Map(applied.files.map((f) => [f.path, f.content]));
  const files = [
    { name: WORKSPACE_PATCH, content: Buffer.from(patch, "utf8") },
    ...applied.changed.map((p) => ({ name: `${WORKSPACE_FILES_PREFIX}${p}`, content: byPath.get(p)! })),
  ].map((f) => ({ ...f, size: f.content.length, sha256: createHash("sha256").update(f.content).digest("hex") }));
  return { applied, patch, notMinimal, files };
}

export const execute: StateHandler = async (ctx, deps) => {
  const { goal } = ctx;
  const attempt = goal.attempts + 1;
  // Side by side: a step's reads are independent round trips (issue 29).
  const [candidates, inputs, workspace, { checks }, checkerFiles] = await Promise.all([
    loadLatestCandidates(deps.prisma, goal.id),
    deps.material.inputs(goal.id),
    deps.material.workspace(goal.id),
    deps.material.plan(goal.id),
    deps.material.checkerFiles(goal.id),
  ]);
  // The execution reserves its timeout against the wall-clock budget: it may use what is left, no more.
  const budgets = storedBudgets(goal.budgets, goal.maxAttempts);
  const wallLeftMs = () => budgets.max_wall_seconds * 1000 - (deps.now().getTime() - goal.createdAt.getTime());
  const timeoutFor = () => Math.max(1, Math.min(budgets.execution_timeout_seconds * 1000, wallLeftMs()));
  let timeoutMs = timeoutFor();

  const runOpts = {
    inputs,
    language: goal.language as Language,
    workspace,
    checkerFiles,
    checks,
    timeLeftMs: wallLeftMs,
    signal: ctx.signal,
  };
  let code = candidates[0]!;
  let ran: ProgramRun;
  let chosen: { candidates: ReturnType<typeof triedSummary>; chosen: { candidate: number; code: typeof code } } | undefined;
  if (candidates.length === 1) ran = await runProgram(deps, { ...runOpts, code, timeoutMs });
  else {
    // Best-of-N: each candidate runs and is checked as an attempt would be; the verifier keeps one.
    const tried: Tried[] = [];
    const timeouts: number[] = [];
    for (const candidate of candidates) {
      timeouts.push(timeoutFor());
      tried.push(await tryCandidate(deps, { ...runOpts, code: candidate, timeoutMs: timeouts.at(-1)! }));
    }
    const pick = chooseCandidate(tried);
    timeoutMs = timeouts[pick]!;
    code = tried[pick]!.code;
    ran = tried[pick]!.program;
    chosen = { candidates: triedSummary(tried, pick), chosen: { candidate: pick + 1, code } };
  }
  const { run, checkRuns } = ran;
  deps.log.info(
    { goalId: goal.id, attempt, exitCode: run.exitCode, timedOut: run.timedOut, durationMs: run.durationMs },
    "execution finished",
  );

  const deliverable = workspace ? await workspaceDeliverable(workspace, code) : null;
  if (deliverable) {
    const ours = (n: string) => n === WORKSPACE_PATCH || n.startsWith(WORKSPACE_FILES_PREFIX);
    for (const a of run.artifacts.filter((x) => ours(x.name))) run.artifactErrors.push(`${a.name}: dropped, the name is the workspace deliverable's (computed by LoopSmith)`);
    run.artifacts = [...run.artifacts.filter((a) => !ours(a.name)), ...deliverable.files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
  const artifacts = run.artifacts.map((a) => ({ name: a.name, size: a.size, sha256: a.sha256 }));
  const scriptSha256 = createHash("sha256").update(code.source).digest("hex");
  const detail = {
    attempt,
    exit_code: run.exitCode,
    timed_out: run.timedOut,
    oom_killed: run.oomKilled,
    duration_ms: Math.round(run.durationMs),
    timeout_ms: timeoutMs,
    ...(timeoutMs < budgets.execution_timeout_seconds * 1000 ? { timeout_clipped_by_wall_budget: true } : {}),
    artifacts,
    artifact_errors: run.artifactErrors,
    stderr_tail: run.stderr.slice(-STDERR_TAIL),
    stdout_clipped_bytes: run.stdoutTruncatedBytes,
    stderr_clipped_bytes: run.stderrTruncatedBytes,
    notes: run.notes,
    image_id: run.imageId,
    image_digest: run.imageDigest,
    sandbox_runtime: run.ociRuntime,
    script_sha256: scriptSha256,
    ...(checkRuns.length > 0 ? { check_runs: summarizeCheckRuns(checkRuns) } : {}),
    ...(chosen ?? {}),
    ...(deliverable
      ? {
          workspace: {
            changed: deliverable.applied.changed,
            locked_changed: deliverable.applied.lockedChanged,
            ...(deliverable.applied.conflicts.length > 0 ? { not_placed: deliverable.applied.conflicts } : {}),
            // Files whose diff passed its work limit: their changed middle is one replacement (exact, not shortest).
            ...(deliverable.notMinimal.length > 0 ? { patch_not_minimal: deliverable.notMinimal } : {}),
            patch: storable(deliverable.patch.length > PATCH_ON_TAPE ? `${deliverable.patch.slice(0, PATCH_ON_TAPE)}\n[... ${deliverable.patch.length - PATCH_ON_TAPE} characters cut: see the ${WORKSPACE_PATCH} artifact ...]\n` : deliverable.patch).text,
          },
        }
      : {}),
  };
  const record = (evidence: { stdout: string; stderr: string; artifacts: Artifact[] }) =>
    executionRow({
      goalId: goal.id,
      attempt,
      exitCode: run.exitCode,
      stdout: evidence.stdout,
      stderr: evidence.stderr,
      stdoutTruncated: run.stdoutTruncatedBytes,
      stderrTruncated: run.stderrTruncatedBytes,
      durationMs: Math.round(run.durationMs),
      timedOut: run.timedOut,
      oomKilled: run.oomKilled,
      artifacts: evidence.artifacts.map((a) => ({ name: a.name, size: a.size, sha256: a.sha256 })),
      imageId: run.imageId,
      imageDigest: run.imageDigest ?? null,
      sandboxRuntime: run.ociRuntime ?? null,
      scriptSha256,
      limits: describeLimits(run.limits, timeoutMs),
      script: code.source,
    });
  const exec = record(run);
  return {
    event: { type: "EXECUTED" },
    attempts: attempt,
    detail,
    rows: [
      exec.row,
      ...checkRunRows(goal.id, exec.id, attempt, checkRuns),
      ...run.artifacts.map((a) => artifactRow({ goalId: goal.id, executionId: exec.id, name: a.name, sha256: a.sha256, size: a.size, content: a.content })),
    ],
    // The program ran and its outcome stands: running hostile code again because its output could not be
    // stored would hand it another go. So the outcome (exit code, timeout, OOM, timing) is recorded once,
    // with the output that could not be stored replaced by a note, and INSPECT judges what is left.
    degraded: (why) => {
      const note = `the run's output could not be stored (${why}): stdout, stderr and artifacts were dropped; exit code, timeout, memory and timing are kept`;
      return {
        attempts: attempt,
        detail: { ...detail, artifacts: [], artifact_errors: [note], stderr_tail: note, notes: [...run.notes, note], evidence_dropped: true },
        rows: [record({ stdout: note, stderr: note, artifacts: [] }).row],
      };
    },
  };
};
