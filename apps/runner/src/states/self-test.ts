// The evaluator's self-test, run in PLAN before any model call: proof that the frozen checks (the
// baseline and the client's) can tell right from wrong, before a cent is spent on models.
//   - an empty run (exits 0, writes nothing) must fail: otherwise "done" is vacuous;
//   - so must junk deliverables (files that exist and parse but answer nothing: an empty table with the
//     expected header, {}, [], an empty text, the input copied through), judged beside the empty program:
//     when the goal delivers a file the empty run fails the baseline alone, and they probe the client's checks;
//   - a program that never ends must be killed at its time limit and fail;
//   - the client's known-good fixtures must pass every check, its known-bad ones fail at least one.
// Probes and program fixtures run like attempts (runProgram: the program's container, then the checks'
// own runs); a fixture that gives the deliverable itself is judged as a clean run that left those files.
import type { Sandbox, SandboxFile } from "@loopsmith/sandbox";
import type { FrozenCheck, SelfTestFixture, SelfTestSpec } from "@loopsmith/schemas";
import { checkRegistry, type RunEvidence } from "@loopsmith/verifier";
import { runProgram, verifyContext, type ProgramRun } from "./attempt";
import type { StepDeps } from "./context";
import { junkProbes } from "./junk-probes";

/** How long the never-ending probe may run: enough to show the limit is enforced, no more. */
export const ENDLESS_PROBE_TIMEOUT_MS = 1000;
const EMPTY_PROGRAM = "pass\n";
const ENDLESS_PROGRAM = "while True:\n    pass\n";

export interface ProbeOutcome {
  probe: string;
  kind: "probe" | "good" | "bad";
  /** What the checks had to conclude. */
  expected: "fail" | "pass";
  /** Whether the evaluator behaved: the probe failed (or the good fixture passed) as it had to. */
  ok: boolean;
  failing_checks: string[];
  /** How the run went: a real sandbox run, or the deliverable given as it is. */
  run: { source: "sandbox" | "given"; exit_code: number; timed_out: boolean; duration_ms: number; artifacts: string[] };
  /** Why it misbehaved, when it did. */
  problem?: string;
}

export interface SelfTestResult {
  ok: boolean;
  probes: ProbeOutcome[];
  message: string;
}

// The never-ending probe proves the sandbox's time limit, which does not depend on the goal (the program
// reads nothing, and a timed-out run gets no check runs): one real run per sandbox serves every goal this
// runner plans, each goal's checks still judged on it. A runner process makes it at start-up. Keyed by
// the image (its tag is a hash of what it is built from), so sandboxes of one image share the proof.
const endlessRuns = new Map<string, Promise<ProgramRun>>();

export function endlessProbe(sandbox: Sandbox): Promise<ProgramRun> {
  let run = endlessRuns.get(sandbox.image);
  if (!run) {
    // Its own signal, never a goal's: a goal cancelled meanwhile must not leave an aborted probe behind.
    run = runProgram(
      { sandbox },
      { code: { filename: "probe.py", source: ENDLESS_PROGRAM }, inputs: [], checkerFiles: [], checks: [], timeoutMs: ENDLESS_PROBE_TIMEOUT_MS, timeLeftMs: () => 0, signal: new AbortController().signal, purpose: "probe" },
    );
    endlessRuns.set(sandbox.image, run);
    // Only a proof is kept: an engine failure, or a run that was not killed, is tried again next time.
    run.then((r) => {
      if (!r.run.timedOut) endlessRuns.delete(sandbox.image);
    }, () => endlessRuns.delete(sandbox.image));
  }
  return run;
}

