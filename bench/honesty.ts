// Benchmark: the honesty suite. "A check is judged by what it lets through": every task of
// bench/honesty-tasks.ts has one correct program and several plausible wrong ones (mutants); each runs
// through the evaluator's real path (the program in a fresh sandbox container, the checks' own containers
// for cases and test suites, then every frozen check over the evidence) and the suite counts false
// accepts (a mutant verified) and false rejects (a correct program not verified), with the time per check.
//
//   npx tsx bench/honesty.ts [--only <substring of a task name>] [--concurrent 2] [--verbose]
//
// "Verified" here = every deterministic outcome passed: the inspector model can only veto, so it is left
// out. Exits 1 on any false accept, or when more than 3% of the correct programs are rejected.
// Then bench/honesty-vacuous.ts through the evaluator's self-test: exits 1 when a vacuous definition of
// done is let through or an honest one refused.
import { parseArgs } from "node:util";
import { freezeChecks } from "@loopsmith/agents";
import { chooseOciRuntime, createDockerSandbox, dockerClient, engineRuntimes, pingDocker, SANDBOX_INPUT_DIR, SANDBOX_OUTPUT_DIR, sandboxImageTag, type RunRequest, type RunResult, type SandboxFile } from "@loopsmith/sandbox";
import { checkSpec, type FrozenCheck } from "@loopsmith/schemas";
import { checkerFilesOf, createCheckPool, listChecks, runCheck, validateCheckSpec, type CheckOutcome, type RunEvidence } from "@loopsmith/verifier";
import { runCheckRuns } from "../apps/runner/src/states/check-runs";
import { runSelfTest } from "../apps/runner/src/states/self-test";
import { TASKS, type HonestyTask } from "./honesty-tasks";
import { VACUOUS } from "./honesty-vacuous";
import { median } from "./lib/stats";

const { values } = parseArgs({ options: { only: { type: "string" }, concurrent: { type: "string", default: "2" }, verbose: { type: "boolean", default: false } } });
// Two at a time at most: the machine has two cores and each container gets one.
const concurrent = Math.max(1, Math.min(2, Number(values.concurrent)));
const MAX_FALSE_REJECT_RATE = 0.03;
// The goal's wall-clock budget for one program: its own run plus its checks' runs.
const WALL_BUDGET_MS = 120_000;
const DEFAULT_TIMEOUT_S = 20;

interface Program {
  task: HonestyTask;
  variant: string;
  correct: boolean;
  source: string;
}

interface Prepared {
  task: HonestyTask;
  checks: FrozenCheck[];
  inputs: SandboxFile[];
  checkerFiles: SandboxFile[];
}

interface Outcome {
  program: Program;
  verified: boolean;
  failing: CheckOutcome[];
  wallMs: number;
  /** Suspicious mutants: rejected only because the program does not even run (a mistake in the task?). */
  warning?: string;
}

const files = (named: Record<string, string> | undefined): SandboxFile[] => Object.entries(named ?? {}).map(([name, text]) => ({ name, content: Buffer.from(text, "utf8") }));

const runsCode = new Set(listChecks().filter((c) => c.runsCode).map((c) => c.id));

/** The checks as the API stores them and PLAN freezes them; a task the API would refuse is a mistake in the task. */
function prepare(task: HonestyTask): Prepared {
  const inputs = files(task.inputs);
  const checkerFiles = files(task.checkerFiles);
  const client = checkSpec.array().parse(task.checks);
  const problems: string[] = [];
  client.forEach((c, i) => {
    const v = validateCheckSpec(c, { checkerFiles: checkerFiles.map((f) => f.name) });
    if (!v.ok) problems.push(...v.issues.map((x) => `checks.${i}.${x.path.join(".")}: ${x.message}`));
    // Expected values and checker material are hidden, as a client keeps them (the suite's own rule).
    const material = checkerFilesOf(c).length > 0 || "expected" in c.params || "cases" in c.params;
    if (material && c.hidden !== true) problems.push(`checks.${i} (${c.id}) carries expected values but is not hidden`);
  });
  if (task.deliverable === null && !client.some((c) => c.kind !== "judgement" && runsCode.has(c.id))) problems.push("a program deliverable needs a check that runs its code");
  if (Object.keys(task.mutants).length < 3) problems.push("fewer than 3 mutants");
  for (const [name, source] of Object.entries(task.mutants)) if (source === task.correct) problems.push(`mutant "${name}" is the correct program`);
  if (problems.length > 0) throw new Error(`task ${task.name} is invalid: ${problems.join("; ")}`);
  const { checks } = freezeChecks(client, [], task.deliverable);
  return { task, checks, inputs, checkerFiles };
}

