import { z } from "zod";
import { checkerFileName } from "../artifacts";
import { defineCheck } from "../define";
import { clipText, preview } from "../format";
import { JUNIT, readJunit, type TestCase } from "../lib/junit";
import { PYTEST_SHADOWS, safeExceptionName, STARTUP_MODULES } from "../lib/python";
import { BRIDGE_CLIENT_PY, BRIDGE_SERVER_PY, BRIDGE_WIRE_PY, JUDGE_PYTEST_PY } from "./bridge-py";
import { programRunStopped } from "../lib/not-run";
import type { CheckResult, Finding, NamedFile, RunEvidence, VerifyContext } from "../types";
import { maxFindingsParam } from "./json-matches";
import { repeatParam, rerunFailedParam } from "./support";

// The client's own pytest files, run against the program. By default (isolation "process", issue 26) the
// tests run in a judge process of their own, under another uid, with files the program can neither read nor
// change; the module the tests import under the program's name is a stand-in whose every call crosses to
// the program's process as plain data (see bridge-py.ts). So the program cannot patch pytest, assertion
// rewriting, builtins or the report, cannot exit early on the tests' behalf, cannot read the hidden tests,
// and a lying __eq__ never crosses: what this check trusts is pytest in the judge's process. Isolation
// "none" (the former mode) imports the program into pytest's own process: code that sets out to cheat can
// fake a pass there, and it exists only for tests the bridge cannot serve (a test that passes a function to
// the program, monkeypatches it, or reads its source).

const PYTEST_INI = "[pytest]\n";
/** The judge's directory under /work (isolation "process"). */
export const JUDGE_DIR = ".judge";
/** The module the tests import under the program's name, on the judge's side. */
const STAND_IN = "# Stands in for the program, which runs in a process of its own (test_suite, isolation process).\nimport loopsmith_bridge\nloopsmith_bridge.install(globals())\n";

const params = z.strictObject({
  tests: z.array(checkerFileName).min(1).max(50).describe("Checker files with the client's pytest tests (test_*.py), and any conftest.py of the client's."),
  module: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    // The program would replace the test runner (or run at Python's start-up) instead of being imported by the tests.
    .refine((m) => !PYTEST_SHADOWS.includes(m) && !STARTUP_MODULES.includes(m), { message: `cannot be a module pytest needs or one Python runs at start-up (${[...PYTEST_SHADOWS, ...STARTUP_MODULES].join(", ")})` })
    .default("solution").describe("The program is placed as <module>.py beside the tests' directory, importable under this name."),
  min_tests: z.int().min(1).max(100_000).default(1).describe("Fewer passing tests than this is a failure (guards against tests that were never collected)."),
  timeout_seconds: z.int().min(1).max(600).default(120).describe("Time limit of the whole test run."),
  isolation: z
    .enum(["process", "none"])
    .default("process")
    .describe(
      "process (default): the tests run in a process of their own that the program cannot read or touch, and reach the program through a stand-in module whose calls cross as plain data; none: the program is imported into pytest's own process (it could patch pytest: use only for tests that pass functions to the program, monkeypatch it or read its source).",
    ),
  call_timeout_seconds: z.int().min(1).max(600).default(30).describe("isolation process: the longest one call into the program may take before the test fails."),
  max_findings: maxFindingsParam,
  repeat: repeatParam,
  rerun_failed: rerunFailedParam,
});

