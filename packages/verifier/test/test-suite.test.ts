// The test_suite check judged on crafted pytest evidence (exit code + JUnit XML), without services
// (issue 18): zero tests, min_tests at its edge, exit code and report disagreeing, forged test names,
// skips and errors, and what a hidden check shows a model.
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { checkerFilesOf, listChecks, planCheckRuns, publicCheck, runChecks, validateCheckSpec, visibilityOf, type RunEvidence } from "../src/index";
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
function evidence(report: string | null, over: Partial<RunEvidence> = {}): RunEvidence {
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
  it("runs only the client's files under our own ini, with the program as <module>.py", () => {
    const [req, ...rest] = planCheckRuns(check("test_suite", { tests: ["test_solution.py", "conftest.py"], module: "prog", timeout_seconds: 30 }), { program: PROGRAM, checkerFiles: [TESTS, CONFTEST], inputs: [] });
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
    expect(req!.timeoutMs).toBe(30_000);
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

  it("shows parameters as input, a failure's own type attribute, and hides types that are not Python's", () => {
    const cases = [
      { name: "test_param[secret-42]", body: failure("boom", "x", "Secret42Error") },
      { name: "test_add", body: failure("m", "tests/test_solution.py:4: ValueError") },
      { name: "test_forged", body: failure("m", "no type line") },
    ];
    const o = judge([evidence(junit(cases), { exitCode: 1 })]);
    expect(o.findings).toEqual([
      { where: "test_solution::test_param failed", input: "[secret-42]", actual: "an exception", note: "tests.test_solution::test_param[secret-42] (Secret42Error): boom\nx" },
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
    expect(o).toMatchObject({ passed: false, message: "the tests were not run (a test file is missing from the checker files)", feedback: "the tests were not run" });
  });

  it("decodes character references in failure messages", () => {
    const o = judge([evidence(junit([{ name: "test_add", body: failure("line 1&#10;line 2&#x21;&#1114112;", "") }]), { exitCode: 1 })]);
    expect(o.findings![0]!.note).toBe("tests.test_solution::test_add: line 1\nline 2!&#1114112;");
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

  it("reads its tests from checker files, which makes it hidden; a model sees only module, min_tests and the time limit", () => {
    const spec = check("test_suite", { tests: ["test_solution.py"] });
    expect(visibilityOf(spec).hidden).toBe(true);
    expect(checkerFilesOf(spec)).toEqual(["test_solution.py"]);
    expect(publicCheck({ ...spec, hidden: true }).params).toEqual({ module: "solution", min_tests: 1, timeout_seconds: 120 });
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