const docker = dockerClient();
// The engine runtime a runner would choose (SANDBOX_RUNTIME, default auto: gVisor where the engine offers it).
const ociRuntime = chooseOciRuntime(process.env.SANDBOX_RUNTIME ?? "auto", await engineRuntimes(docker));
const sandbox = createDockerSandbox({ docker, image: sandboxImageTag(), runnerId: "bench-honesty", ociRuntime: ociRuntime.runtime });

// Every sandbox run, as the runner sees it (wall, from the call to the result) and as the container saw it.
const sandboxRuns: { kind: "program" | "check"; wallMs: number; durationMs: number }[] = [];
async function timedRun(kind: "program" | "check", req: RunRequest): Promise<RunResult> {
  const t0 = performance.now();
  const result = await sandbox.run(req);
  sandboxRuns.push({ kind, wallMs: performance.now() - t0, durationMs: result.durationMs });
  return result;
}

// runCheck alone, per check id, in ms.
const checkTimes = new Map<string, number[]>();
// Per check id: how many mutants it failed (a check that never fails a mutant earns its place elsewhere, or not at all).
const caught = new Map<string, number>();

async function evaluate(p: Prepared, program: Program): Promise<Outcome> {
  const { task } = p;
  const started = performance.now();
  const filename = task.filename ?? "solution.py";
  const code = { filename, language: "python" as const, source: program.source, notes: "" };
  const paths = p.inputs.map((f) => `${SANDBOX_INPUT_DIR}/${f.name}`);
  const env = { INPUT_PATH: paths[0] ?? "", INPUT_PATHS: JSON.stringify(paths), INPUT_DIR: SANDBOX_INPUT_DIR, OUTPUT_DIR: SANDBOX_OUTPUT_DIR };
  const signal = new AbortController().signal;
  // EXECUTE: the program's own run gets the inputs and nothing else (checker files never enter it).
  const run = await timedRun("program", {
    files: p.inputs,
    script: { filename, source: program.source },
    command: ["python3", filename],
    env,
    timeoutMs: (task.timeoutSeconds ?? DEFAULT_TIMEOUT_S) * 1000,
    signal,
  });
  // The checks that run code get containers of their own, unless the program's run already failed hard.
  const checkRuns =
    run.timedOut || run.oomKilled || run.aborted
      ? []
      : await runCheckRuns({
          sandbox,
          checks: p.checks,
          code,
          inputs: p.inputs,
          checkerFiles: p.checkerFiles,
          env,
          timeLeftMs: () => WALL_BUDGET_MS - (performance.now() - started),
          signal,
          run: (req) => timedRun("check", req),
        });
  const runsByIndex = new Map<number, RunEvidence[]>(checkRuns.map((r) => [r.index, r.runs]));

  // INSPECT: every check over the attempt's evidence, each with its own runs by index.
  const ctx = {
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    oomKilled: run.oomKilled,
    stdout: run.stdout,
    stderr: run.stderr,
    durationMs: Math.round(run.durationMs),
    artifacts: run.artifacts.map((a) => ({ name: a.name, content: a.content })),
    artifactErrors: run.artifactErrors,
    inputs: p.inputs,
    checkerFiles: p.checkerFiles,
    program: { filename, source: program.source },
    runs: [],
  };
  const outcomes: CheckOutcome[] = [];
  for (const [i, spec] of p.checks.entries()) {
    if (spec.kind === "judgement") continue;
    const t0 = performance.now();
    const outcome = runCheck(spec, ctx, runsByIndex.get(i) ?? []);
    const ms = performance.now() - t0;
    checkTimes.set(spec.id, [...(checkTimes.get(spec.id) ?? []), ms]);
    if (!program.correct && !outcome.passed) caught.set(spec.id, (caught.get(spec.id) ?? 0) + 1);
    outcomes.push(outcome);
  }
  const failing = outcomes.filter((o) => !o.passed);
  const verified = failing.length === 0;
  const crash = /^(SyntaxError|IndentationError|NameError|TabError)\b.*$/m.exec(run.stderr)?.[0];
  const warning = !program.correct && crash && failing.every((o) => o.id === "exits_clean") ? `rejected only because it does not run: ${crash}` : undefined;
  return { program, verified, failing, wallMs: performance.now() - started, ...(warning ? { warning } : {}) };
}

const ms = (n: number, digits = 0) => (Number.isNaN(n) ? "-" : n.toFixed(digits));
const rate = (n: number, of: number) => (of === 0 ? "0.0%" : `${((100 * n) / of).toFixed(1)}%`);
const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

