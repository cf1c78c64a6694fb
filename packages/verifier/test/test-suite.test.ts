// The test_suite check judged on crafted pytest evidence (exit code + JUnit XML), without services
// (issue 18): zero tests, min_tests at its edge, exit code and report disagreeing, forged test names,
// skips and errors, and what a hidden check shows a model. issue 26: with isolation "process" (the default)
// pytest runs in a judge process of its own, so its exit code and report are the judge's (run.judge); the
// program's run is only the server answering for it. Its real runs are in tests/e2e/checks/.
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { BRIDGE_CLIENT_PY, BRIDGE_SERVER_PY, BRIDGE_WIRE_PY, JUDGE_PYTEST_PY } from "../src/checks/bridge-py";
import { checkerFilesOf, listChecks, planCheckRuns, publicCheck, rerunsFailed, runChecks, validateCheckSpec, visibilityOf, type RunEvidence } from "../src/index";
import { check, emptyCtx, file } from "./support";

const PROGRAM = { filename: "analysis.py", source: "def add(a, b):\n    return a + b\n" };
const TESTS = file("test_solution.py", "from solution import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\nclass TestMore:\n    def test_neg(self):\n        assert add(-1, 1) == 0\n\n    async def test_zero(self):\n        assert add(0, 0) == 0\n\ndef test_param():\n    pass\n");
const CONFTEST = file("conftest.py", "import pytest\n");

type Case = { name: string; classname?: string; body?: string };
const passedCase = (name: string, classname = "tests.test_solution"): Case => ({ name, classname });
function junit(cases: Case[], wrap = true): string {
  const tcs = cases.map((c) => `<testcase classname="${c.classname ?? "tests.test_solution"}" name="${c.name}" time="0.001"${c.body ? `>${c.body}</testcase>` : " />"}`).join("");
  const suite = `<testsuite name="pytest" tests="${cases.length}">${tcs}</testsuite>`;
  return `<?xml version="1.0" encoding="utf-8"?>${wrap ? `<testsuites>${suite}</testsuites>` : suite}`;
}
/** The program's own run under isolation process: its server is killed when the judge ends. */
const SERVER_KILLED = 137;
/**
 * A run under isolation "process": pytest's exit code (`exitCode` here) and its report are the judge's; the
 * program's side exited SERVER_KILLED and returned nothing. The rest of `over` is the program's run.
 */
function evidence(report: string | null, over: Partial<RunEvidence> = {}): RunEvidence {
  const { exitCode = 0, ...program } = over;
  return {
    exitCode: SERVER_KILLED,
    timedOut: false,
    oomKilled: false,
    stdout: "",
    stderr: "",
    durationMs: 900,
    artifacts: [],
    artifactErrors: [],
    judge: { exitCode, files: report === null ? [] : [file("junit.xml", report)], errors: [] },
    ...program,
  };
}
/** A run under isolation "none": pytest ran in the program's own run. */
function plainEvidence(report: string | null, over: Partial<RunEvidence> = {}): RunEvidence {
  return { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 900, artifacts: report === null ? [] : [file("junit.xml", report)], artifactErrors: [], ...over };
}
function judge(runs: RunEvidence[], params: Record<string, unknown> = {}, over: Partial<CheckSpec> = {}) {
  const spec = { ...check("test_suite", { tests: ["test_solution.py"], ...params }), ...over };
  const [o] = runChecks([spec], emptyCtx({ program: PROGRAM, checkerFiles: [TESTS, CONFTEST] }), () => runs);
  if (o === undefined) throw new Error("no outcome");
  return o;
}
const ALL = [passedCase("test_add"), passedCase("test_neg", "tests.test_solution.TestMore"), passedCase("test_zero", "tests.test_solution.TestMore")];
const failure = (message: string, text: string, type?: string) => `<failure message="${message}"${type ? ` type="${type}"` : ""}>${text}</failure>`;

