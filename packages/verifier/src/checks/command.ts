import { z } from "zod";
import { defineCheck } from "../define";
import { clipText } from "../format";
import { JUNIT, readJunit, type TestCase } from "../lib/junit";
import { PYTEST_SHADOWS } from "../lib/python";
import type { CheckResult, CheckRunRequest, Finding, RunEvidence } from "../types";
import { applyAttempt, isLocked } from "../workspace";
import { maxFindingsParam } from "./json-matches";

// issue 14: a client's own command (tsc --noEmit, node --test, npm test, pytest) run in a fresh container
// over the workspace with the attempt's files applied. Locked files (the goal's, plus the files that
// configure the runner) are restored from the original before the command runs, and an attempt that
// changed one is failed and told so. What this check trusts: the exit code, and for test runners the
// JUnit report agreeing with it, with at least min_tests tests. Like test_suite, the tests run in the
// same process as the solution's code, so code that sets out to cheat (patching assert, rewriting the
// report) could fake a pass; exiting early, collecting no tests and editing the tests themselves cannot.

/** The TypeScript loader of the Node image (sandbox-images/node): TypeScript runs and tests like JavaScript. */
export const TS_REGISTER = "/opt/loopsmith/ts-register.mjs";
const JUNIT_PATH = `/work/out/${JUNIT}`;
const NODE_REPORTERS = ["--test-reporter=spec", "--test-reporter-destination=stdout", "--test-reporter=junit", `--test-reporter-destination=${JUNIT_PATH}`];

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
  })
  .refine((p) => p.run !== "exec" || p.args.length > 0, { message: "exec needs the command in args", path: ["args"] });