export async function runSelfTest(
  deps: Pick<StepDeps, "sandbox" | "checks">,
  opts: {
    checks: FrozenCheck[];
    fixtures: SelfTestSpec | null;
    inputs: SandboxFile[];
    checkerFiles: SandboxFile[];
    /** The goal's execution time limit, for program fixtures. */
    timeoutMs: number;
    signal: AbortSignal;
  },
): Promise<SelfTestResult> {
  const runsCode = opts.checks.some((c) => c.kind !== "judgement" && checkRegistry.get(c.id)?.sandbox !== undefined);
  const run = (source: string, timeoutMs: number) =>
    runProgram(deps, {
      code: { filename: "probe.py", source },
      inputs: opts.inputs,
      checkerFiles: opts.checkerFiles,
      checks: opts.checks,
      timeoutMs,
      timeLeftMs: () => timeoutMs * 4,
      signal: opts.signal,
      purpose: "probe",
    });

  const judge = async (probe: string, kind: ProbeOutcome["kind"], got: { evidence: RunEvidence; program: string | null; checkRuns: ProgramRun["checkRuns"]; source: "sandbox" | "given" }) => {
    const runs = new Map(got.checkRuns.map((r) => [r.index, r.runs]));
    const ctx = verifyContext(got.evidence, { inputs: opts.inputs, checkerFiles: opts.checkerFiles }, got.program === null ? null : { filename: "probe.py", source: got.program });
    const outcomes = await deps.checks.run(opts.checks, ctx, (i) => runs.get(i) ?? []);
    const failing = outcomes.filter((o) => !o.passed).map((o) => o.id);
    const expected = kind === "good" ? "pass" : "fail";
    const ok = expected === "pass" ? failing.length === 0 : failing.length > 0;
    const e = got.evidence;
    const outcome: ProbeOutcome = {
      probe,
      kind,
      expected,
      ok,
      failing_checks: failing,
      run: { source: got.source, exit_code: e.exitCode, timed_out: e.timedOut, duration_ms: e.durationMs, artifacts: e.artifacts.map((a) => a.name) },
    };
    if (!ok) {
      outcome.problem =
        expected === "fail"
          ? `passed every check (${opts.checks.filter((c) => c.kind !== "judgement").map((c) => c.id).join(", ")}): the checks cannot tell it from a right answer`
          : `failed ${failing.join(", ")}: ${outcomes.filter((o) => !o.passed).map((o) => `${o.id}: ${o.message}`).join("; ").slice(0, 1000)}`;
    }
    return outcome;
  };
  const fromRun = (r: ProgramRun, program: string) => ({
    evidence: { ...r.run, artifacts: r.run.artifacts.map((a) => ({ name: a.name, content: a.content })) },
    program,
    checkRuns: r.checkRuns,
    source: "sandbox" as const,
  });

  const probes: ProbeOutcome[] = [];
  // The empty run: without checks that run code, its evidence is known exactly without a container.
  const empty = runsCode ? fromRun(await run(EMPTY_PROGRAM, opts.timeoutMs), EMPTY_PROGRAM) : { evidence: cleanRun([], ""), program: EMPTY_PROGRAM, checkRuns: [], source: "given" as const };
  probes.push(await judge("an empty run (exits 0, writes nothing)", "probe", empty));

  const endless = await endlessProbe(deps.sandbox);
  const endlessOutcome = await judge("a program that never ends", "probe", fromRun(endless, ENDLESS_PROGRAM));
  if (!endless.run.timedOut) {
    endlessOutcome.ok = false;
    endlessOutcome.problem = `was not killed at its ${ENDLESS_PROBE_TIMEOUT_MS} ms time limit (exit code ${endless.run.exitCode})`;
  }
  probes.push(endlessOutcome);

  // The junk sits beside the empty program: the checks that run code judge it on the empty run's own
  // runs (the program is the same), so no container is started for them.
  for (const junk of junkProbes(opts.checks, opts.inputs, opts.checkerFiles)) {
    probes.push(await judge(junk.probe, "probe", { evidence: cleanRun(junk.artifacts, ""), program: EMPTY_PROGRAM, checkRuns: empty.checkRuns, source: "given" }));
  }

  for (const [kind, list] of [["good", opts.fixtures?.good ?? []], ["bad", opts.fixtures?.bad ?? []]] as const) {
    for (const f of list) {
      const got = f.program !== undefined ? fromRun(await run(f.program, opts.timeoutMs), f.program) : { evidence: givenRun(f), program: null, checkRuns: [], source: "given" as const };
      probes.push(await judge(`${kind} fixture "${f.name}"`, kind, got));
    }
  }

  const bad = probes.filter((p) => !p.ok);
  return {
    ok: bad.length === 0,
    probes,
    message:
      bad.length === 0
        ? `the checks failed ${probes.filter((p) => p.expected === "fail").length} wrong answers and passed ${probes.filter((p) => p.expected === "pass").length} right ones`
        : `The evaluator's self-test failed before any model call: ${bad.map((p) => `${p.probe} ${p.problem}`).join("; ")}.`,
  };
}

function cleanRun(artifacts: { name: string; content: Buffer }[], stdout: string): RunEvidence {
  return { exitCode: 0, timedOut: false, oomKilled: false, stdout, stderr: "", durationMs: 0, artifacts, artifactErrors: [] };
}

function givenRun(f: SelfTestFixture): RunEvidence {
  const artifacts = (f.artifacts ?? []).map((a) => ({ name: a.name, content: a.text !== undefined ? Buffer.from(a.text, "utf8") : Buffer.from(a.content_base64 ?? "", "base64") }));
  return cleanRun(artifacts, f.stdout ?? "");
}