export const testSuite = defineCheck({
  description:
    // Stryker disable next-line StringLiteral: documentation (GET /checks and the planner's prompt show it), like a .describe() argument
    "The client's pytest files (checker files) run against the program (placed as <module>.py). Passes only when pytest exits 0 AND its JUnit XML report agrees: at least min_tests tests, none failed, errored or skipped. isolation process (the default): the tests run in a process of their own that the program can neither read nor touch, reaching the program through a stand-in module whose calls cross as plain data; isolation none: the program is imported into pytest's process (docs/checks.md says what each trusts).",
  params,
  example: { tests: ["test_solution.py"], module: "solution", min_tests: 3 },
  publicParams: ["module", "min_tests", "timeout_seconds", "isolation", "call_timeout_seconds", "repeat", "rerun_failed"],
  checkerFiles: (p) => p.tests,
  sandbox(p, ctx) {
    const missing = p.tests.some((name) => !ctx.checkerFiles.some((f) => f.name === name));
    if (missing) return [];
    const testFile = (dir: string) => (name: string) => ({ path: `${dir}tests/${name}`, content: ctx.checkerFiles.find((f) => f.name === name)!.content });
    const collect = p.tests.filter((n) => n !== "conftest.py").map((n) => `tests/${n}`);
    const junitArgs = ["-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit2"];
    if (p.isolation === "none") {
      return [
        {
          files: [{ path: `${p.module}.py`, content: Buffer.from(ctx.program.source) }, { path: ".loopsmith/pytest.ini", content: Buffer.from(PYTEST_INI) }, ...p.tests.map(testFile(""))],
          // -c: our empty ini, so no configuration file of the solution's is read; --confcutdir: conftest.py
          // files are loaded from tests/ only (a program named conftest.py is never a plugin); explicit
          // paths: only the client's files are collected.
          command: ["python3", "-m", "pytest", "-c", "/work/.loopsmith/pytest.ini", "--rootdir=/work/tests", "--confcutdir=/work/tests", ...junitArgs, `--junitxml=/work/out/${JUNIT}`, ...collect],
          env: { PYTHONPATH: "/work" },
          timeoutMs: p.timeout_seconds * 1000,
        },
      ];
    }
    // The judge's directory holds the tests, the stand-in and pytest's entry; the program's side holds the
    // program and the server that answers for it. -I: nothing from the environment or a user site runs in
    // the judge; -B: no bytecode written (its directory is its own anyway).
    const judgeDir = JUDGE_DIR;
    return [
      {
        files: [
          { path: `${p.module}.py`, content: Buffer.from(ctx.program.source) },
          { path: ".loopsmith/loopsmith_server.py", content: Buffer.from(BRIDGE_SERVER_PY) },
          { path: ".loopsmith/loopsmith_wire.py", content: Buffer.from(BRIDGE_WIRE_PY) },
          { path: `${judgeDir}/loopsmith_judge.py`, content: Buffer.from(JUDGE_PYTEST_PY) },
          { path: `${judgeDir}/loopsmith_bridge.py`, content: Buffer.from(BRIDGE_CLIENT_PY) },
          { path: `${judgeDir}/loopsmith_wire.py`, content: Buffer.from(BRIDGE_WIRE_PY) },
          { path: `${judgeDir}/${p.module}.py`, content: Buffer.from(STAND_IN) },
          { path: `${judgeDir}/pytest.ini`, content: Buffer.from(PYTEST_INI) },
          ...p.tests.map(testFile(`${judgeDir}/`)),
        ],
        command: ["python3", ".loopsmith/loopsmith_server.py", p.module],
        judge: {
          dir: judgeDir,
          command: ["python3", "-I", "-B", "loopsmith_judge.py", "-c", "pytest.ini", "--rootdir=tests", "--confcutdir=tests", ...junitArgs, `--junitxml=out/${JUNIT}`, ...collect],
          env: { LOOPSMITH_MODULE: p.module, LOOPSMITH_CALL_TIMEOUT: String(p.call_timeout_seconds), HOME: `/work/${judgeDir}` },
        },
        timeoutMs: p.timeout_seconds * 1000,
      },
    ];
  },
  run(p, ctx): CheckResult {
    const raw = ctx.runs[0];
    if (raw === undefined) return notRun(p, ctx);
    if (raw.timedOut) return fail(`the test run hit its time limit of ${p.timeout_seconds} s`);
    if (raw.oomKilled) return fail("the test run ran out of memory");
    if (p.isolation === "process" && raw.judge === undefined) return fail("the tests' process did not run (no judge outcome came back)", raw);
    // With a judge, pytest's exit code and report are the judge's: the program's own run is only its server.
    const run: RunEvidence = raw.judge ? { ...raw, exitCode: raw.judge.exitCode, artifacts: raw.judge.files, artifactErrors: raw.judge.errors } : raw;
    const report = readJunit(run);
    if (!report.ok) return fail(`${report.message} (pytest exit code ${run.exitCode}${exitMeaning(run.exitCode)})`, run);
    const { cases } = report;
    const known = clientTestNames(p.tests, ctx.checkerFiles);
    const bad = cases.filter((c) => c.outcome !== "passed");
    // Only tests the client's files define count towards min_tests.
    const passed = cases.filter((c) => c.outcome === "passed" && locate(c.id, known).known).length;
    const counts = `${cases.length} test${cases.length === 1 ? "" : "s"}: ${passed} passed, ${count(cases, "failed")} failed, ${count(cases, "error")} errors, ${count(cases, "skipped")} skipped`;
    // With isolation none the report is written inside the solution's process, so its names and types
    // may be the solution's choice; in either mode a parametrised id can carry expected answers. So a model
    // sees a test's name only as the client's files spell it (parameters only in the note, at reveal full)
    // and an exception type only when it is one of Python's own (the rest is in the note, for the client).
    const findings: (Finding & { note: string })[] = bad.slice(0, p.max_findings).map((c) => {
      const at = locate(c.id, known);
      // A parametrised test's id carries its parameters, which often hold the expected answer
      // (test_price[3-1234.56]): they stay in the note, which a model sees only at reveal "full".
      return {
        where: `${at.where} ${c.outcome}`,
        ...(c.type ? { actual: safeExceptionName(c.type) } : {}),
        note: clipText([`${c.id}${c.type ? ` (${c.type})` : ""}`, c.message ?? ""].filter(Boolean).join(": "), 1500),
      };
    });
    if (run.exitCode === 5 || cases.length === 0) return fail(`no tests were collected (pytest exit code ${run.exitCode}): every test must run`, run);
    if (bad.length === 0 && run.exitCode !== 0) return fail(`pytest exited ${run.exitCode}${exitMeaning(run.exitCode)} although its report lists ${counts}: the two disagree, so neither is trusted`, run);
    if (bad.length > 0 && run.exitCode === 0) return { ...fail(`pytest exited 0 although its report lists ${counts}: the two disagree, so neither is trusted`, run), findings };
    if (bad.length > 0) {
      // Each finding's note starts with the test's id, so its first line is never empty.
      return { passed: false, message: `${counts}; first: ${findings.slice(0, 3).map((f) => `${f.where}: ${clipText(f.note.replace(/\n[\s\S]*/, ""), 200)}`).join("; ")}`, publicMessage: counts, findings };
    }
    if (passed < p.min_tests) return fail(`${counts}; fewer than the required ${p.min_tests}`);
    return { passed: true, message: counts, publicMessage: counts };
  },
});