const PYTEST_CONFIG = ["conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "setup.cfg", "tox.ini"];
// `python3 -m pytest` puts the working directory (the workspace root) first on sys.path, so a top-level
// module named in PYTEST_SHADOWS would replace pytest or a module it imports, whatever form it takes (a
// package, name.py, a sourceless name.pyc, an extension name.cpython-311-x86_64-linux-gnu.so): the name is
// what comes before the first dot. importlib.metadata reads a *.dist-info / *.egg-info there, whose entry
// points register pytest plugins.
const shadowsPytest = (top: string) => PYTEST_SHADOWS.includes(top.split(".")[0]!) || /\.(?:dist|egg)-info$/.test(top);

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

function commandOf(run: Preset, args: string[]): { command: string[]; env: Record<string, string>; runtime: "python" | "node" } {
  const npmQuiet = { npm_config_update_notifier: "false", npm_config_fund: "false", npm_config_audit: "false", npm_config_cache: "/tmp/npm-cache", npm_config_logs_max: "0" };
  switch (run) {
    case "tsc":
      return { command: ["tsc", "--noEmit", "--pretty", "false", ...args], env: {}, runtime: "node" };
    case "node_test":
      return { command: ["node", "--import", TS_REGISTER, "--test", ...NODE_REPORTERS, ...args], env: {}, runtime: "node" };
    case "npm_test":
      return { command: ["npm", "test", ...(args.length ? ["--", ...args] : [])], env: { ...npmQuiet, NODE_OPTIONS: [`--import=${TS_REGISTER}`, ...NODE_REPORTERS].join(" ") }, runtime: "node" };
    case "pytest":
      // Stryker disable next-line StringLiteral: equivalent; only runtime === "node" is read
      return { command: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit2", `--junitxml=${JUNIT_PATH}`, ...args], env: {}, runtime: "python" };
    case "exec":
      // Stryker disable next-line StringLiteral: equivalent; exec's image follows the goal's language, never this runtime
      return { command: args, env: {}, runtime: "python" };
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
  publicParams: ["run", "args", "min_tests", "timeout_seconds", "max_output_chars", "max_findings"],
  publicMessages: true,
  sandbox(p, ctx): CheckRunRequest[] {
    const { command: argv, env, runtime } = commandOf(p.run, p.args);
    // Stryker disable next-line StringLiteral: equivalent; Buffer.from reads a string as utf8 when the encoding is empty
    const program = { path: ctx.program.filename, content: Buffer.from(ctx.program.source, "utf8") };
    const ws = ctx.workspace ?? {
      original: [],
      attempt: [program],
      // Stryker disable next-line ArrayDeclaration: equivalent; no workspace path is named "Stryker was here"
      locked: [],
    };
    const locked = (path: string) => isLocked(path, ws.locked) || runnerConfig(p.run, path);
    // Locked paths as the original has them: restoring means applying only the unlocked files.
    // Stryker disable next-line ArrayDeclaration,BooleanLiteral: equivalent; the locked files are filtered out above, so there is nothing left to restore
    const applied = applyAttempt(ws.original, ws.attempt.filter((f) => !locked(f.path)), [], false);
    const node = p.run === "exec" ? ctx.language === "javascript" || ctx.language === "typescript" : runtime === "node";
    return [{ files: applied.files, command: argv, env, timeoutMs: p.timeout_seconds * 1000, runtime: node ? "node" : "python" }];
  },
  run(p, ctx): CheckResult {
    const what = label(p.run, p.args);
    const ws = ctx.workspace;
    const lockedChanged = ws ? ws.changed.filter((path) => isLocked(path, ws.locked) || runnerConfig(p.run, path)) : [];
    const run = ctx.runs[0];
    const verdict = run === undefined ? { passed: false, message: `${what} was not run` } : judge(p, what, run);
    if (lockedChanged.length > 0) {
      const message = `the attempt changed locked files (${lockedChanged.slice(0, 10).join(", ")}${lockedChanged.length > 10 ? ", ..." : ""}); they were restored from the original for this run, and an attempt that edits them is not accepted. With them restored: ${verdict.passed ? "passed" : verdict.message}`;
      return { passed: false, message, publicMessage: message, findings: lockedChanged.slice(0, p.max_findings).map((path) => ({ where: path, note: "a locked file the attempt changed" })) };
    }
    return verdict;
  },
});

function tail(run: RunEvidence, max: number): string {
  const out = [run.stdout.trimEnd(), run.stderr.trimEnd()].filter(Boolean).join("\n");
  if (out.length === 0) return "(no output)";
  return out.length <= max ? out : `[... ${out.length - max} characters cut ...]\n${out.slice(-max)}`;
}

function judge(p: z.output<typeof params>, what: string, run: RunEvidence): CheckResult {
  const output = () => `\n${tail(run, p.max_output_chars)}`;
  const failed = (message: string, findings?: Finding[]): CheckResult => ({ passed: false, message: `${message}${output()}`, ...(findings ? { findings } : {}) });
  if (run.timedOut) return failed(`${what} hit its time limit of ${p.timeout_seconds} s`);
  if (run.oomKilled) return failed(`${what} ran out of memory`);
  if (!isTestRunner(p.run)) {
    return run.exitCode === 0 ? { passed: true, message: `${what} exited 0` } : failed(`${what} exited ${run.exitCode}`);
  }
  const report = readJunit(run, what);
  if (!report.ok) return failed(`${report.message} (exit code ${run.exitCode})`);
  // Node reports a test file that ran no test of its own (it exited early, or defines none) as a
  // passing test named by the file's path: such entries are no tests.
  const cases = report.cases.filter((c) => !(c.name.startsWith("/work/") && c.outcome === "passed"));
  const bad = cases.filter((c) => c.outcome !== "passed");
  const passed = cases.length - bad.length;
  const counts = `${cases.length} test${cases.length === 1 ? "" : "s"}: ${passed} passed, ${count(cases, "failed")} failed, ${count(cases, "error")} errors, ${count(cases, "skipped")} skipped`;
  const findings: (Finding & { note: string })[] = bad.slice(0, p.max_findings).map((c) => ({ where: `${c.id} ${c.outcome}`, ...(c.type ? { actual: c.type } : {}), note: clipText(c.message ?? "", 1500) }));
  if (cases.length === 0) return failed(`${what}: no tests ran (exit code ${run.exitCode}): every test must run`);
  if (bad.length > 0) return failed(`${what}: ${counts} (exit code ${run.exitCode}); first: ${findings.slice(0, 3).map((f) => `${f.where}: ${clipText(f.note.split("\n", 1)[0]!, 200)}`).join("; ")}`, findings);
  if (run.exitCode !== 0) return failed(`${what} exited ${run.exitCode} although its report lists ${counts}: the two disagree, so neither is trusted`);
  if (passed < p.min_tests) return failed(`${what}: ${counts}; fewer than the required ${p.min_tests}`);
  return { passed: true, message: `${what}: ${counts}` };
}

function count(cases: TestCase[], outcome: TestCase["outcome"]) {
  return cases.filter((c) => c.outcome === outcome).length;
}
