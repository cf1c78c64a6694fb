import { z } from "zod";
import { defineCheck } from "../define";
import { clipText } from "../format";
import { JUNIT, readJunit, type TestCase } from "../lib/junit";
import { programRunStopped } from "../lib/not-run";
import { COMMAND_EXEC_PY, COMMAND_NODE_FREEZE_MJS, COMMAND_NODE_OBSERVER_MJS, COMMAND_PYTEST_PY } from "./command-harness";
import { PYTEST_SHADOWS } from "../lib/python";
import type { CheckResult, CheckRunRequest, Finding, RunEvidence } from "../types";
import { applyAttempt, isLocked } from "../workspace";
import { maxFindingsParam } from "./json-matches";
import { repeatParam, rerunFailedParam } from "./support";

// issue 14: a client's own command (tsc --noEmit, node --test, npm test, pytest) run in a fresh container
// over the workspace with the attempt's files applied. issue 26: the client's files (its locked paths, the
// files that configure the runner, the runner's test files and an exec's script) come from LoopSmith's copy
// and are root's and read-only to every process of the run for its whole length; HOME, caches and
// node_modules lookups sit where the attempt cannot plant code; Python starts isolated (-I) with the
// workspace after the standard library; only the client's test files are named to the runner and counted;
// and an observer reports what the runner really did on a pipe (not a file in the workspace), which is
// compared with the report. The attempt's code still runs inside the test process (the tests import it),
// so this check cannot rule out a program that studies and defeats the harness itself; what it rules out
// is every way of running before or instead of the judge, or of touching its files, that does not.
// docs/checks.md says exactly what each preset trusts.

/** The TypeScript loader of the Node image (sandbox-images/node): TypeScript runs and tests like JavaScript. */
export const TS_REGISTER = "/opt/loopsmith/ts-register.mjs";
const JUNIT_PATH = `/work/out/${JUNIT}`;
/** Where the check's own harness files sit (root's and read-only during the run). */
const HARNESS = ".loopsmith-judge";
const OBSERVER = `/work/${HARNESS}/loopsmith_observer.mjs`;
const FREEZE = `/work/${HARNESS}/loopsmith_freeze.mjs`;
const NODE_REPORTERS = ["--test-reporter=spec", "--test-reporter-destination=stdout", `--test-reporter=${OBSERVER}`, "--test-reporter-destination=stdout"];
const PYCACHE = "pycache_prefix=/tmp/.loopsmith-pycache";
/** npm test's observer events (node does not pass the channel's descriptor through npm and its shell). */
const OBSERVED_FILE = "loopsmith-observed.jsonl";

export const COMMAND_PRESETS = ["tsc", "node_test", "npm_test", "pytest", "exec"] as const;
type Preset = (typeof COMMAND_PRESETS)[number];

const arg = z.string().min(1).max(1000).refine((a) => !a.includes("\0"), "no NUL bytes");

const params = z
  .strictObject({
    run: z
      .enum(COMMAND_PRESETS)
      .describe(
        'tsc: `tsc --noEmit` (the workspace\'s tsconfig.json); node_test: `node --test` (TypeScript files too) with a JUnit report; npm_test: `npm test` (its script runs node --test; the report comes through NODE_OPTIONS); pytest: `python3 -m pytest -q` with a JUnit report; exec: `args` is the whole command, judged by its exit code.',
      ),
    args: z.array(arg).max(50).default([]).describe("Arguments appended to the preset's command (e.g. test files), or with exec the whole argv."),
    min_tests: z.int().min(1).max(100_000).default(1).describe("Test runners: fewer passing tests than this is a failure (zero tests always is)."),
    timeout_seconds: z.int().min(1).max(600).default(120).describe("Time limit of the command."),
    max_output_chars: z.int().min(200).max(20_000).default(4000).describe("How much of the command's output (its end) a failure quotes."),
    max_findings: maxFindingsParam,
    repeat: repeatParam,
    rerun_failed: rerunFailedParam,
  })
  .refine((p) => p.run !== "exec" || p.args.length > 0, { message: "exec needs the command in args", path: ["args"] });

