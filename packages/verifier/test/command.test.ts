// The command check judged on crafted sandbox evidence, without services (issue 18; its real runs are in
// tests/e2e/checks/command.test.ts): for each preset, correct evidence passes and plausible wrong evidence
// fails (asserted on `passed`), the run request it plans, the locked and runner-configuration files, the
// output clipping, the findings bound, the param validation, and the JUnit reader it shares with test_suite.
import { describe, expect, it } from "vitest";
import { command } from "../src/checks/command";
import { readJunit } from "../src/lib/junit";
import { planCheckRuns, runCheck, validateCheckSpec, type Language, type RunEvidence, type WorkspaceEvidence, type WorkspaceFile } from "../src/index";
import { check, emptyCtx, file } from "./support";

const PROGRAM = { filename: "src/sum.ts", source: "export const sum = (a: number, b: number) => a + b;\n" };

type Tc = { name: string; classname?: string; body?: string };
const tc = (c: Tc, classname: string) => `<testcase name="${c.name}" time="0.001" classname="${c.classname ?? classname}"${c.body ? `>${c.body}</testcase>` : "/>"}`;
/** A report as node's junit reporter writes it: top-level tests under <testsuites>, describe blocks as suites. */
function nodeReport(top: Tc[], suites: { name: string; cases: Tc[] }[] = []): string {
  const inner = suites.map((s) => `<testsuite name="${s.name}" time="0.01" tests="${s.cases.length}">${s.cases.map((c) => tc(c, "test")).join("\n")}</testsuite>`);
  return `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${[...top.map((c) => tc(c, "test")), ...inner].join("\n")}\n<!-- tests ${top.length} -->\n</testsuites>\n`;
}
/** A report as pytest (xunit2) writes it: one suite named "pytest". */
function pytestReport(cases: Tc[]): string {
  return `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="${cases.length}">${cases.map((c) => tc(c, "tests.test_calc")).join("")}</testsuite></testsuites>`;
}
const nodeFailure = (message: string) => `<failure type="testCodeFailure" message="${message}">[Error [ERR_TEST_FAILURE]: ${message}]</failure>`;
const pyFailure = (message: string) => `<failure message="${message}">def test_x():\nE   ${message}\n\ntests/test_calc.py:4: AssertionError</failure>`;

function evidence(report: string | null, over: Partial<RunEvidence> = {}): RunEvidence {
  return { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 700, artifacts: report === null ? [] : [file("junit.xml", report)], artifactErrors: [], ...over };
}

/** Through the runner's entry point, as INSPECT calls it. */
function judge(params: Record<string, unknown>, runs: RunEvidence[], workspace?: WorkspaceEvidence) {
  return runCheck(check("command", params), emptyCtx({ program: PROGRAM, ...(workspace ? { workspace } : {}) }), runs);
}
/** The check's own result (before the runner's 2,000-character message bound). */
function direct(params: Record<string, unknown>, runs: RunEvidence[], workspace?: WorkspaceEvidence) {
  return command.run(command.params.parse(params), emptyCtx({ program: PROGRAM, runs, ...(workspace ? { workspace } : {}) }));
}

// The three test runners, each with its own report format and label.
const RUNNERS = [
  { run: "node_test", label: "node --test", report: (cases: Tc[]) => nodeReport(cases), empty: nodeReport([], [{ name: "sum", cases: [] }]), failure: nodeFailure, id: (n: string) => `test::${n}` },
  { run: "npm_test", label: "npm test", report: (cases: Tc[]) => nodeReport(cases), empty: nodeReport([], [{ name: "sum", cases: [] }]), failure: nodeFailure, id: (n: string) => `test::${n}` },
  { run: "pytest", label: "pytest -q", report: pytestReport, empty: pytestReport([]), failure: pyFailure, id: (n: string) => `tests.test_calc::${n}` },
] as const;