/** Test functions and classes the client's files define, by file stem. */
function clientTestNames(files: string[], checkerFiles: NamedFile[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const name of files) {
    // Stryker disable next-line OptionalChaining,StringLiteral: defensive; run() sees a run only when planning found every test file among the checker files
    const text = checkerFiles.find((f) => f.name === name)?.content.toString() ?? "";
    const names = new Set<string>();
    for (const m of text.matchAll(/^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)/gm)) names.add(m[1]!);
    // Stryker disable next-line Regex: equivalent in practice; a stem with ".py" inside also has a dot, which a JUnit classname reads as a separator, so it matches no classname either way
    out.set(name.replace(/\.py$/, ""), names);
  }
  return out;
}

/** A JUnit test id as the client's files name it ("test_x::TestY::test_z"), its parameters apart. */
function locate(id: string, known: Map<string, Set<string>>): { where: string; params?: string; known: boolean } {
  // readJunit writes every id as "<classname>::<name>".
  const [classname, rawName] = id.split("::") as [string, string];
  const bracket = rawName.indexOf("[");
  // Stryker disable next-line EqualityOperator: equivalent; a name that starts with "[" leaves an empty function name, which no client file defines, as the whole "[...]" is not one either
  const [name, params] = bracket >= 0 ? [rawName.slice(0, bracket), rawName.slice(bracket)] : [rawName, undefined];
  const parts = classname.split(".").filter((s) => s !== "tests");
  // Stryker disable next-line StringLiteral: equivalent; a classname of only "tests" leaves no stem, and no client file has the filler's stem either
  const stem = parts[0] ?? "";
  const names = known.get(stem);
  const classes = parts.slice(1);
  if (names && names.has(name) && classes.every((c) => names.has(c))) {
    return { where: [stem, ...classes, name].join("::"), ...(params ? { params } : {}), known: true };
  }
  return { where: "a test the client's files do not define", known: false };
}

/**
 * No run of the tests came back. The runner makes none after a program run that timed out or ran out of
 * memory, nor for a test file missing from the checker files; otherwise none was recorded (the goal's time
 * ran out before it, or the attempt's evidence could not be stored). Checker file names stay the client's.
 */
function notRun(p: z.infer<typeof params>, ctx: VerifyContext): CheckResult {
  const stopped = programRunStopped(ctx);
  if (stopped) return { passed: false, message: `the tests were not run: ${stopped}`, publicMessage: `the tests were not run: ${stopped}` };
  const missing = p.tests.filter((name) => !ctx.checkerFiles.some((f) => f.name === name));
  const why = missing.length > 0 ? `a test file is missing from the checker files (${missing.map((n) => JSON.stringify(n)).join(", ")})` : "no run of them was recorded (the goal's time ran out before them, or the attempt's evidence could not be stored)";
  return { passed: false, message: `the tests were not run: ${why}`, publicMessage: "the tests were not run" };
}

function fail(message: string, run?: RunEvidence): CheckResult {
  const lastErr = run?.stderr.split("\n").map((l) => l.trim()).filter(Boolean).at(-1);
  const m = lastErr ? `${message}; last stderr line: ${preview(lastErr, 300)}` : message;
  return { passed: false, message: m, publicMessage: message };
}

function count(cases: TestCase[], outcome: TestCase["outcome"]) {
  return cases.filter((c) => c.outcome === outcome).length;
}

function exitMeaning(code: number): string {
  return (
    { 1: " (tests failed)", 2: " (interrupted)", 3: " (pytest internal error)", 4: " (usage error)", 5: " (no tests collected)" } as Record<number, string>
  )[code] ?? "";
}