const tasks = TASKS.filter((t) => values.only === undefined || t.name.includes(values.only));
if (tasks.length === 0) throw new Error(`no task matches --only ${values.only}`);
const names = new Set<string>();
for (const t of TASKS) {
  if (names.has(t.name)) throw new Error(`two tasks are named ${t.name}`);
  names.add(t.name);
}
const prepared = new Map(tasks.map((t) => [t.name, prepare(t)]));
const programs: Program[] = tasks.flatMap((task) => [
  { task, variant: "correct", correct: true, source: task.correct },
  ...Object.entries(task.mutants).map(([variant, source]) => ({ task, variant, correct: false, source })),
]);

console.log(`${tasks.length} tasks, ${programs.length} programs, ${concurrent} at a time, image ${sandbox.image}, runtime ${sandbox.ociRuntime}`);
const width = { task: Math.max(...tasks.map((t) => t.name.length)), variant: 52 };
console.log(`${"task".padEnd(width.task)}  ${"variant".padEnd(width.variant)}  expect    actual    ${"wall ms".padStart(7)}  failing checks`);

// A sandbox that cannot run (the engine, or a container stopped from outside by someone else's cleanup) is
// an infrastructure failure, not a verdict: the runner retries the step, and so does the suite.
const ATTEMPTS = 4;
/** Waits (up to a minute) until the Docker engine answers again: it may be restarting. */
async function engineBack(): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 1000) {
    await new Promise((r) => setTimeout(r, 1000));
    if (await pingDocker(docker).then(() => true, () => false)) return;
  }
}
const retried: string[] = [];
async function withRetries(program: Program): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await evaluate(prepared.get(program.task.name)!, program);
    } catch (e) {
      if (attempt >= ATTEMPTS) throw e;
      retried.push(`${program.task.name} / ${program.variant}: ${(e as Error).message}`);
      console.log(`    (sandbox failure, retrying: ${(e as Error).message})`);
      await engineBack();
    }
  }
}

const outcomes: Outcome[] = [];
const started = performance.now();
let next = 0;
async function worker() {
  while (next < programs.length) {
    const program = programs[next++]!;
    const o = await withRetries(program);
    outcomes.push(o);
    const expect = program.correct ? "verified" : "rejected";
    const actual = o.verified ? "verified" : "rejected";
    const flag = expect === actual ? "" : program.correct ? "  << FALSE REJECT" : "  << FALSE ACCEPT";
    const failingIds = o.failing.map((f) => f.id).join(", ") || "-";
    console.log(`${program.task.name.padEnd(width.task)}  ${clip(program.variant, width.variant).padEnd(width.variant)}  ${expect.padEnd(8)}  ${actual.padEnd(8)}  ${ms(o.wallMs).padStart(7)}  ${failingIds}${flag}`);
    if (o.warning) console.log(`    warning: ${o.warning}`);
    if (values.verbose || expect !== actual) for (const f of o.failing) console.log(`    ${f.id}: ${clip(f.message.replace(/\r?\n/g, " ⏎ "), 400)}`);
  }
}
await Promise.all(Array.from({ length: concurrent }, worker));
const elapsed = performance.now() - started;

const correct = outcomes.filter((o) => o.program.correct);
const mutants = outcomes.filter((o) => !o.program.correct);
const falseAccepts = mutants.filter((o) => o.verified);
const falseRejects = correct.filter((o) => !o.verified);
const label = (o: Outcome) => `${o.program.task.name} / ${o.program.variant}`;

console.log("");
console.log(`tasks:                     ${tasks.length} (${[...new Set(tasks.map((t) => t.family))].map((f) => `${f} ${tasks.filter((t) => t.family === f).length}`).join(", ")})`);
console.log(`programs:                  ${outcomes.length} (${correct.length} correct, ${mutants.length} mutants)`);
console.log(`correct programs verified: ${correct.length - falseRejects.length} of ${correct.length}`);
console.log(`mutants rejected:          ${mutants.length - falseAccepts.length} of ${mutants.length}`);
console.log(`false accepts:             ${falseAccepts.length} (${rate(falseAccepts.length, mutants.length)} of mutants)`);
for (const o of falseAccepts) console.log(`  - ${label(o)}`);
console.log(`false rejects:             ${falseRejects.length} (${rate(falseRejects.length, correct.length)} of correct programs)`);
for (const o of falseRejects) console.log(`  - ${label(o)}: ${o.failing.map((f) => `${f.id}: ${clip(f.message, 200)}`).join("; ")}`);
const warnings = outcomes.filter((o) => o.warning);
if (warnings.length > 0) console.log(`weak mutants (they do not even run): ${warnings.map(label).join("; ")}`);
if (retried.length > 0) console.log(`sandbox failures retried:  ${retried.length} (${retried.join("; ")})`);
console.log(`wall time:                 ${(elapsed / 1000).toFixed(1)} s`);