const PYTEST_CONFIG = ["conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "setup.cfg", "tox.ini"];
// `python3 -m pytest` puts the working directory (the workspace root) first on sys.path, so a top-level
// module named in PYTEST_SHADOWS would replace pytest or a module it imports, whatever form it takes (a
// package, name.py, a sourceless name.pyc, an extension name.cpython-311-x86_64-linux-gnu.so): the name is
// what comes before the first dot. importlib.metadata reads a *.dist-info / *.egg-info there, whose entry
// points register pytest plugins.
// Python's metadata lookup matches *.dist-info names case-insensitively (Evil.DIST-INFO counts).
const shadowsPytest = (top: string) => PYTEST_SHADOWS.includes(top.split(".")[0]!) || /\.(?:dist|egg)-info$/i.test(top);

/** Files that configure the runner: an attempt may not add or change them either (they could switch the tests off). */
function runnerConfig(run: Preset, path: string): boolean {
  // Stryker disable next-line StringLiteral: unreachable; split always returns at least one element
  const base = path.split("/").at(-1) ?? "";
  // pytest 7.2 (the image's) also reads the hidden .pytest.ini first; pytest 9 adds (.)pytest.toml.
  if (run === "pytest") return PYTEST_CONFIG.includes(base) || path.startsWith("sitecustomize") || base === "usercustomize.py" || shadowsPytest(path.split("/")[0]!);
  if (run === "exec") return false;
  // node_modules at any depth: Node resolves a test's imports from the nearest one up its directory tree.
  return base === "package.json" || base === ".npmrc" || /^tsconfig.*\.json$/.test(base) || path.split("/").includes("node_modules");
}

const isTestRunner = (run: Preset) => run === "node_test" || run === "npm_test" || run === "pytest";

// The runners' own default test file patterns (pytest: python_files; node --test: its documented globs).
const PYTEST_TEST = /^(test_.*|.*_test)\.py$/;
const NODE_TEST = /^(.*[.\-_]test|test-.*|test)\.(c|m)?(js|ts)$/;
function isTestFile(run: Preset, path: string): boolean {
  const base = path.split("/").at(-1)!;
  if (run === "pytest") return PYTEST_TEST.test(base);
  if (run === "node_test" || run === "npm_test") return NODE_TEST.test(base) || (/\.(c|m)?(js|ts)$/.test(base) && path.split("/").slice(0, -1).includes("test"));
  return false;
}

/** exec's script, when the command is `python3 <client's .py file> ...`: it runs under the end-of-script marker. */
function execScript(p: { run: Preset; args: string[] }, original: ReadonlySet<string>): string | undefined {
  const [exe, script] = p.args;
  if (p.run !== "exec" || (exe !== "python3" && exe !== "python") || script === undefined) return undefined;
  const path = script.replace(/^(\.\/|\/work\/)/, "");
  return path.endsWith(".py") && original.has(path) ? path : undefined;
}

/**
 * The test files the runner is given: the client's own, explicitly. A directory argument stands for the
 * client's test files under it; without any path argument, every client test file.
 */
function selectTests(run: Preset, args: string[], original: ReadonlySet<string>): { args: string[]; files: string[] } {
  const tests = [...original].filter((f) => isTestFile(run, f)).sort();
  const out: string[] = [];
  const files = new Set<string>();
  let paths = 0;
  for (const a of args) {
    if (a.startsWith("-")) {
      out.push(a);
      continue;
    }
    const file = a.split("::")[0]!.replace(/^\.\//, "").replace(/\/+$/, "");
    if (original.has(file)) {
      paths++;
      out.push(a);
      files.add(file);
      continue;
    }
    const under = tests.filter((t) => file === "" || file === "." || t.startsWith(`${file}/`));
    if (under.length > 0) {
      paths++;
      out.push(...under);
      under.forEach((t) => files.add(t));
      continue;
    }
    out.push(a);
  }
  if (paths === 0) {
    out.push(...tests);
    tests.forEach((t) => files.add(t));
  }
  return { args: out, files: [...files].sort() };
}

/** The isolated environment every preset runs in (HOME, caches and module paths out of the attempt's reach). */
const ISOLATED_ENV = {
  HOME: "/tmp/home",
  TMPDIR: "/tmp",
  XDG_CONFIG_HOME: "/tmp/xdg/config",
  XDG_CACHE_HOME: "/tmp/xdg/cache",
  XDG_DATA_HOME: "/tmp/xdg/data",
  NODE_OPTIONS: "",
  NODE_PATH: "",
  npm_config_userconfig: "/tmp/home/.npmrc",
};

function commandOf(run: Preset, args: string[], script: string | undefined): { command: string[]; env: Record<string, string>; runtime: "python" | "node"; channel: boolean } {
  const npmQuiet = { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", npm_config_cache: "/tmp/npm-cache", npm_config_logs_max: "0" };
  switch (run) {
    case "tsc":
      return { command: ["tsc", "--noEmit", "--pretty", "false", ...args], env: {}, runtime: "node", channel: false };
    case "node_test":
      return { command: ["node", "--import", FREEZE, "--import", TS_REGISTER, "--test", ...NODE_REPORTERS, ...args], env: {}, runtime: "node", channel: true };
    case "npm_test":
      return {
        command: ["npm", "test", ...(args.length ? ["--", ...args] : [])],
        env: { ...npmQuiet, NODE_OPTIONS: [`--import=${FREEZE}`, `--import=${TS_REGISTER}`, ...NODE_REPORTERS].join(" "), LOOPSMITH_OBSERVER_FILE: `/work/out/${OBSERVED_FILE}` },
        runtime: "node",
        channel: false,
      };
    case "pytest":
      // Stryker disable next-line StringLiteral: equivalent; only runtime === "node" is read
      return {
        command: ["python3", "-I", "-X", PYCACHE, `/work/${HARNESS}/loopsmith_pytest.py`, "/work", "--rootdir=/work", "-q", "-p", "no:cacheprovider", "--import-mode=append", "-o", "junit_family=xunit2", `--junitxml=${JUNIT_PATH}`, ...args],
        env: {},
        runtime: "python",
        channel: true,
      };
    case "exec":
      // Stryker disable next-line StringLiteral: equivalent; exec's image follows the goal's language, never this runtime
      if (script !== undefined) return { command: ["python3", "-I", "-X", PYCACHE, `/work/${HARNESS}/loopsmith_exec.py`, ...args.slice(1)], env: {}, runtime: "python", channel: true };
      return { command: args, env: {}, runtime: "python", channel: false };
  }
}

function label(run: Preset, args: string[]): string {
  const c = { tsc: "tsc --noEmit", node_test: "node --test", npm_test: "npm test", pytest: "pytest -q", exec: "" }[run];
  return clipText([c, ...args].filter(Boolean).join(" "), 200);
}

export const command = defineCheck({
  description:
    "A client command (run: tsc, node_test, npm_test, pytest, or exec with args) in a fresh sandbox container over the goal's workspace with the attempt's files applied. Locked files (the goal's workspace.locked, and files that configure the runner: package.json, tsconfig*.json, node_modules/ for Node; conftest.py, pytest.ini, .pytest.ini, pyproject.toml, setup.cfg, tox.ini, and top-level modules or *.dist-info that would shadow pytest, for pytest) are restored from the original before the command runs; an attempt that changed one fails. Passes when the command exits 0 and, for test runners, its JUnit report lists at least min_tests tests, all passed (zero tests fail). A failure quotes the end of the command's output.",
  params,
  example: { run: "node_test", args: ["test/sum.test.ts"], min_tests: 2 },
  publicParams: ["run", "args", "min_tests", "timeout_seconds", "max_output_chars", "max_findings", "repeat", "rerun_failed"],
  publicMessages: true,
  sandbox(p, ctx): CheckRunRequest[] {
    // Stryker disable next-line StringLiteral: equivalent; Buffer.from reads a string as utf8 when the encoding is empty
    const program = { path: ctx.program.filename, content: Buffer.from(ctx.program.source, "utf8") };
    const ws = ctx.workspace ?? {
      original: [],
      attempt: [program],
      // Stryker disable next-line ArrayDeclaration: equivalent; no workspace path is named "Stryker was here"
      locked: [],
    };
    const original = new Set(ws.original.map((f) => f.path));
    const script = execScript(p, original);
    const locked = clientFileTest(p, ws.locked, original, script);
    // The client's files as the original has them: restoring means applying only the attempt's other files.
    // Stryker disable next-line ArrayDeclaration,BooleanLiteral: equivalent; the locked files are filtered out above, so there is nothing left to restore
    const applied = applyAttempt(ws.original, ws.attempt.filter((f) => !locked(f.path)), [], false);
    const selected = isTestRunner(p.run) && p.run !== "npm_test" ? selectTests(p.run, p.args, original) : { args: p.args, files: [] };
    const { command: argv, env, runtime, channel } = commandOf(p.run, selected.args, script);
    const harness = [
      { path: `${HARNESS}/loopsmith_pytest.py`, content: Buffer.from(COMMAND_PYTEST_PY) },
      { path: `${HARNESS}/loopsmith_exec.py`, content: Buffer.from(COMMAND_EXEC_PY) },
      { path: `${HARNESS}/loopsmith_observer.mjs`, content: Buffer.from(COMMAND_NODE_OBSERVER_MJS) },
      { path: `${HARNESS}/loopsmith_freeze.mjs`, content: Buffer.from(COMMAND_NODE_FREEZE_MJS) },
    ];
    const files = [...applied.files.filter((f) => !f.path.startsWith(`${HARNESS}/`)), ...harness];
    const protect = files.filter((f) => (original.has(f.path) && locked(f.path)) || f.path.startsWith(`${HARNESS}/`)).map((f) => f.path);
    const node = p.run === "exec" ? ctx.language === "javascript" || ctx.language === "typescript" : runtime === "node";
    return [{ files, command: argv, env: { ...ISOLATED_ENV, ...env }, timeoutMs: p.timeout_seconds * 1000, runtime: node ? "node" : "python", protect, isolate: true, ...(channel ? { channel: true } : {}) }];
  },
  run(p, ctx): CheckResult {
    const what = label(p.run, p.args);
    const ws = ctx.workspace;
    const original = new Set(ws?.original ?? []);
    const script = execScript(p, original);
    const locked = clientFileTest(p, ws?.locked ?? [], original, script);
    const lockedChanged = ws ? ws.changed.filter((path) => locked(path)) : [];
    const run = ctx.runs[0];
    const clientTests = isTestRunner(p.run) ? (p.run === "npm_test" ? [...original].filter((f) => isTestFile(p.run, f)) : selectTests(p.run, p.args, original).files) : [];
    const stopped = programRunStopped(ctx);
    const verdict = run === undefined ? { passed: false, message: `${what} was not run${stopped ? `: ${stopped}` : ""}` } : judge(p, what, run, { script, clientTests });
    if (lockedChanged.length > 0) {
      const list = `${lockedChanged.slice(0, 10).join(", ")}${lockedChanged.length > 10 ? ", ..." : ""}`;
      const message = `the attempt changed files it may not change (${list}): the client's locked files, the runner's configuration and its test files; they were restored from the original for this run, and an attempt that edits them is not accepted. With them restored: ${verdict.passed ? "passed" : verdict.message}`;
      return { passed: false, message, publicMessage: message, tampered: `the attempt changed the client's files (${list})`, findings: lockedChanged.slice(0, p.max_findings).map((path) => ({ where: path, note: "a file of the client's the attempt changed" })) };
    }
    return verdict;
  },
});

/** Which paths are the client's for this check: locked, runner configuration, the runner's test files, exec's script. */
function clientFileTest(p: { run: Preset }, lockedPaths: readonly string[], original: ReadonlySet<string>, script: string | undefined): (path: string) => boolean {
  return (path) => isLocked(path, lockedPaths) || runnerConfig(p.run, path) || (original.has(path) && isTestFile(p.run, path)) || path === script || path.startsWith(`${HARNESS}/`);
}

function tail(run: RunEvidence, max: number): string {
  const out = [run.stdout.trimEnd(), run.stderr.trimEnd()].filter(Boolean).join("\n");
  if (out.length === 0) return "(no output)";
  return out.length <= max ? out : `[... ${out.length - max} characters cut ...]\n${out.slice(-max)}`;
}

interface Observed {
  /** Events the harness wrote on the channel, in order; lines that are not its JSON are counted apart. */
  events: Record<string, unknown>[];
  foreign: number;
}

function observed(run: RunEvidence, fromFile = false): Observed {
  const events: Record<string, unknown>[] = [];
  let foreign = 0;
  const text = fromFile ? (run.artifacts.find((a) => a.name === OBSERVED_FILE)?.content.toString("utf8") ?? "") : (run.channel?.text ?? "");
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      const ev = JSON.parse(line) as unknown;
      if (ev !== null && typeof ev === "object" && !Array.isArray(ev) && typeof (ev as { ev?: unknown }).ev === "string") events.push(ev as Record<string, unknown>);
      else foreign++;
    } catch {
      foreign++;
    }
  }
  return { events, foreign };
}

/** pytest's JUnit id ("<classname>::<name>") of a node id ("tests/test_a.py::TestX::test_y[1]"), as its junitxml plugin mangles it. */
export function junitIdOf(nodeid: string): string {
  const bracket = nodeid.indexOf("[");
  const [path, params] = bracket >= 0 ? [nodeid.slice(0, bracket), nodeid.slice(bracket)] : [nodeid, ""];
  const names = path.split("::");
  names[0] = names[0]!.replace(/\//g, ".").replace(/\.py$/, "");
  return `${names.slice(0, -1).join(".")}::${names.at(-1)}${params}`;
}

/** What the pytest observer saw contradicts the report or the exit code: the first contradiction, or undefined. */
function pytestTamper(run: RunEvidence, cases: TestCase[], seen: Observed): string | undefined {
  const finish = seen.events.find((e) => e.ev === "finish");
  if (seen.foreign > 0) return "the observer's channel carried lines the observer never writes";
  if (finish === undefined) return run.exitCode === 0 ? "the test run exited 0 before pytest finished its session" : undefined;
  if (finish.exitstatus !== run.exitCode) return `pytest ended its session with status ${String(finish.exitstatus)}, but the process exited ${run.exitCode}`;
  const reports = new Map<string, string>();
  const started = new Set<string>();
  const raised = new Map<string, string>();
  for (const e of seen.events) {
    const id = typeof e.id === "string" ? e.id : undefined;
    if (id === undefined) continue;
    if (e.ev === "report" && e.when === "call") reports.set(junitIdOf(id), String(e.outcome));
    if (e.ev === "start") started.add(junitIdOf(id));
    if (e.ev === "raised") raised.set(junitIdOf(id), String(e.type));
  }
  for (const c of cases.filter((x) => x.outcome === "passed")) {
    const got = reports.get(c.id);
    if (got !== "passed") return `the report lists ${c.id} as passed, but pytest ${got === undefined ? "never ran it" : `reported it ${got}`}`;
    if (!started.has(c.id)) return `${c.id} was reported as passed without its body running`;
    if (raised.has(c.id)) return `${c.id}'s body raised ${clipText(raised.get(c.id)!, 100)}, but the test was reported as passed`;
  }
  return undefined;
}

/** The tests node's runner reported, as its own process saw them (the observer), the client's files only counting. */
function nodeCases(seen: Observed, clientTests: readonly string[]): { cases: TestCase[]; others: number } {
  const client = new Set(clientTests.map((f) => `/work/${f}`));
  const cases: TestCase[] = [];
  let others = 0;
  for (const e of seen.events) {
    if (e.ev !== "test" || e.kind === "suite") continue;
    const name = typeof e.name === "string" ? e.name : "";
    const file = typeof e.file === "string" ? e.file : "";
    const outcome = e.outcome === "passed" || e.outcome === "failed" || e.outcome === "skipped" ? e.outcome : "error";
    // A file that ran no test of its own is reported as a passing test named by its path: no test.
    if (outcome === "passed" && name.startsWith("/work/")) continue;
    if (!client.has(file)) {
      others++;
      continue;
    }
    const err = (e.error ?? {}) as { type?: unknown; message?: unknown };
    cases.push({ id: `${file.replace(/^\/work\//, "")}::${name}`, name, outcome, ...(typeof err.type === "string" ? { type: err.type } : {}), ...(typeof err.message === "string" ? { message: err.message } : {}) });
  }
  return { cases, others };
}

function judge(p: z.output<typeof params>, what: string, run: RunEvidence, client: { script: string | undefined; clientTests: string[] }): CheckResult {
  const output = () => `\n${tail(run, p.max_output_chars)}`;
  const failed = (message: string, findings?: Finding[]): CheckResult => ({ passed: false, message: `${message}${output()}`, ...(findings ? { findings } : {}) });
  const tampered = (seen: string): CheckResult => ({ ...failed(`${what}: ${seen}`), tampered: seen });
  if (run.timedOut) return failed(`${what} hit its time limit of ${p.timeout_seconds} s`);
  if (run.oomKilled) return failed(`${what} ran out of memory`);
  if (!isTestRunner(p.run)) {
    if (client.script !== undefined) {
      // The client's script must have run to its end (or exited from a file of the client's).
      const seen = observed(run);
      const end = seen.events.find((e) => e.ev === "end");
      if (run.exitCode === 0 && (seen.foreign > 0 || end === undefined)) return tampered(`the command exited 0 before ${client.script} finished`);
      if (run.exitCode === 0 && end?.how === "exit" && end.client !== true) return tampered(`${client.script} was ended early, with status 0, by code that is not the client's`);
    }
    return run.exitCode === 0 ? { passed: true, message: `${what} exited 0` } : failed(`${what} exited ${run.exitCode}`);
  }
  const seen = observed(run, p.run === "npm_test");
  let cases: TestCase[];
  let others = 0;
  if (p.run === "pytest") {
    const report = readJunit(run, what);
    if (!report.ok) {
      if (run.exitCode === 0 && !seen.events.some((e) => e.ev === "finish")) return tampered("the test run exited 0 before pytest finished its session");
      return failed(`${report.message} (exit code ${run.exitCode})`);
    }
    const all = report.cases;
    const tamper = pytestTamper(run, all, seen);
    if (tamper !== undefined) return tampered(tamper);
    // Only tests the client's files define count (the files named to pytest are the client's).
    const files = new Set(client.clientTests.map((f) => f.replace(/\.py$/, "").replace(/\//g, ".")));
    cases = all.filter((c) => [...files].some((f) => c.id === f || c.id.startsWith(`${f}::`) || c.id.startsWith(`${f}.`)));
    others = all.length - cases.length;
  } else {
    if (seen.foreign > 0) return tampered("the test runner's report channel carried lines its reporter never writes");
    if (!seen.events.some((e) => e.ev === "start")) return failed(`${what}: the test runner reported nothing (exit code ${run.exitCode})`);
    if (run.exitCode === 0 && seen.events.filter((e) => e.ev === "start").length !== seen.events.filter((e) => e.ev === "finish").length) return tampered("the test run exited 0 before its test runner finished");
    ({ cases, others } = nodeCases(seen, client.clientTests));
  }
  const bad = cases.filter((c) => c.outcome !== "passed");
  const passed = cases.length - bad.length;
  const extra = others > 0 ? ` (and ${others} test${others === 1 ? "" : "s"} outside the client's test files, not counted)` : "";
  const counts = `${cases.length} test${cases.length === 1 ? "" : "s"}: ${passed} passed, ${count(cases, "failed")} failed, ${count(cases, "error")} errors, ${count(cases, "skipped")} skipped${extra}`;
  const findings: (Finding & { note: string })[] = bad.slice(0, p.max_findings).map((c) => ({ where: `${c.id} ${c.outcome}`, ...(c.type ? { actual: c.type } : {}), note: clipText(c.message ?? "", 1500) }));
  if (cases.length === 0) return failed(`${what}: no tests of the client's ran (exit code ${run.exitCode}${extra}): every test must run`);
  if (bad.length > 0) return failed(`${what}: ${counts} (exit code ${run.exitCode}); first: ${findings.slice(0, 3).map((f) => `${f.where}: ${clipText(f.note.split("\n", 1)[0]!, 200)}`).join("; ")}`, findings);
  if (run.exitCode !== 0) return failed(`${what} exited ${run.exitCode} although its report lists ${counts}: the two disagree, so neither is trusted`);
  if (passed < p.min_tests) return failed(`${what}: ${counts}; fewer than the required ${p.min_tests}`);
  return { passed: true, message: `${what}: ${counts}` };
}

function count(cases: TestCase[], outcome: TestCase["outcome"]) {
  return cases.filter((c) => c.outcome === outcome).length;
}