describe("test_suite: the run request", () => {
  const ctx = { program: PROGRAM, checkerFiles: [TESTS, CONFTEST], inputs: [] };
  const PYTEST_ARGS = ["-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit2"];

  it("isolation process (the default): the program and its server on one side, the tests and a stand-in in the judge's directory", () => {
    const [req, ...rest] = planCheckRuns(check("test_suite", { tests: ["test_solution.py", "conftest.py"], module: "prog", timeout_seconds: 30 }), ctx);
    expect(rest).toEqual([]);
    const files = Object.fromEntries(req!.files.map((f) => [f.path, f.content.toString()]));
    expect(Object.keys(files)).toEqual([
      "prog.py",
      ".loopsmith/loopsmith_server.py",
      ".loopsmith/loopsmith_wire.py",
      ".judge/loopsmith_judge.py",
      ".judge/loopsmith_bridge.py",
      ".judge/loopsmith_wire.py",
      ".judge/prog.py",
      ".judge/pytest.ini",
      ".judge/tests/test_solution.py",
      ".judge/tests/conftest.py",
    ]);
    expect(files["prog.py"]).toBe(PROGRAM.source);
    expect(files[".loopsmith/loopsmith_server.py"]).toBe(BRIDGE_SERVER_PY);
    expect(files[".loopsmith/loopsmith_wire.py"]).toBe(BRIDGE_WIRE_PY);
    expect(files[".judge/loopsmith_judge.py"]).toBe(JUDGE_PYTEST_PY);
    expect(files[".judge/loopsmith_bridge.py"]).toBe(BRIDGE_CLIENT_PY);
    expect(files[".judge/loopsmith_wire.py"]).toBe(BRIDGE_WIRE_PY);
    expect(files[".judge/pytest.ini"]).toBe("[pytest]\n");
    expect(files[".judge/tests/test_solution.py"]).toBe(TESTS.content.toString());
    expect(files[".judge/tests/conftest.py"]).toBe(CONFTEST.content.toString());
    // The module the tests import under the program's name is the stand-in, never the program.
    expect(files[".judge/prog.py"]).toMatch(/^# Stands in for the program[^\n]*\nimport loopsmith_bridge\nloopsmith_bridge\.install\(globals\(\)\)\n$/);
    // Hidden tests sit only in the judge's directory (its own, unreadable to the program); the program only outside it.
    for (const [path, text] of Object.entries(files)) {
      if (text === TESTS.content.toString() || text === CONFTEST.content.toString()) expect(path, path).toMatch(/^\.judge\/tests\//);
      if (text === PROGRAM.source) expect(path).toBe("prog.py");
    }
    expect(req!.command).toEqual(["python3", ".loopsmith/loopsmith_server.py", "prog"]);
    expect(req!.judge).toEqual({
      dir: ".judge",
      command: ["python3", "-I", "-B", "loopsmith_judge.py", "-c", "pytest.ini", "--rootdir=tests", "--confcutdir=tests", ...PYTEST_ARGS, "--junitxml=out/junit.xml", "tests/test_solution.py"],
      env: { LOOPSMITH_MODULE: "prog", LOOPSMITH_CALL_TIMEOUT: "30", HOME: "/work/.judge" },
    });
    // Nothing of the judge's reaches the program's environment.
    expect(req!.env).toBeUndefined();
    expect(req!.timeoutMs).toBe(30_000);
  });

  it("isolation process: the stand-in takes the module's name, and call_timeout_seconds reaches the judge", () => {
    const [req] = planCheckRuns(check("test_suite", { tests: ["test_solution.py"], call_timeout_seconds: 7 }), ctx);
    expect(req!.files.map((f) => f.path)).toContain(".judge/solution.py");
    expect(req!.files.map((f) => f.path)).toContain("solution.py");
    expect(req!.command).toEqual(["python3", ".loopsmith/loopsmith_server.py", "solution"]);
    expect(req!.judge!.env).toEqual({ LOOPSMITH_MODULE: "solution", LOOPSMITH_CALL_TIMEOUT: "7", HOME: "/work/.judge" });
    expect(planCheckRuns(check("test_suite", { tests: ["test_solution.py"] }), ctx)[0]!.judge!.env!.LOOPSMITH_CALL_TIMEOUT).toBe("30");
  });

  it("isolation none: the former request, the program imported into pytest's process under our own ini", () => {
    const [req, ...rest] = planCheckRuns(check("test_suite", { tests: ["test_solution.py", "conftest.py"], module: "prog", timeout_seconds: 30, isolation: "none" }), ctx);
    expect(rest).toEqual([]);
    expect(req!.files.map((f) => f.path)).toEqual(["prog.py", ".loopsmith/pytest.ini", "tests/test_solution.py", "tests/conftest.py"]);
    expect(req!.files[0]!.content.toString()).toBe(PROGRAM.source);
    expect(req!.files[1]!.content.toString()).toBe("[pytest]\n");
    expect(req!.files[2]!.content).toEqual(TESTS.content);
    expect(req!.command).toEqual([
      "python3", "-m", "pytest", "-c", "/work/.loopsmith/pytest.ini", "--rootdir=/work/tests", "--confcutdir=/work/tests",
      "-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit2", "--junitxml=/work/out/junit.xml", "tests/test_solution.py",
    ]);
    expect(req!.env).toEqual({ PYTHONPATH: "/work" });
    expect(req!.judge).toBeUndefined();
    expect(req!.timeoutMs).toBe(30_000);
  });

  it("isolation and call_timeout_seconds: their values and bounds", () => {
    const valid = (params: Record<string, unknown>) => validateCheckSpec(check("test_suite", { tests: ["test_solution.py"], ...params }), { checkerFiles: ["test_solution.py"] }).ok;
    for (const ok of [{ isolation: "process" }, { isolation: "none" }, { call_timeout_seconds: 1 }, { call_timeout_seconds: 600 }]) expect(valid(ok), JSON.stringify(ok)).toBe(true);
    for (const bad of [{ isolation: "container" }, { isolation: "" }, { call_timeout_seconds: 0 }, { call_timeout_seconds: 601 }, { call_timeout_seconds: 1.5 }, { call_timeout_seconds: "5" }]) expect(valid(bad), JSON.stringify(bad)).toBe(false);
  });

  it("plans no run when a test file is missing from the checker files", () => {
    expect(planCheckRuns(check("test_suite", { tests: ["test_solution.py", "test_other.py"] }), { program: PROGRAM, checkerFiles: [TESTS], inputs: [] })).toEqual([]);
  });
});

describe("test_suite: judging the evidence", () => {
  it("passes when pytest exits 0 and the report lists only passes", () => {
    const o = judge([evidence(junit(ALL))]);
    expect(o).toMatchObject({ passed: true, message: "3 tests: 3 passed, 0 failed, 0 errors, 0 skipped" });
    expect(judge([evidence(junit(ALL, false))]).passed).toBe(true);
    expect(judge([evidence(junit([passedCase("test_add")]))]).message).toBe("1 test: 1 passed, 0 failed, 0 errors, 0 skipped");
  });

  it("min_tests: just enough passes, one fewer fails", () => {
    expect(judge([evidence(junit(ALL))], { min_tests: 3 }).passed).toBe(true);
    const o = judge([evidence(junit(ALL))], { min_tests: 4 });
    expect(o).toMatchObject({ passed: false, message: "3 tests: 3 passed, 0 failed, 0 errors, 0 skipped; fewer than the required 4" });
  });

  it("counts only tests the client's files define towards min_tests", () => {
    const forged = [passedCase("test_add"), passedCase("test_forged"), passedCase("test_add", "tests.other_file"), passedCase("test_neg", "tests.test_solution.TestFake")];
    const o = judge([evidence(junit(forged))], { min_tests: 2 });
    expect(o).toMatchObject({ passed: false, message: "4 tests: 1 passed, 0 failed, 0 errors, 0 skipped; fewer than the required 2" });
    expect(judge([evidence(junit([passedCase("test_param[1-2]"), passedCase("test_param[3-4]")]))], { min_tests: 2 }).passed).toBe(true);
    expect(judge([evidence(junit([passedCase("test_add", "test_solution")]))]).passed).toBe(true);
  });

  it("fails on a failed test, naming it as the client's files spell it", () => {
    const cases = [passedCase("test_add"), { name: "test_neg", classname: "tests.test_solution.TestMore", body: failure("assert -1 == 0", "def test_neg(self):\n&gt;  assert add(-1, 1) == 0\nE  assert -1 == 0\n\ntests/test_solution.py:8: AssertionError") }];
    const o = judge([evidence(junit(cases), { exitCode: 1 })], {}, { hidden: true });
    expect(o.passed).toBe(false);
    expect(o.message).toBe("2 tests: 1 passed, 1 failed, 0 errors, 0 skipped; first: test_solution::TestMore::test_neg failed: tests.test_solution.TestMore::test_neg (AssertionError): assert -1 == 0");
    expect(o.findings).toEqual([
      { where: "test_solution::TestMore::test_neg failed", actual: "AssertionError", note: "tests.test_solution.TestMore::test_neg (AssertionError): assert -1 == 0\ndef test_neg(self):\n>  assert add(-1, 1) == 0\nE  assert -1 == 0\n\ntests/test_solution.py:8: AssertionError" },
    ]);
    expect(o.feedback.split("\n")[0]).toBe("2 tests: 1 passed, 1 failed, 0 errors, 0 skipped");
  });

  it("keeps parameters in the note only, shows a failure's own type attribute, and hides types that are not Python's", () => {
    const cases = [
      { name: "test_param[secret-42]", body: failure("boom", "x", "Secret42Error") },
      { name: "test_add", body: failure("m", "tests/test_solution.py:4: ValueError") },
      { name: "test_forged", body: failure("m", "no type line") },
    ];
    const o = judge([evidence(junit(cases), { exitCode: 1 })]);
    expect(o.findings).toEqual([
      { where: "test_solution::test_param failed", actual: "an exception", note: "tests.test_solution::test_param[secret-42] (Secret42Error): boom\nx" },
      { where: "test_solution::test_add failed", actual: "ValueError", note: "tests.test_solution::test_add (ValueError): m\ntests/test_solution.py:4: ValueError" },
      { where: "a test the client's files do not define failed", note: "tests.test_solution::test_forged: m\nno type line" },
    ]);
  });

  it("fails on errors and skips, and counts each kind", () => {
    const cases = [passedCase("test_add"), { name: "test_neg", classname: "tests.test_solution.TestMore", body: '<error message="fixture \'db\' not found">E fixture</error>' }, { name: "test_zero", classname: "tests.test_solution.TestMore", body: '<skipped type="pytest.skip" message="not today" />' }];
    const o = judge([evidence(junit(cases), { exitCode: 1 })]);
    expect(o.passed).toBe(false);
    expect(o.message).toMatch(/^3 tests: 1 passed, 0 failed, 1 errors, 1 skipped; first: test_solution::TestMore::test_neg error: tests.test_solution.TestMore::test_neg: fixture 'db' not found; test_solution::TestMore::test_zero skipped: tests.test_solution.TestMore::test_zero: not today$/);
    const skippedOnly = judge([evidence(junit([passedCase("test_add"), { name: "test_param", body: '<skipped message="later" />' }]), { exitCode: 0 })]);
    expect(skippedOnly.passed).toBe(false);
    expect(skippedOnly.message).toMatch(/^pytest exited 0 although its report lists 2 tests: 1 passed, 0 failed, 0 errors, 1 skipped: the two disagree, so neither is trusted/);
    expect(skippedOnly.findings).toHaveLength(1);
  });

  it("bounds its findings by max_findings", () => {
    const cases = Array.from({ length: 12 }, (_, i) => ({ name: `test_f${i}`, body: failure("m", "t") }));
    expect(judge([evidence(junit(cases), { exitCode: 1 })]).findings).toHaveLength(10);
    expect(judge([evidence(junit(cases), { exitCode: 1 })], { max_findings: 2 }).findings).toHaveLength(2);
    expect(judge([evidence(junit(cases), { exitCode: 1 })]).message.split("; ").length).toBe(1 + 3);
  });

  it("distrusts a report that disagrees with pytest's exit code, either way", () => {
    const clean = judge([evidence(junit(ALL), { exitCode: 1, stderr: "warning\nINTERNALERROR> boom\n" })], {}, { hidden: true });
    expect(clean).toMatchObject({ passed: false, message: 'pytest exited 1 (tests failed) although its report lists 3 tests: 3 passed, 0 failed, 0 errors, 0 skipped: the two disagree, so neither is trusted; last stderr line: "INTERNALERROR> boom"' });
    expect(clean.feedback).toBe("pytest exited 1 (tests failed) although its report lists 3 tests: 3 passed, 0 failed, 0 errors, 0 skipped: the two disagree, so neither is trusted");
    const forged = judge([evidence(junit([passedCase("test_add"), { name: "test_param", body: failure("m", "t") }]), { exitCode: 0 })]);
    expect(forged.passed).toBe(false);
    expect(forged.message).toMatch(/^pytest exited 0 although its report lists 2 tests: 1 passed, 1 failed, 0 errors, 0 skipped: the two disagree/);
    expect(judge([evidence(junit(ALL), { exitCode: 2 })]).message).toMatch(/^pytest exited 2 \(interrupted\) although/);
    expect(judge([evidence(junit(ALL), { exitCode: 3 })]).message).toMatch(/^pytest exited 3 \(pytest internal error\) although/);
    expect(judge([evidence(junit(ALL), { exitCode: 4 })]).message).toMatch(/^pytest exited 4 \(usage error\) although/);
    expect(judge([evidence(junit(ALL), { exitCode: 9 })]).message).toMatch(/^pytest exited 9 although/);
  });

  it("fails when no tests were collected, whatever the exit code says", () => {
    const none = judge([evidence(junit([]), { exitCode: 0 })]);
    expect(none).toMatchObject({ passed: false, message: "no tests were collected (pytest exit code 0): every test must run" });
    expect(judge([evidence(junit(ALL), { exitCode: 5 })]).message).toBe("no tests were collected (pytest exit code 5): every test must run");
    expect(judge([evidence('<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="0"></testsuite></testsuites>')]).passed).toBe(false);
  });

  it("fails closed on a missing, broken or empty report", () => {
    const missing = judge([evidence(null, { exitCode: 4, stderr: "ERROR: usage\n" })], {}, { hidden: true });
    expect(missing).toMatchObject({ passed: false, message: 'pytest wrote no JUnit report (pytest exit code 4 (usage error)); last stderr line: "ERROR: usage"' });
    expect(missing.feedback).toBe("pytest wrote no JUnit report (pytest exit code 4 (usage error))");
    expect(judge([evidence("<testsuites", { exitCode: 0 })]).message).toMatch(/^the JUnit report is not valid XML \(.+\) \(pytest exit code 0\)$/);
    expect(judge([evidence("<report/>")]).message).toBe("the JUnit report has no testsuite (pytest exit code 0)");
    expect(judge([evidence(null, { exitCode: 5 })]).message).toBe("pytest wrote no JUnit report (pytest exit code 5 (no tests collected))");
    expect(judge([evidence(null, { exitCode: 1 })]).message).toBe("pytest wrote no JUnit report (pytest exit code 1 (tests failed))");
  });

  it("fails on a timeout or an OOM kill, even with a passing report", () => {
    expect(judge([evidence(junit(ALL), { timedOut: true })], { timeout_seconds: 7 })).toMatchObject({ passed: false, message: "the test run hit its time limit of 7 s" });
    expect(judge([evidence(junit(ALL), { oomKilled: true })])).toMatchObject({ passed: false, message: "the test run ran out of memory" });
  });

  it("fails closed without sandbox evidence", () => {
    const o = judge([], {}, { hidden: true });
    // issue 27: every test file is there and the program's run ended by itself, so no file is blamed.
    expect(o).toMatchObject({ passed: false, message: "the tests were not run: no run of them was recorded (the goal's time ran out before them, or the attempt's evidence could not be stored)", feedback: "the tests were not run" });
  });

  it("decodes character references in failure messages", () => {
    const o = judge([evidence(junit([{ name: "test_add", body: failure("line 1&#10;line 2&#x21;&#1114112;", "") }]), { exitCode: 1 })]);
    expect(o.findings![0]!.note).toBe("tests.test_solution::test_add: line 1\nline 2!&#1114112;");
  });
});

// issue 26: under isolation "process" the verdict is read from the judge's process only.
describe("test_suite: the judge's outcome (isolation process)", () => {
  it("reads pytest's exit code and report from the judge, whatever the program's own run exited", () => {
    for (const programExit of [SERVER_KILLED, 0, 1, -1]) expect(judge([evidence(junit(ALL), { exitCode: 0 })].map((r) => ({ ...r, exitCode: programExit }))).passed, String(programExit)).toBe(true);
    const failing = judge([{ ...evidence(junit(ALL), { exitCode: 1 }), exitCode: 0 }]);
    expect(failing.message).toBe("pytest exited 1 (tests failed) although its report lists 3 tests: 3 passed, 0 failed, 0 errors, 0 skipped: the two disagree, so neither is trusted");
  });

  it("ignores a report the program wrote in its own output", () => {
    // The program's out/ is its own to write: a passing junit.xml there proves nothing.
    const forged = [file("junit.xml", junit(ALL))];
    const noReport = judge([evidence(null, { exitCode: 1, artifacts: forged })]);
    expect(noReport).toMatchObject({ passed: false, message: "pytest wrote no JUnit report (pytest exit code 1 (tests failed))" });
    const failed = judge([evidence(junit([{ name: "test_add", body: failure("assert 2 == 3", "") }]), { exitCode: 1, artifacts: forged })]);
    expect(failed).toMatchObject({ passed: false, message: expect.stringMatching(/^1 test: 0 passed, 1 failed/) });
  });

  it("fails closed when the judge's outcome is missing", () => {
    const { judge: _gone, ...noJudge } = evidence(junit(ALL));
    const o = judge([{ ...noJudge, exitCode: 0, artifacts: [file("junit.xml", junit(ALL))], stderr: "server: bye\n" }], {}, { hidden: true });
    expect(o).toMatchObject({ passed: false, message: 'the tests\' process did not run (no judge outcome came back); last stderr line: "server: bye"' });
    expect(o.feedback).toBe("the tests' process did not run (no judge outcome came back)");
    // A timeout or an OOM kill is named as such, judge or not.
    expect(judge([{ ...noJudge, timedOut: true }], { timeout_seconds: 4 }).message).toBe("the test run hit its time limit of 4 s");
    expect(judge([{ ...noJudge, oomKilled: true }]).message).toBe("the test run ran out of memory");
  });

  it("a timeout or an OOM kill of the run fails even when the judge reported a pass", () => {
    expect(judge([evidence(junit(ALL), { timedOut: true })]).passed).toBe(false);
    expect(judge([evidence(junit(ALL), { oomKilled: true })]).passed).toBe(false);
  });
});

describe("test_suite: isolation none reads the program's own run", () => {
  const none = (runs: RunEvidence[], params: Record<string, unknown> = {}, over: Partial<CheckSpec> = {}) => judge(runs, { isolation: "none", ...params }, over);

  it("passes on exit 0 and a passing report, and needs no judge", () => {
    expect(none([plainEvidence(junit(ALL))])).toMatchObject({ passed: true, message: "3 tests: 3 passed, 0 failed, 0 errors, 0 skipped" });
    expect(none([plainEvidence(junit(ALL))], { min_tests: 4 }).message).toBe("3 tests: 3 passed, 0 failed, 0 errors, 0 skipped; fewer than the required 4");
  });

  it("fails on the run's own exit code, a failed test and a missing report", () => {
    expect(none([plainEvidence(junit(ALL), { exitCode: 1 })]).message).toMatch(/^pytest exited 1 \(tests failed\) although its report lists 3 tests/);
    expect(none([plainEvidence(junit([passedCase("test_add"), { name: "test_param", body: failure("m", "t") }]), { exitCode: 1 })]).message).toMatch(/^2 tests: 1 passed, 1 failed/);
    expect(none([plainEvidence(null, { exitCode: 5 })]).message).toBe("pytest wrote no JUnit report (pytest exit code 5 (no tests collected))");
    expect(none([plainEvidence(junit([]))]).message).toBe("no tests were collected (pytest exit code 0): every test must run");
    expect(none([plainEvidence(junit(ALL), { timedOut: true })], { timeout_seconds: 3 }).message).toBe("the test run hit its time limit of 3 s");
  });
});

// issue 26: a parametrised test's id often carries the expected answer (test_price[3-1234.56]).
describe("test_suite: a parametrised test's parameters reach a model only at reveal full", () => {
  const failed = [{ name: "test_param[1-2]", body: failure("assert 3 == 2", "tests/test_solution.py:14: AssertionError") }];
  const at = (reveal: "verdict" | "input" | "full") => judge([evidence(junit(failed), { exitCode: 1 })], {}, { hidden: true, reveal });

  it("input (the default) and verdict: the feedback names the test without its parameters", () => {
    for (const reveal of ["input", "verdict"] as const) {
      const o = at(reveal);
      expect(o.passed).toBe(false);
      expect(o.feedback, reveal).not.toContain("[1-2]");
      expect(o.feedback, reveal).toContain("test_solution::test_param failed");
    }
    expect(at("input").feedback).toBe("1 test: 0 passed, 1 failed, 0 errors, 0 skipped\n  - test_solution::test_param failed | got: AssertionError");
    expect(judge([evidence(junit(failed), { exitCode: 1 })]).feedback).not.toContain("[1-2]");
  });

  it("full: the note carries them", () => {
    const o = at("full");
    expect(o.feedback).toContain("tests.test_solution::test_param[1-2] (AssertionError): assert 3 == 2");
    expect(o.findings).toEqual([{ where: "test_solution::test_param failed", actual: "AssertionError", note: "tests.test_solution::test_param[1-2] (AssertionError): assert 3 == 2\ntests/test_solution.py:14: AssertionError" }]);
    // The client's own message always has them.
    expect(at("input").message).toContain("test_param[1-2]");
  });
});

// issue 18: what the first mutation run of checks-run let through.
describe("test_suite: the edges mutation testing found", () => {
  it("places the program as solution.py by default, and takes only an identifier as the module name", () => {
    const [req] = planCheckRuns(check("test_suite", { tests: ["test_solution.py"] }), { program: PROGRAM, checkerFiles: [TESTS], inputs: [] });
    expect(req!.files[0]!.path).toBe("solution.py");
    const valid = (module: string) => validateCheckSpec(check("test_suite", { tests: ["test_solution.py"], module }), { checkerFiles: ["test_solution.py"] }).ok;
    expect(valid("_mod9")).toBe(true);
    for (const bad of ["9mod", "mod-x", "a.b", ""]) expect(valid(bad), bad).toBe(false);
    // A program named for the runner would be the runner; one named sitecustomize runs before it.
    const shadows = ["pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "exceptiongroup", "tomli", "sitecustomize", "usercustomize"];
    for (const shadow of shadows) expect(valid(shadow), shadow).toBe(false);
    const refused = validateCheckSpec(check("test_suite", { tests: ["test_solution.py"], module: "pytest" }), { checkerFiles: ["test_solution.py"] });
    expect(refused.ok ? "" : JSON.stringify(refused)).toContain(`cannot be a module pytest needs or one Python runs at start-up (${shadows.join(", ")})`);
    for (const fine of ["pytest_helpers", "Pytest", "solution"]) expect(valid(fine), fine).toBe(true);
  });

  it("reads its tests from checker files, which makes it hidden; a model sees only module, min_tests, the time limits, the isolation, repeat and rerun_failed", () => {
    const spec = check("test_suite", { tests: ["test_solution.py"] });
    expect(visibilityOf(spec).hidden).toBe(true);
    expect(checkerFilesOf(spec)).toEqual(["test_solution.py"]);
    expect(publicCheck({ ...spec, hidden: true }).params).toEqual({ module: "solution", min_tests: 1, timeout_seconds: 120, isolation: "process", call_timeout_seconds: 30, repeat: 1, rerun_failed: false });
    expect(publicCheck({ ...check("test_suite", { tests: ["test_solution.py"], isolation: "none", call_timeout_seconds: 5 }), hidden: true }).params).toEqual({ module: "solution", min_tests: 1, timeout_seconds: 120, isolation: "none", call_timeout_seconds: 5, repeat: 1, rerun_failed: false });
    const entry = listChecks().find((c) => c.id === "test_suite")!;
    expect(entry.runsCode).toBe(true);
    expect(validateCheckSpec(check("test_suite", entry.example), { checkerFiles: ["test_solution.py"] }).ok).toBe(true);
  });

  it("a failure without a message is noted by its id alone", () => {
    const o = judge([evidence(junit([{ name: "test_add", body: '<failure type="AssertionError" />' }]), { exitCode: 1 })]);
    expect(o.findings).toEqual([{ where: "test_solution::test_add failed", actual: "AssertionError", note: "tests.test_solution::test_add (AssertionError)" }]);
    expect(o.message).toBe("1 test: 0 passed, 1 failed, 0 errors, 0 skipped; first: test_solution::test_add failed: tests.test_solution::test_add (AssertionError)");
  });

  it("knows only the names each file defines at the start of a line, whatever the checker files' order", () => {
    const file2 = file("test_two.py", "# def test_in_comment():\nx = 'def test_in_string'\nasync  def  test_spaced():\n    pass\n\tdef\ttest_tabbed(): pass\nclass  TestK:\n    pass\n");
    const names = (cases: Case[], checkerFiles = [CONFTEST, file2]) => {
      const spec = check("test_suite", { tests: ["test_two.py"], min_tests: 1 });
      const [o] = runChecks([spec], emptyCtx({ program: PROGRAM, checkerFiles }), () => [evidence(junit(cases))]);
      return o!;
    };
    for (const n of ["test_spaced", "test_tabbed"]) expect(names([passedCase(n, "tests.test_two")]).passed, n).toBe(true);
    expect(names([passedCase("test_spaced", "tests.test_two.TestK")]).passed).toBe(true);
    for (const n of ["test_in_comment", "test_in_string"]) expect(names([passedCase(n, "tests.test_two")]).message, n).toBe("1 test: 0 passed, 0 failed, 0 errors, 0 skipped; fewer than the required 1");
    // A classname with an empty dotted part is not one pytest writes for the client's files.
    expect(names([passedCase("test_spaced", "tests..test_two")]).passed).toBe(false);
    expect(names([passedCase("test_spaced", ".test_two")]).passed).toBe(false);
  });

  it("shows the last stderr line trimmed", () => {
    const o = judge([evidence(junit(ALL), { exitCode: 2, stderr: "warning\n   E   boom   \n  \n" })]);
    expect(o.message).toMatch(/; last stderr line: "E   boom"$/);
  });
});

// Flake vs fail: `repeat` runs the check's runs k times on the same program (fresh containers each time);
// it passes only if every repetition passes, and repetitions that disagree fail as flaky.
describe("test_suite: repeat", () => {
  const FAILED = junit([{ name: "test_add", body: failure("assert 4 == 3", "assert 4 == 3", "AssertionError") }, ...ALL.slice(1)]);
  const rep = (report: string, repetition: number, over: Partial<RunEvidence> = {}) => ({ ...evidence(report, over), repetition });

  it("plans the check's runs k times, each marked with its repetition", () => {
    const spec = check("test_suite", { tests: ["test_solution.py"], repeat: 3 });
    const runs = planCheckRuns(spec, { program: PROGRAM, checkerFiles: [TESTS, CONFTEST], inputs: [] });
    expect(runs.map((r) => r.repetition)).toEqual([0, 1, 2]);
    expect(runs.map((r) => r.env?.LOOPSMITH_REPETITION)).toEqual(["1", "2", "3"]);
    expect(new Set(runs.map((r) => JSON.stringify({ ...r, repetition: 0, env: { ...r.env, LOOPSMITH_REPETITION: "" } }))).size).toBe(1);
    const single = planCheckRuns(check("test_suite", { tests: ["test_solution.py"] }), { program: PROGRAM, checkerFiles: [TESTS, CONFTEST], inputs: [] });
    expect(single.map((r) => r.repetition)).toEqual([undefined]);
  });

  it("passes only when every repetition passes", () => {
    const o = judge([rep(junit(ALL), 0), rep(junit(ALL), 1), rep(junit(ALL), 2)], { repeat: 3 });
    expect(o).toMatchObject({ passed: true, message: "3 tests: 3 passed, 0 failed, 0 errors, 0 skipped (in each of 3 runs)" });
    expect(o.flaky).toBeUndefined();
  });

  it("repetitions that disagree fail as flaky, with the failing run's findings, and tell the models so", () => {
    const o = judge([rep(junit(ALL), 0), rep(FAILED, 1, { exitCode: 1 }), rep(junit(ALL), 2)], { repeat: 3 });
    expect(o.passed).toBe(false);
    expect(o.flaky).toEqual({ runs: 3, passed: 2 });
    expect(o.message).toMatch(/^flaky: the same program passed in 2 of 3 runs and failed in 1 .*; first failure: 3 tests: 2 passed, 1 failed/);
    expect(o.findings.map((f) => f.where)).toEqual(["test_solution::test_add failed"]);
    // Hidden (its tests are checker files): the models get the public verdict, which says flaky too.
    expect(o.hidden).toBe(true);
    expect(o.feedback).toMatch(/^flaky: the same program passed in 2 of 3 runs/);
    expect(o.feedback).not.toContain("assert 4 == 3");
  });

  it("failing every repetition is a plain failure, not a flaky one", () => {
    const o = judge([rep(FAILED, 0, { exitCode: 1 }), rep(FAILED, 1, { exitCode: 1 })], { repeat: 2 });
    expect(o).toMatchObject({ passed: false });
    expect(o.flaky).toBeUndefined();
    expect(o.message).toMatch(/\(failed in each of 2 runs\)$/);
  });

  it("a repetition that never ran (the goal's time ran out) makes the check not run, not flaky", () => {
    const o = judge([rep(junit(ALL), 0), rep(junit(ALL), 1)], { repeat: 3 });
    expect(o.passed).toBe(false);
    expect(o.flaky).toBeUndefined();
    expect(o.message).toMatch(/^the tests were not run/);
  });

  it("never passes on evidence without repetitions: a single passing run does not stand for three", () => {
    const o = judge([evidence(junit(ALL))], { repeat: 3 });
    expect(o.passed).toBe(false);
  });

  it("rerun_failed: one more run after a failure, planned on request; flaky when it passes, a double failure when it does not", () => {
    const ctx = { program: PROGRAM, checkerFiles: [TESTS, CONFTEST], inputs: [] };
    const spec = check("test_suite", { tests: ["test_solution.py"], rerun_failed: true });
    expect(planCheckRuns(spec, ctx).map((r) => [r.repetition, r.env?.LOOPSMITH_REPETITION])).toEqual([[0, "1"]]);
    expect(planCheckRuns(spec, ctx, { rerun: true }).map((r) => [r.repetition, r.env?.LOOPSMITH_REPETITION])).toEqual([[1, "2"]]);
    expect(planCheckRuns(check("test_suite", { tests: ["test_solution.py"] }), ctx, { rerun: true })).toEqual([]);
    expect(rerunsFailed(spec)).toBe(true);
    expect(rerunsFailed(check("test_suite", { tests: ["test_solution.py"] }))).toBe(false);
    expect(rerunsFailed(check("row_count", { artifact: "out.csv", min: 1 }))).toBe(false);

    const params = { rerun_failed: true };
    expect(judge([rep(junit(ALL), 0)], params)).toMatchObject({ passed: true, message: "3 tests: 3 passed, 0 failed, 0 errors, 0 skipped" });
    const first = judge([rep(FAILED, 0, { exitCode: 1 })], params);
    expect(first).toMatchObject({ passed: false });
    expect(first.flaky).toBeUndefined();
    const flaky = judge([rep(FAILED, 0, { exitCode: 1 }), rep(junit(ALL), 1)], params);
    expect(flaky).toMatchObject({ passed: false, flaky: { runs: 2, passed: 1 } });
    expect(flaky.message).toMatch(/^flaky: the same program passed in 1 of 2 runs/);
    const twice = judge([rep(FAILED, 0, { exitCode: 1 }), rep(FAILED, 1, { exitCode: 1 })], params);
    expect(twice.flaky).toBeUndefined();
    expect(twice.message).toMatch(/\(failed in each of 2 runs\)$/);
  });

  it("is a param of the checks that run code only", () => {
    expect(validateCheckSpec(check("row_count", { artifact: "out.csv", min: 1, repeat: 2 }))).toMatchObject({ ok: false });
    expect(validateCheckSpec(check("test_suite", { tests: ["test_solution.py"], repeat: 11 }), { checkerFiles: ["test_solution.py"] })).toMatchObject({ ok: false, issues: [{ path: ["params", "repeat"] }] });
    expect(validateCheckSpec(check("test_suite", { tests: ["test_solution.py"], repeat: 10 }), { checkerFiles: ["test_solution.py"] })).toEqual({ ok: true });
    expect(publicCheck(check("test_suite", { tests: ["test_solution.py"], repeat: 2 })).params).toMatchObject({ repeat: 2 });
  });
});