const programRuns = sandboxRuns.filter((r) => r.kind === "program");
const ownRuns = sandboxRuns.filter((r) => r.kind === "check");
console.log("");
console.log("time per check: runCheck alone (in-process), beside the sandbox runs of the same run");
console.log(`${"check".padEnd(18)} ${"n".padStart(5)} ${"median ms".padStart(10)} ${"max ms".padStart(8)} ${"mutants failed".padStart(15)}`);
for (const [id, times] of [...checkTimes].sort((a, b) => a[0].localeCompare(b[0]))) {
  console.log(`${id.padEnd(18)} ${String(times.length).padStart(5)} ${ms(median(times), 3).padStart(10)} ${ms(Math.max(...times), 3).padStart(8)} ${String(caught.get(id) ?? 0).padStart(15)}`);
}
const allCheckTimes = [...checkTimes.values()].flat();
console.log(`${"(all checks)".padEnd(18)} ${String(allCheckTimes.length).padStart(5)} ${ms(median(allCheckTimes), 3).padStart(10)} ${ms(Math.max(...allCheckTimes), 3).padStart(8)}`);
console.log(`sandbox, the program's run:        ${programRuns.length} runs, median ${ms(median(programRuns.map((r) => r.wallMs)))} ms wall (${ms(median(programRuns.map((r) => r.durationMs)))} ms in the container), max ${ms(Math.max(...programRuns.map((r) => r.wallMs)))} ms`);
if (ownRuns.length > 0) {
  console.log(`sandbox, checks' own runs (cases, test_suite): ${ownRuns.length} runs, median ${ms(median(ownRuns.map((r) => r.wallMs)))} ms wall (${ms(median(ownRuns.map((r) => r.durationMs)))} ms in the container), max ${ms(Math.max(...ownRuns.map((r) => r.wallMs)))} ms`);
}

// The other half: definitions of done the evaluator's self-test must refuse before any model call (it is
// given no model to call), beside an honest definition of each task that it must let through.
// All of them, whatever --only says: they start no container but the never-ending probe (once).
const vacuous = VACUOUS;
const checkPool = createCheckPool({ timeoutMs: 120_000 });
const selfTested: { label: string; vacuous: boolean; refused: boolean; why: string }[] = [];
for (const task of vacuous) {
  for (const [label, checks, isVacuous] of [...Object.entries(task.vacuous).map(([what, v]) => [what, v.checks, true] as const), ["honest", task.honest, false] as const]) {
    const st = await runSelfTest(
      { sandbox, checks: checkPool },
      { checks: freezeChecks(checkSpec.array().parse(checks), [], task.deliverable).checks, fixtures: null, inputs: files(task.inputs), checkerFiles: files(task.checkerFiles), timeoutMs: DEFAULT_TIMEOUT_S * 1000, signal: new AbortController().signal },
    );
    selfTested.push({ label: `${task.name} / ${label}`, vacuous: isVacuous, refused: !st.ok, why: st.probes.filter((p) => !p.ok).map((p) => p.probe).join("; ") });
  }
}
await checkPool.close();
const vacuousLetThrough = selfTested.filter((r) => r.vacuous && !r.refused);
const honestRefused = selfTested.filter((r) => !r.vacuous && r.refused);
console.log("");
console.log(`vacuous definitions refused before any model call: ${selfTested.filter((r) => r.vacuous && r.refused).length} of ${selfTested.filter((r) => r.vacuous).length}`);
for (const r of selfTested.filter((x) => x.vacuous)) console.log(`  - ${r.label}: ${r.refused ? `refused (${clip(r.why, 160)})` : "LET THROUGH"}`);
console.log(`honest definitions let through:                    ${selfTested.filter((r) => !r.vacuous && !r.refused).length} of ${selfTested.filter((r) => !r.vacuous).length}`);
for (const r of honestRefused) console.log(`  - ${r.label}: refused by ${r.why}`);

const failed = falseAccepts.length > 0 || falseRejects.length > MAX_FALSE_REJECT_RATE * correct.length || vacuousLetThrough.length > 0 || honestRefused.length > 0;
process.exitCode = failed ? 1 : 0;