describe("command: params", () => {
  const issues = (params: Record<string, unknown>) => {
    const v = validateCheckSpec(check("command", params));
    return v.ok ? [] : v.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it("each preset is valid with its defaults, and the defaults are what the description says", () => {
    for (const run of ["tsc", "node_test", "npm_test", "pytest"]) expect(issues({ run })).toEqual([]);
    expect(command.params.parse({ run: "tsc" })).toEqual({ run: "tsc", args: [], min_tests: 1, timeout_seconds: 120, max_output_chars: 4000, max_findings: 10 });
    expect(issues({ run: "bash" })).toHaveLength(1);
    expect(issues({})).toHaveLength(1);
    expect(issues({ run: "tsc", shell: true })).toHaveLength(1);
  });

  it("exec needs its command in args", () => {
    expect(issues({ run: "exec" })).toEqual(["params.args: exec needs the command in args"]);
    expect(issues({ run: "exec", args: [] })).toEqual(["params.args: exec needs the command in args"]);
    expect(issues({ run: "exec", args: ["python3", "main.py"] })).toEqual([]);
    // Another preset needs no args.
    expect(issues({ run: "pytest", args: [] })).toEqual([]);
    // Invalid params fail closed at run time too.
    expect(judge({ run: "exec" }, [evidence(null)]).passed).toBe(false);
  });

  it("refuses NUL bytes, empty and over-long arguments, and too many of them", () => {
    expect(issues({ run: "exec", args: ["python3", "a\0b"] })).toEqual(["params.args.1: no NUL bytes"]);
    expect(issues({ run: "tsc", args: [""] })).toHaveLength(1);
    expect(issues({ run: "tsc", args: ["x".repeat(1000)] })).toEqual([]);
    expect(issues({ run: "tsc", args: ["x".repeat(1001)] })).toHaveLength(1);
    expect(issues({ run: "tsc", args: Array.from({ length: 50 }, () => "a") })).toEqual([]);
    expect(issues({ run: "tsc", args: Array.from({ length: 51 }, () => "a") })).toHaveLength(1);
    expect(issues({ run: "tsc", args: "src" })).toHaveLength(1);
  });

  it.each([
    ["min_tests", 1, 100_000],
    ["timeout_seconds", 1, 600],
    ["max_output_chars", 200, 20_000],
    ["max_findings", 1, 50],
  ] as const)("%s: %d and %d are the bounds", (key, lo, hi) => {
    expect(issues({ run: "node_test", [key]: lo })).toEqual([]);
    expect(issues({ run: "node_test", [key]: hi })).toEqual([]);
    expect(issues({ run: "node_test", [key]: lo - 1 })).toHaveLength(1);
    expect(issues({ run: "node_test", [key]: hi + 1 })).toHaveLength(1);
    expect(issues({ run: "node_test", [key]: lo + 0.5 })).toHaveLength(1);
  });
});

describe("command: the run request", () => {
  const f = (path: string, content: string): WorkspaceFile => ({ path, content: Buffer.from(content) });
  const plan = (params: Record<string, unknown>, opts: { language?: Language; workspace?: { original: WorkspaceFile[]; attempt: WorkspaceFile[]; locked: string[] } } = {}) => {
    const reqs = planCheckRuns(check("command", params), { program: PROGRAM, checkerFiles: [], inputs: [], ...opts });
    expect(reqs).toHaveLength(1);
    return reqs[0]!;
  };
  const REPORTERS = ["--test-reporter=spec", "--test-reporter-destination=stdout", "--test-reporter=junit", "--test-reporter-destination=/work/out/junit.xml"];

  it("each preset's command, environment, image and time limit", () => {
    expect(plan({ run: "tsc", args: ["-p", "tsconfig.build.json"], timeout_seconds: 30 })).toMatchObject({
      command: ["tsc", "--noEmit", "--pretty", "false", "-p", "tsconfig.build.json"],
      env: {},
      runtime: "node",
      timeoutMs: 30_000,
    });
    expect(plan({ run: "node_test", args: ["test/sum.test.ts"] })).toMatchObject({
      command: ["node", "--import", "/opt/loopsmith/ts-register.mjs", "--test", ...REPORTERS, "test/sum.test.ts"],
      env: {},
      runtime: "node",
      timeoutMs: 120_000,
    });
    const npm = plan({ run: "npm_test" });
    expect(npm.command).toEqual(["npm", "test"]);
    expect(npm.runtime).toBe("node");
    expect(npm.env).toEqual({
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
      npm_config_cache: "/tmp/npm-cache",
      npm_config_logs_max: "0",
      NODE_OPTIONS: `--import=/opt/loopsmith/ts-register.mjs ${REPORTERS.join(" ")}`,
    });
    expect(plan({ run: "npm_test", args: ["--grep", "x"] }).command).toEqual(["npm", "test", "--", "--grep", "x"]);
    expect(plan({ run: "pytest", args: ["tests"] })).toMatchObject({
      command: ["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit2", "--junitxml=/work/out/junit.xml", "tests"],
      env: {},
      runtime: "python",
    });
  });

  it("exec runs args as they are, in the image of the goal's language", () => {
    expect(plan({ run: "exec", args: ["python3", "main.py"] })).toMatchObject({ command: ["python3", "main.py"], env: {}, runtime: "python" });
    expect(plan({ run: "exec", args: ["python3", "main.py"] }, { language: "python" }).runtime).toBe("python");
    expect(plan({ run: "exec", args: ["node", "main.js"] }, { language: "javascript" }).runtime).toBe("node");
    expect(plan({ run: "exec", args: ["node", "main.ts"] }, { language: "typescript" }).runtime).toBe("node");
    // The other presets keep their own image whatever the language.
    expect(plan({ run: "pytest" }, { language: "typescript" }).runtime).toBe("python");
    expect(plan({ run: "tsc" }, { language: "python" }).runtime).toBe("node");
  });

  it("without a workspace the files are the program alone", () => {
    const req = plan({ run: "tsc" });
    expect(req.files).toEqual([{ path: "src/sum.ts", content: Buffer.from(PROGRAM.source) }]);
  });

  it("places the attempt over the original with locked and runner-configuration files as the original has them", () => {
    const original = [f("package.json", '{"scripts":{"test":"node --test"}}'), f("src/sum.ts", "old"), f("test/sum.test.ts", "the client's test")];
    const attempt = [f("src/sum.ts", "new"), f("test/sum.test.ts", "gutted"), f("test/extra.test.ts", "added"), f("package.json", '{"scripts":{"test":"true"}}'), f("conftest.py", "x"), f("src/new.ts", "n")];
    const files = (run: string) => {
      const req = plan({ run, ...(run === "exec" ? { args: ["true"] } : {}) }, { workspace: { original, attempt, locked: ["test/"] } });
      return Object.fromEntries(req.files.map((x) => [x.path, x.content.toString()]));
    };
    expect(files("node_test")).toEqual({ "package.json": '{"scripts":{"test":"node --test"}}', "src/new.ts": "n", "src/sum.ts": "new", "test/sum.test.ts": "the client's test", "conftest.py": "x" });
    expect(files("pytest")).toEqual({ "package.json": '{"scripts":{"test":"true"}}', "src/new.ts": "n", "src/sum.ts": "new", "test/sum.test.ts": "the client's test" });
    expect(files("exec")).toEqual({ "package.json": '{"scripts":{"test":"true"}}', "src/new.ts": "n", "src/sum.ts": "new", "test/sum.test.ts": "the client's test", "conftest.py": "x" });
    expect(plan({ run: "tsc" }, { workspace: { original, attempt, locked: [] } }).files.map((x) => x.path)).toEqual(["conftest.py", "package.json", "src/new.ts", "src/sum.ts", "test/extra.test.ts", "test/sum.test.ts"]);
  });
});

describe("command: tsc and exec are judged by the exit code", () => {
  it("tsc: exit 0 passes; a type error fails and quotes tsc's output", () => {
    expect(judge({ run: "tsc" }, [evidence(null)])).toMatchObject({ passed: true, message: "tsc --noEmit exited 0" });
    const bad = judge({ run: "tsc" }, [evidence(null, { exitCode: 2, stdout: "src/sum.ts(2,3): error TS2322: Type 'string' is not assignable to type 'number'.\n" })]);
    expect(bad).toMatchObject({ passed: false, message: "tsc --noEmit exited 2\nsrc/sum.ts(2,3): error TS2322: Type 'string' is not assignable to type 'number'." });
    expect(bad.feedback).toBe(bad.message);
    // A JUnit report means nothing to tsc: the exit code alone decides.
    expect(judge({ run: "tsc" }, [evidence(nodeReport([{ name: "x", body: nodeFailure("m") }]))]).passed).toBe(true);
    expect(judge({ run: "tsc" }, [evidence(nodeReport([{ name: "x" }]), { exitCode: 1 })]).passed).toBe(false);
  });

  it("exec: exit 0 passes, anything else fails, and args are its label", () => {
    expect(judge({ run: "exec", args: ["python3", "check.py"] }, [evidence(null)])).toMatchObject({ passed: true, message: "python3 check.py exited 0" });
    expect(judge({ run: "exec", args: ["python3", "check.py"] }, [evidence(null, { exitCode: 1, stderr: "AssertionError\n" })])).toMatchObject({ passed: false, message: "python3 check.py exited 1\nAssertionError" });
    expect(judge({ run: "exec", args: ["false"] }, [evidence(null, { exitCode: -1 })]).passed).toBe(false);
  });

  it("a timeout or an OOM kill fails even when the command exited 0", () => {
    expect(judge({ run: "tsc", timeout_seconds: 9 }, [evidence(null, { timedOut: true })])).toMatchObject({ passed: false, message: "tsc --noEmit hit its time limit of 9 s\n(no output)" });
    expect(judge({ run: "exec", args: ["x"] }, [evidence(null, { oomKilled: true })])).toMatchObject({ passed: false, message: "x ran out of memory\n(no output)" });
  });

  it("fails closed when the command was not run", () => {
    expect(judge({ run: "tsc" }, [])).toMatchObject({ passed: false, message: "tsc --noEmit was not run" });
    expect(judge({ run: "node_test", args: ["test/a.test.ts"] }, [])).toMatchObject({ passed: false, message: "node --test test/a.test.ts was not run" });
  });

  it("labels are bounded", () => {
    const o = direct({ run: "exec", args: ["x".repeat(300)] }, [evidence(null)]);
    expect(o.message).toBe(`${"x".repeat(200)}… exited 0`);
  });
});

describe.each(RUNNERS)("command: $run judged on its JUnit report", ({ run, label, report, empty, failure, id }) => {
  const two = [{ name: "adds" }, { name: "adds negatives" }];

  it("passes when the command exits 0 and the report lists enough passing tests", () => {
    expect(judge({ run }, [evidence(report(two))])).toMatchObject({ passed: true, message: `${label}: 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped` });
    expect(judge({ run, min_tests: 2 }, [evidence(report(two))]).passed).toBe(true);
    expect(judge({ run }, [evidence(report([{ name: "adds" }]))])).toMatchObject({ passed: true, message: `${label}: 1 test: 1 passed, 0 failed, 0 errors, 0 skipped` });
  });

  it("fails on a non-zero exit with a failing test, naming the test", () => {
    const o = judge({ run }, [evidence(report([{ name: "adds" }, { name: "adds negatives", body: failure("expected -3, got -1") }]), { exitCode: 1, stdout: "not ok 2 - adds negatives\n" })]);
    expect(o.passed).toBe(false);
    expect(o.message).toBe(`${label}: 2 tests: 1 passed, 1 failed, 0 errors, 0 skipped (exit code 1); first: ${id("adds negatives")} failed: expected -3, got -1\nnot ok 2 - adds negatives`);
    expect(o.findings).toEqual([{ where: `${id("adds negatives")} failed`, ...(run === "pytest" ? { actual: "AssertionError" } : { actual: "testCodeFailure" }), note: expect.stringMatching(/^expected -3, got -1\n/) }]);
  });

  it("fails when it exits 0 but its report shows a failure, an error or a skip", () => {
    expect(judge({ run }, [evidence(report([{ name: "adds" }, { name: "b", body: failure("boom") }]))]).passed).toBe(false);
    const error = judge({ run }, [evidence(report([{ name: "adds" }, { name: "b", body: '<error message="fixture missing"/>' }]))]);
    expect(error.passed).toBe(false);
    expect(error.message).toMatch(new RegExp(`^${label}: 2 tests: 1 passed, 0 failed, 1 errors, 0 skipped \\(exit code 0\\); first: ${id("b")} error: fixture missing\n`));
    const skipped = judge({ run }, [evidence(report([{ name: "adds" }, { name: "b", body: '<skipped type="skipped" message="later"/>' }]))]);
    expect(skipped.passed).toBe(false);
    expect(skipped.message).toMatch(/1 passed, 0 failed, 0 errors, 1 skipped \(exit code 0\); first: .*b skipped: later/);
  });

  it("fails when the report holds fewer than min_tests tests", () => {
    const o = judge({ run, min_tests: 3 }, [evidence(report(two))]);
    expect(o).toMatchObject({ passed: false, message: `${label}: 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped; fewer than the required 3\n(no output)` });
  });

  it("fails when no tests ran, whatever the exit code", () => {
    expect(judge({ run }, [evidence(empty)])).toMatchObject({ passed: false, message: `${label}: no tests ran (exit code 0): every test must run\n(no output)` });
    expect(judge({ run }, [evidence(empty, { exitCode: 1 })]).message).toMatch(/no tests ran \(exit code 1\)/);
    // A report without any suite (node writes one for a run with no test files) fails too.
    expect(judge({ run }, [evidence("<testsuites>\n<!-- tests 0 -->\n</testsuites>")]).passed).toBe(false);
  });

  it("fails on a missing or unreadable report", () => {
    expect(judge({ run }, [evidence(null)])).toMatchObject({ passed: false, message: `${label} wrote no JUnit report (exit code 0)\n(no output)` });
    expect(judge({ run }, [evidence(null, { exitCode: 1, stderr: "Error: Cannot find module\n" })]).message).toBe(`${label} wrote no JUnit report (exit code 1)\nError: Cannot find module`);
    expect(judge({ run }, [evidence("<testsuites")]).message).toMatch(/^the JUnit report is not valid XML \(.+\) \(exit code 0\)\n\(no output\)$/);
    expect(judge({ run }, [evidence("<report/>")])).toMatchObject({ passed: false, message: "the JUnit report has no testsuite (exit code 0)\n(no output)" });
    // A report under another name is no report.
    expect(judge({ run }, [{ ...evidence(null), artifacts: [file("report.xml", report(two))] }]).passed).toBe(false);
  });

  it("distrusts a passing report when the command exited non-zero", () => {
    const o = judge({ run }, [evidence(report(two), { exitCode: 1 })]);
    expect(o).toMatchObject({ passed: false, message: `${label} exited 1 although its report lists 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped: the two disagree, so neither is trusted\n(no output)` });
  });

  it("a timeout or an OOM kill fails even with a passing report", () => {
    expect(judge({ run, timeout_seconds: 5 }, [evidence(report(two), { timedOut: true })])).toMatchObject({ passed: false, message: `${label} hit its time limit of 5 s\n(no output)` });
    expect(judge({ run }, [evidence(report(two), { oomKilled: true })])).toMatchObject({ passed: false, message: `${label} ran out of memory\n(no output)` });
  });

  it("bounds its findings by max_findings and quotes the first three", () => {
    const cases = Array.from({ length: 12 }, (_, i) => ({ name: `t${i}`, body: failure(`m${i}`) }));
    const o = judge({ run }, [evidence(report(cases), { exitCode: 1 })]);
    expect(o.passed).toBe(false);
    expect(o.findings).toHaveLength(10);
    expect(o.message).toContain(`first: ${id("t0")} failed: m0; ${id("t1")} failed: m1; ${id("t2")} failed: m2\n`);
    expect(judge({ run, max_findings: 2 }, [evidence(report(cases), { exitCode: 1 })]).findings).toHaveLength(2);
    expect(judge({ run, max_findings: 1 }, [evidence(report(cases), { exitCode: 1 })]).message).toContain(`first: ${id("t0")} failed: m0\n`);
  });
});

describe("command: node's reports", () => {
  it("a test file that ran no test of its own (an early exit) is no test", () => {
    const early = nodeReport([{ name: "/work/test/sum.test.ts" }]);
    expect(judge({ run: "node_test" }, [evidence(early)])).toMatchObject({ passed: false, message: "node --test: no tests ran (exit code 0): every test must run\n(no output)" });
    // Alongside real tests it is not counted.
    expect(judge({ run: "node_test", min_tests: 2 }, [evidence(nodeReport([{ name: "/work/test/a.test.ts" }, { name: "adds" }]))]).message).toMatch(/^node --test: 1 test: 1 passed.*fewer than the required 2/);
    // A failing file entry (it crashed) is a failure, not dropped.
    const crashed = judge({ run: "node_test" }, [evidence(nodeReport([{ name: "adds" }, { name: "/work/test/b.test.ts", body: nodeFailure("SyntaxError") }]), { exitCode: 1 })]);
    expect(crashed.passed).toBe(false);
    expect(crashed.message).toMatch(/^node --test: 2 tests: 1 passed, 1 failed/);
    // A test whose name merely contains /work/ counts.
    expect(judge({ run: "node_test" }, [evidence(nodeReport([{ name: "reads /work/data" }]))]).passed).toBe(true);
  });

  it("names tests inside describe blocks by their suite path", () => {
    const r = nodeReport([], [{ name: "sum", cases: [{ name: "adds", body: nodeFailure("3 !== 12") }] }]);
    const o = judge({ run: "node_test" }, [evidence(r, { exitCode: 1 })]);
    expect(o.findings![0]!.where).toBe("sum::adds failed");
  });
});

describe("command: locked and runner-configuration files", () => {
  const PASS = nodeReport([{ name: "adds" }]);
  const PY_PASS = pytestReport([{ name: "test_add" }]);
  const ws = (changed: string[], locked: string[] = []): WorkspaceEvidence => ({ changed, locked });

  it("an attempt that changed a locked file fails, even when the restored run passed", () => {
    const o = judge({ run: "node_test" }, [evidence(PASS)], ws(["src/sum.ts", "test/sum.test.ts"], ["test/"]));
    expect(o.passed).toBe(false);
    expect(o.message).toBe("the attempt changed locked files (test/sum.test.ts); they were restored from the original for this run, and an attempt that edits them is not accepted. With them restored: passed");
    expect(o.feedback.split("\n")[0]).toBe(o.message);
    expect(o.findings).toEqual([{ where: "test/sum.test.ts", note: "a locked file the attempt changed" }]);
    // Changing only unlocked files is fine; so is a workspace with nothing locked.
    expect(judge({ run: "node_test" }, [evidence(PASS)], ws(["src/sum.ts"], ["test/"])).passed).toBe(true);
    expect(judge({ run: "node_test" }, [evidence(PASS)], ws(["src/sum.ts", "tests2/a.ts"], ["tests"])).passed).toBe(true);
  });

  it("says how the restored run went when it failed too", () => {
    const o = judge({ run: "tsc" }, [evidence(null, { exitCode: 2, stdout: "error TS2322" })], ws(["tsconfig.json"]));
    expect(o).toMatchObject({ passed: false, message: expect.stringMatching(/\(tsconfig\.json\).*With them restored: tsc --noEmit exited 2\nerror TS2322$/s) });
    expect(judge({ run: "tsc" }, [], ws(["tsconfig.json"])).message).toMatch(/With them restored: tsc --noEmit was not run$/);
  });

  it("lists ten locked files and bounds the findings by max_findings", () => {
    const many = Array.from({ length: 12 }, (_, i) => `test/t${String(i).padStart(2, "0")}.test.ts`);
    const o = direct({ run: "node_test" }, [evidence(PASS)], ws(many, ["test"]));
    expect(o.passed).toBe(false);
    expect(o.message).toContain(`(${many.slice(0, 10).join(", ")}, ...);`);
    expect(o.findings).toHaveLength(10);
    expect(direct({ run: "node_test", max_findings: 3 }, [evidence(PASS)], ws(many, ["test"])).findings!.map((x) => x.where)).toEqual(many.slice(0, 3));
    const ten = direct({ run: "node_test" }, [evidence(PASS)], ws(many.slice(0, 10), ["test"]));
    expect(ten.message).toContain(`(${many.slice(0, 10).join(", ")});`);
  });

  it.each([
    ["node_test", ["package.json", "sub/package.json", ".npmrc", "tsconfig.json", "tsconfig.build.json", "packages/a/tsconfig.json", "node_modules/chai/index.js", "node_modules", "test/node_modules/chai/index.js"]],
    ["npm_test", ["package.json", ".npmrc", "tsconfig.test.json", "node_modules/.bin/x"]],
    ["tsc", ["package.json", "tsconfig.json", "node_modules/@types/node/index.d.ts", "src/node_modules/x/index.d.ts"]],
    // .pytest.ini: pytest 7.2 reads it before pytest.ini (regression: an attempt could deselect the failing tests with it).
    ["pytest", ["conftest.py", "tests/conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "setup.cfg", "tox.ini", "tests/pytest.ini", "sitecustomize.py", "sitecustomize/__init__.py", "usercustomize.py",
      // Modules that shadow pytest (the working directory is first on sys.path) and plugin registrations.
      "pytest.py", "pytest/__init__.py", "_pytest/main.py", "py.py", "pluggy/__init__.py", "iniconfig.py", "evil-1.0.dist-info/entry_points.txt", "evil.egg-info/entry_points.txt",
      // Python imports a sourceless .pyc and an extension module from sys.path too (checked: a lone pytest.pyc runs for `python3 -m pytest`).
      "pytest.pyc", "pluggy.cpython-311-x86_64-linux-gnu.so", "tomli.abi3.so", "packaging.pyc", "exceptiongroup/__init__.py"]],
  ] as const)("%s: a runner configuration file the attempt changed or added fails: %j", (run, paths) => {
    const good = run === "pytest" ? PY_PASS : PASS;
    for (const path of paths) {
      const o = judge({ run }, [evidence(good)], ws([path]));
      expect(o.passed, path).toBe(false);
      expect(o.message).toContain(`changed locked files (${path})`);
    }
  });

  it.each([
    ["node_test", ["conftest.py", "pytest.ini", "src/tsconfig.ts", "mytsconfig.json", "tsconfig.json.bak", "package.json.orig", "node_modules2/x.js", "src/my_node_modules.ts", "npmrc"]],
    ["pytest", ["package.json", "tsconfig.json", "node_modules/x.js", "test_conftest.py", "conftest.py.bak", "src/usercustomize.py.txt", "setup.py", "src/mysitecustomize.py", "pytest_helpers.py", "tests/pytest_util.py", "src/pluggy_notes.txt", "docs/info.dist-info.md", "p.pyy", "pkg.dist-info.bak", "src/pytest.pyc"]],
    ["exec", ["package.json", "conftest.py", "pytest.ini", "tsconfig.json", "node_modules/x.js"]],
  ] as const)("%s: other files are the attempt's to change: %j", (run, paths) => {
    const good = run === "pytest" ? PY_PASS : PASS;
    for (const path of paths) expect(judge({ run, ...(run === "exec" ? { args: ["true"] } : {}) }, [evidence(good)], ws([path])).passed, path).toBe(true);
  });
});

describe("command: the output a failure quotes", () => {
  const fail = (over: Partial<RunEvidence>, params: Record<string, unknown> = {}) => direct({ run: "exec", args: ["x"], ...params }, [evidence(null, { exitCode: 1, ...over })]).message;

  it("quotes stdout then stderr, trimmed at their ends", () => {
    expect(fail({ stdout: "out\n\n", stderr: "err  \n" })).toBe("x exited 1\nout\nerr");
    expect(fail({ stderr: "only err\n" })).toBe("x exited 1\nonly err");
    expect(fail({ stdout: "only out" })).toBe("x exited 1\nonly out");
    expect(fail({ stdout: "  \n", stderr: "\n" })).toBe("x exited 1\n(no output)");
  });

  it("keeps the end of long output, up to max_output_chars, and says how much it cut", () => {
    const out = `${"a".repeat(50)}${"b".repeat(200)}`;
    expect(fail({ stdout: out }, { max_output_chars: 200 })).toBe(`x exited 1\n[... 50 characters cut ...]\n${"b".repeat(200)}`);
    expect(fail({ stdout: "b".repeat(200) }, { max_output_chars: 200 })).toBe(`x exited 1\n${"b".repeat(200)}`);
    expect(fail({ stdout: "b".repeat(201) }, { max_output_chars: 200 })).toBe(`x exited 1\n[... 1 characters cut ...]\n${"b".repeat(200)}`);
    const dflt = fail({ stdout: "c".repeat(5000) });
    expect(dflt).toBe(`x exited 1\n[... 1000 characters cut ...]\n${"c".repeat(4000)}`);
  });

  it("bounds each finding's note", () => {
    const long = "n".repeat(2000);
    const o = direct({ run: "node_test" }, [evidence(nodeReport([{ name: "t", body: `<failure message="${long}"/>` }]), { exitCode: 1 })]);
    expect(o.findings![0]!.note).toBe(`${"n".repeat(1500)}…`);
    expect(o.message).toContain(`first: test::t failed: ${"n".repeat(200)}…\n`);
    // A failure without a message or type still names the test.
    const bare = direct({ run: "node_test" }, [evidence(nodeReport([{ name: "t", body: "<failure></failure>" }]), { exitCode: 1 })]);
    expect(bare.findings).toEqual([{ where: "test::t failed", note: "" }]);
    expect(bare.message).toContain("first: test::t failed: \n");
  });
});

describe("the JUnit reader", () => {
  const read = (xml: string) => readJunit(evidence(xml), "w");

  it("reads node's suites as paths and pytest's classnames as they are", () => {
    const node = read(nodeReport([{ name: "top" }], [{ name: "outer", cases: [{ name: "a" }] }]).replace("</testsuite>", '<testsuite name="inner"><testcase name="b" classname="test"/></testsuite></testsuite>'));
    expect(node).toEqual({ ok: true, cases: [{ id: "test::top", name: "top", outcome: "passed" }, { id: "outer::a", name: "a", outcome: "passed" }, { id: "outer > inner::b", name: "b", outcome: "passed" }] });
    const py = read(pytestReport([{ name: "test_a", classname: "tests.test_x.TestY" }]));
    expect(py).toEqual({ ok: true, cases: [{ id: "tests.test_x.TestY::test_a", name: "test_a", outcome: "passed" }] });
    // A suite whose cases carry their own classnames keeps them; a suite without a name adds nothing to the path.
    expect(read('<testsuites><testsuite name="x"><testcase classname="pkg.mod" name="t"/></testsuite></testsuites>')).toMatchObject({ cases: [{ id: "pkg.mod::t" }] });
    expect(read('<testsuites><testsuite><testcase classname="test" name="t"/></testsuite></testsuites>')).toMatchObject({ cases: [{ id: "test::t" }] });
    expect(read('<testsuites><testsuite name="s"><testcase name="t"/></testsuite></testsuites>')).toMatchObject({ cases: [{ id: "s::t" }] });
    expect(read("<testsuites><testsuite><testcase/></testsuite></testsuites>")).toMatchObject({ cases: [{ id: "::", name: "" }] });
    // pytest's suite keeps a root module's classname ("test", as in test.py) rather than adding "pytest".
    expect(read('<testsuites><testsuite name="pytest"><testcase classname="test" name="t"/></testsuite></testsuites>')).toMatchObject({ cases: [{ id: "test::t" }] });
    // A suite is a describe block only when none of its cases names another class.
    expect(read('<testsuites><testsuite name="s"><testcase classname="test" name="a"/><testcase classname="pkg.mod" name="b"/></testsuite></testsuites>')).toMatchObject({ cases: [{ id: "test::a" }, { id: "pkg.mod::b" }] });
  });

  it("reads a bare <testsuite> root and a <testsuites> holding test cases only", () => {
    expect(read('<testsuite name="pytest"><testcase classname="c" name="t"/></testsuite>')).toMatchObject({ ok: true, cases: [{ id: "c::t" }] });
    expect(read('<testsuites><testcase classname="test" name="t"/></testsuites>')).toMatchObject({ ok: true, cases: [{ id: "test::t" }] });
    expect(read("<testsuites></testsuites>")).toEqual({ ok: false, message: "the JUnit report has no testsuite" });
    expect(read('<testsuites name="x"/>')).toEqual({ ok: false, message: "the JUnit report has no testsuite" });
    // An empty suite reads as no tests (which the checks fail).
    expect(read("<testsuite/>")).toEqual({ ok: true, cases: [] });
    expect(readJunit(evidence(null))).toEqual({ ok: false, message: "pytest wrote no JUnit report" });
  });

  it("reads each outcome with its type and message", () => {
    const r = read(
      '<testsuites><testsuite name="pytest">' +
        '<testcase classname="c" name="f"><failure type="AssertionError" message="m1">text1</failure></testcase>' +
        '<testcase classname="c" name="e"><error message="m2">tests/test_x.py:9: KeyError</error></testcase>' +
        '<testcase classname="c" name="s"><skipped message="m3"/></testcase>' +
        '<testcase classname="c" name="p"><system-out>hi</system-out></testcase>' +
        '<testcase classname="c" name="both"><failure message="first"/><error message="second"/></testcase>' +
        '<testcase classname="c" name="blank"><failure message="">only text</failure></testcase>' +
        "</testsuite></testsuites>",
    );
    expect(r).toEqual({
      ok: true,
      cases: [
        { id: "c::f", name: "f", outcome: "failed", type: "AssertionError", message: "m1\ntext1" },
        { id: "c::e", name: "e", outcome: "error", type: "KeyError", message: "m2\ntests/test_x.py:9: KeyError" },
        { id: "c::s", name: "s", outcome: "skipped", message: "m3" },
        { id: "c::p", name: "p", outcome: "passed" },
        { id: "c::both", name: "both", outcome: "failed", message: "first" },
        { id: "c::blank", name: "blank", outcome: "failed", message: "only text" },
      ],
    });
  });

  it("takes an exception type from pytest's last line only when it is one", () => {
    const type = (text: string) => {
      const r = read(`<testsuites><testcase name="t"><failure message="m">${text}</failure></testcase></testsuites>`);
      return r.ok ? r.cases[0]!.type : "unreadable";
    };
    expect(type("x\ntests/t.py:4: AssertionError")).toBe("AssertionError");
    expect(type("tests/t.py:4: mod.sub.Error_2  \n")).toBe("mod.sub.Error_2");
    expect(type("tests/t.py:4: AssertionError then more")).toBeUndefined();
    expect(type("tests/t.py: AssertionError")).toBeUndefined();
    expect(type("tests/t.py:4: 9Error")).toBeUndefined();
    expect(type("tests/t.py:4:AssertionError")).toBeUndefined();
    expect(type("tests/test_long.py:1042: KeyError")).toBe("KeyError");
    expect(type("tests/t.py:4: AssertionError!!")).toBeUndefined();
  });

  it("a failure or error element without attributes or text is still a failure (it read as a pass)", () => {
    // Regression (issue 18): fast-xml-parser gives an empty element as "", which is falsy.
    const r = read('<testsuites><testcase name="f"><failure/></testcase><testcase name="e"><error></error></testcase><testcase name="s"><skipped/></testcase><testcase name="t"><failure>boom</failure></testcase></testsuites>');
    expect(r).toEqual({
      ok: true,
      cases: [
        { id: "::f", name: "f", outcome: "failed" },
        { id: "::e", name: "e", outcome: "error" },
        { id: "::s", name: "s", outcome: "skipped" },
        { id: "::t", name: "t", outcome: "failed", message: "boom" },
      ],
    });
    // So the command check fails a report that shows a failure, even when the command exited 0.
    expect(judge({ run: "node_test" }, [evidence(nodeReport([{ name: "adds" }, { name: "b", body: "<failure/>" }]))]).passed).toBe(false);
    expect(judge({ run: "pytest" }, [evidence(pytestReport([{ name: "test_a" }, { name: "test_b", body: "<skipped/>" }]))]).passed).toBe(false);
  });

  it("decodes character references in messages, leaving invalid ones", () => {
    // The parser drops references to control characters itself; what reaches the decoder arrives escaped.
    const r = read('<testsuites><testcase name="t"><failure message="a&#10;b&#x41;&#65;&#1114112;&#x10FFFF;">c&amp;d&amp;#0;&amp;#x0;</failure></testcase></testsuites>');
    expect(r.ok && r.cases[0]!.message).toBe("a\nbAA&#1114112;\u{10FFFF}\nc&d&#0;&#x0;");
  });

  it("reads nested suites to a depth of 32", () => {
    const nest = (depth: number) => `<testsuites>${"<testsuite>".repeat(depth)}<testcase name="deep"/>${"</testsuite>".repeat(depth)}</testsuites>`;
    expect(read(nest(32))).toMatchObject({ ok: true, cases: [{ name: "deep" }] });
    expect(read(nest(33))).toEqual({ ok: true, cases: [] });
  });
});
