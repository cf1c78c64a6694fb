// The command check judged on crafted sandbox evidence, without services (issue 18; its real runs are in
// tests/e2e/checks/command.test.ts): for each preset, correct evidence passes and plausible wrong evidence
// fails (asserted on `passed`), the run request it plans, the client's files, the output clipping, the
// findings bound, the param validation, and the JUnit reader it shares with test_suite. issue 26: the
// client's files are protected and the run isolated; node's runners are judged from what the observer saw,
// pytest from its report cross-checked with the observer, and a contradiction is a tamper verdict.
import { describe, expect, it } from "vitest";
import { command, junitIdOf } from "../src/checks/command";
import { COMMAND_EXEC_PY, COMMAND_NODE_FREEZE_MJS, COMMAND_NODE_OBSERVER_MJS, COMMAND_PYTEST_PY } from "../src/checks/command-harness";
import { readJunit } from "../src/lib/junit";
import { planCheckRuns, runCheck, TAMPER_FEEDBACK, validateCheckSpec, type Language, type RunEvidence, type WorkspaceEvidence, type WorkspaceFile } from "../src/index";
import { check, emptyCtx, file } from "./support";

const PROGRAM = { filename: "src/sum.ts", source: "export const sum = (a: number, b: number) => a + b;\n" };

/** The client's workspace the judging tests run over: one node test file, one pytest file. */
const ORIGINAL = ["package.json", "src/sum.ts", "test/sum.test.ts", "tests/test_calc.py"];
const WS: WorkspaceEvidence = { changed: [], locked: [], original: ORIGINAL };

type Outcome = "passed" | "failed" | "error" | "skipped";
/** One test as a runner ran it; `file` is relative to /work (each runner has its default). */
type Tc = { name: string; outcome?: Outcome; message?: string; type?: string; file?: string };
type Ev = Record<string, unknown>;
const lines = (events: Ev[]) => events.map((e) => `${JSON.stringify(e)}\n`).join("");

function run(over: Partial<RunEvidence> = {}): RunEvidence {
  return { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 700, artifacts: [], artifactErrors: [], ...over };
}
/** A bare run with a JUnit report (or none) among its artifacts. */
function junitEvidence(report: string | null, over: Partial<RunEvidence> = {}): RunEvidence {
  return run({ artifacts: report === null ? [] : [file("junit.xml", report)], ...over });
}

/** What the node observer writes for these tests (start, one event per test, finish). */
function nodeEvents(cases: Tc[], opts: { finish?: boolean } = {}): Ev[] {
  const tests = cases.map((c) => {
    const outcome = c.outcome ?? "passed";
    return {
      ev: "test",
      outcome,
      name: c.name,
      file: `/work/${c.file ?? "test/sum.test.ts"}`,
      nesting: 0,
      kind: "test",
      ...(outcome === "passed" || outcome === "skipped" ? {} : { error: { type: c.type ?? "AssertionError", message: c.message ?? "" } }),
    };
  });
  return [{ ev: "start" }, ...tests, ...(opts.finish === false ? [] : [{ ev: "finish" }])];
}
/** node --test: the observer's events on the run's channel. */
function nodeRun(cases: Tc[], over: Partial<RunEvidence> = {}, events = nodeEvents(cases)): RunEvidence {
  return run({ channel: { text: lines(events), clipped: false }, ...over });
}
/** npm test: the observer's events in out/loopsmith-observed.jsonl. */
function npmRun(cases: Tc[], over: Partial<RunEvidence> = {}, events = nodeEvents(cases)): RunEvidence {
  return run({ artifacts: [file("loopsmith-observed.jsonl", lines(events))], ...over });
}

const pyFile = (c: Tc) => c.file ?? "tests/test_calc.py";
const pyNodeId = (c: Tc) => `${pyFile(c)}::${c.name}`;
/** A report as pytest (xunit2) writes it: one suite named "pytest", classname the dotted file path. */
function pytestReport(cases: Tc[]): string {
  const body = (c: Tc) => {
    const m = c.message ?? "";
    switch (c.outcome ?? "passed") {
      case "failed":
        return `<failure message="${m}">def test_x():\nE   ${m}\n\ntests/test_calc.py:4: ${c.type ?? "AssertionError"}</failure>`;
      case "error":
        return `<error message="${m}">E   ${m}</error>`;
      case "skipped":
        return `<skipped type="pytest.skip" message="${m}"/>`;
      default:
        return "";
    }
  };
  const tcs = cases.map((c) => {
    const inner = body(c);
    return `<testcase classname="${pyFile(c).replace(/\.py$/, "").replace(/\//g, ".")}" name="${c.name}" time="0.001"${inner ? `>${inner}</testcase>` : "/>"}`;
  });
  return `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="${cases.length}">${tcs.join("")}</testsuite></testsuites>`;
}
/** What the pytest observer writes for these tests, consistent with their report and an exit status. */
function pytestEvents(cases: Tc[], exitstatus: number): Ev[] {
  const out: Ev[] = [{ ev: "collected", ids: cases.map(pyNodeId) }];
  for (const c of cases) {
    const id = pyNodeId(c);
    const outcome = c.outcome ?? "passed";
    if (outcome === "error") {
      out.push({ ev: "report", id, when: "setup", outcome: "failed" }, { ev: "report", id, when: "teardown", outcome: "passed" });
      continue;
    }
    if (outcome === "skipped") {
      out.push({ ev: "report", id, when: "setup", outcome: "skipped" }, { ev: "report", id, when: "teardown", outcome: "passed" });
      continue;
    }
    out.push({ ev: "report", id, when: "setup", outcome: "passed" }, { ev: "start", id });
    out.push(outcome === "passed" ? { ev: "returned", id } : { ev: "raised", id, type: c.type ?? "AssertionError" });
    out.push({ ev: "report", id, when: "call", outcome }, { ev: "report", id, when: "teardown", outcome: "passed" });
  }
  out.push({ ev: "finish", exitstatus });
  return out;
}
/** pytest under its harness: the JUnit report and, on the channel, the observer's events (consistent unless `events` says otherwise). */
function pytestRun(cases: Tc[], over: Partial<RunEvidence> = {}, events?: Ev[]): RunEvidence {
  const exitCode = over.exitCode ?? 0;
  return run({ artifacts: [file("junit.xml", pytestReport(cases))], channel: { text: lines(events ?? pytestEvents(cases, exitCode)), clipped: false }, ...over });
}

/** Through the runner's entry point, as INSPECT calls it; `null` runs it without a workspace. */
function judge(params: Record<string, unknown>, runs: RunEvidence[], workspace: WorkspaceEvidence | null = WS) {
  return runCheck(check("command", params), emptyCtx({ program: PROGRAM, ...(workspace ? { workspace } : {}) }), runs);
}
/** The check's own result (before the runner's 2,000-character message bound and its tamper rendering). */
function direct(params: Record<string, unknown>, runs: RunEvidence[], workspace: WorkspaceEvidence | null = WS) {
  return command.run(command.params.parse(params), emptyCtx({ program: PROGRAM, runs, ...(workspace ? { workspace } : {}) }));
}
/** A tamper verdict: failed, what was seen in the client's message, and nothing but TAMPER_FEEDBACK for a model. */
function expectTampered(o: ReturnType<typeof judge>, seen: string | RegExp) {
  expect(o.passed).toBe(false);
  expect(o.tampered).toEqual(typeof seen === "string" ? seen : expect.stringMatching(seen));
  expect(o.message.startsWith(`tampered: ${o.tampered}; `)).toBe(true);
  expect(o.feedback).toBe(TAMPER_FEEDBACK);
}

// The three test runners, each with its own evidence and label.
const RUNNERS = [
  { run: "node_test", label: "node --test", evidence: nodeRun, id: (n: string) => `test/sum.test.ts::${n}` },
  { run: "npm_test", label: "npm test", evidence: npmRun, id: (n: string) => `test/sum.test.ts::${n}` },
  { run: "pytest", label: "pytest -q", evidence: pytestRun, id: (n: string) => `tests.test_calc::${n}` },
] as const;

describe("command: params", () => {
  const issues = (params: Record<string, unknown>) => {
    const v = validateCheckSpec(check("command", params));
    return v.ok ? [] : v.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it("each preset is valid with its defaults, and the defaults are what the description says", () => {
    for (const run of ["tsc", "node_test", "npm_test", "pytest"]) expect(issues({ run })).toEqual([]);
    expect(command.params.parse({ run: "tsc" })).toEqual({ run: "tsc", args: [], min_tests: 1, timeout_seconds: 120, max_output_chars: 4000, max_findings: 10, repeat: 1, rerun_failed: false });
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
    expect(judge({ run: "exec" }, [run()]).passed).toBe(false);
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
  const contents = (req: { files: { path: string; content: Buffer }[] }) => Object.fromEntries(req.files.map((x) => [x.path, x.content.toString()]));
  const OBSERVER = "/work/.loopsmith-judge/loopsmith_observer.mjs";
  const FREEZE = "/work/.loopsmith-judge/loopsmith_freeze.mjs";
  const REPORTERS = ["--test-reporter=spec", "--test-reporter-destination=stdout", `--test-reporter=${OBSERVER}`, "--test-reporter-destination=stdout"];
  const PYTEST = [
    "python3", "-I", "-X", "pycache_prefix=/tmp/.loopsmith-pycache", "/work/.loopsmith-judge/loopsmith_pytest.py", "/work", "--rootdir=/work",
    "-q", "-p", "no:cacheprovider", "--import-mode=append", "-o", "junit_family=xunit2", "--junitxml=/work/out/junit.xml",
  ];
  // HOME, caches and module paths where the attempt cannot plant code (a .pth in the user site, a .npmrc, NODE_OPTIONS).
  const ISOLATED = {
    HOME: "/tmp/home",
    TMPDIR: "/tmp",
    XDG_CONFIG_HOME: "/tmp/xdg/config",
    XDG_CACHE_HOME: "/tmp/xdg/cache",
    XDG_DATA_HOME: "/tmp/xdg/data",
    NODE_OPTIONS: "",
    NODE_PATH: "",
    npm_config_userconfig: "/tmp/home/.npmrc",
  };
  const HARNESS = [".loopsmith-judge/loopsmith_pytest.py", ".loopsmith-judge/loopsmith_exec.py", ".loopsmith-judge/loopsmith_observer.mjs", ".loopsmith-judge/loopsmith_freeze.mjs"];

  it("each preset's command, environment, image, time limit, isolation and channel", () => {
    const tsc = plan({ run: "tsc", args: ["-p", "tsconfig.build.json"], timeout_seconds: 30 });
    expect(tsc).toMatchObject({ command: ["tsc", "--noEmit", "--pretty", "false", "-p", "tsconfig.build.json"], runtime: "node", timeoutMs: 30_000, isolate: true });
    expect(tsc.env).toEqual(ISOLATED);
    expect(tsc.channel).toBeUndefined();
    const node = plan({ run: "node_test", args: ["test/sum.test.ts"] });
    expect(node).toMatchObject({ command: ["node", "--import", FREEZE, "--import", "/opt/loopsmith/ts-register.mjs", "--test", ...REPORTERS, "test/sum.test.ts"], runtime: "node", timeoutMs: 120_000, isolate: true, channel: true });
    expect(node.env).toEqual(ISOLATED);
    const npm = plan({ run: "npm_test" });
    expect(npm).toMatchObject({ command: ["npm", "test"], runtime: "node", isolate: true });
    // Node does not pass the channel's descriptor through npm and its shell: the observer writes a file in out/.
    expect(npm.channel).toBeUndefined();
    expect(npm.env).toEqual({
      ...ISOLATED,
      npm_config_update_notifier: "false",
      npm_config_fund: "false",
      npm_config_audit: "false",
      npm_config_cache: "/tmp/npm-cache",
      npm_config_logs_max: "0",
      NODE_OPTIONS: `--import=${FREEZE} --import=/opt/loopsmith/ts-register.mjs ${REPORTERS.join(" ")}`,
      LOOPSMITH_OBSERVER_FILE: "/work/out/loopsmith-observed.jsonl",
    });
    expect(plan({ run: "npm_test", args: ["--grep", "x"] }).command).toEqual(["npm", "test", "--", "--grep", "x"]);
    const py = plan({ run: "pytest", args: ["tests"] });
    expect(py).toMatchObject({ command: [...PYTEST, "tests"], runtime: "python", isolate: true, channel: true });
    expect(py.env).toEqual(ISOLATED);
    const exec = plan({ run: "exec", args: ["bash", "check.sh"] });
    expect(exec).toMatchObject({ command: ["bash", "check.sh"], runtime: "python", isolate: true });
    expect(exec.env).toEqual(ISOLATED);
    expect(exec.channel).toBeUndefined();
  });

  it("exec runs args as they are, in the image of the goal's language", () => {
    expect(plan({ run: "exec", args: ["python3", "main.py"] })).toMatchObject({ command: ["python3", "main.py"], runtime: "python" });
    expect(plan({ run: "exec", args: ["python3", "main.py"] }, { language: "python" }).runtime).toBe("python");
    expect(plan({ run: "exec", args: ["node", "main.js"] }, { language: "javascript" }).runtime).toBe("node");
    expect(plan({ run: "exec", args: ["node", "main.ts"] }, { language: "typescript" }).runtime).toBe("node");
    // The other presets keep their own image whatever the language.
    expect(plan({ run: "pytest" }, { language: "typescript" }).runtime).toBe("python");
    expect(plan({ run: "tsc" }, { language: "python" }).runtime).toBe("node");
  });

  it("without a workspace the files are the program and the check's harness, the harness protected", () => {
    const req = plan({ run: "tsc" });
    expect(req.files.map((x) => x.path)).toEqual(["src/sum.ts", ...HARNESS]);
    expect(req.files[0]).toEqual({ path: "src/sum.ts", content: Buffer.from(PROGRAM.source) });
    expect(contents(req)).toMatchObject({
      ".loopsmith-judge/loopsmith_pytest.py": COMMAND_PYTEST_PY,
      ".loopsmith-judge/loopsmith_exec.py": COMMAND_EXEC_PY,
      ".loopsmith-judge/loopsmith_observer.mjs": COMMAND_NODE_OBSERVER_MJS,
      ".loopsmith-judge/loopsmith_freeze.mjs": COMMAND_NODE_FREEZE_MJS,
    });
    expect(req.protect).toEqual(HARNESS);
  });

  it("places the attempt over the original with the client's files as the original has them", () => {
    const original = [f("package.json", '{"scripts":{"test":"node --test"}}'), f("src/sum.ts", "old"), f("test/sum.test.ts", "the client's test")];
    const attempt = [f("src/sum.ts", "new"), f("test/sum.test.ts", "gutted"), f("test/extra.test.ts", "added"), f("package.json", '{"scripts":{"test":"true"}}'), f("conftest.py", "x"), f("src/new.ts", "n")];
    const files = (run: string, locked = ["test/"]) => {
      const req = plan({ run, ...(run === "exec" ? { args: ["true"] } : {}) }, { workspace: { original, attempt, locked } });
      expect(req.files.filter((x) => x.path.startsWith(".loopsmith-judge/")).map((x) => x.path), run).toEqual(HARNESS);
      return Object.fromEntries(req.files.filter((x) => !x.path.startsWith(".loopsmith-judge/")).map((x) => [x.path, x.content.toString()]));
    };
    expect(files("node_test")).toEqual({ "package.json": '{"scripts":{"test":"node --test"}}', "src/new.ts": "n", "src/sum.ts": "new", "test/sum.test.ts": "the client's test", "conftest.py": "x" });
    expect(files("pytest")).toEqual({ "package.json": '{"scripts":{"test":"true"}}', "src/new.ts": "n", "src/sum.ts": "new", "test/sum.test.ts": "the client's test" });
    expect(files("exec")).toEqual({ "package.json": '{"scripts":{"test":"true"}}', "src/new.ts": "n", "src/sum.ts": "new", "test/sum.test.ts": "the client's test", "conftest.py": "x" });
    // tsc: package.json configures it; the test files are not its to run, so they are the attempt's.
    expect(files("tsc", [])).toEqual({ "package.json": '{"scripts":{"test":"node --test"}}', "conftest.py": "x", "src/new.ts": "n", "src/sum.ts": "new", "test/extra.test.ts": "added", "test/sum.test.ts": "gutted" });
    // issue 26: the runner's own test files of the client's are restored even when nothing is locked; an added one is the attempt's.
    expect(files("node_test", [])).toMatchObject({ "test/sum.test.ts": "the client's test", "test/extra.test.ts": "added" });
  });

  it("lists the client's files and the harness in protect, never the attempt's", () => {
    const original = [f("package.json", "{}"), f("src/sum.ts", "old"), f("test/sum.test.ts", "t"), f("tests/test_calc.py", "p"), f("conftest.py", "c"), f("lib/locked.ts", "l"), f("check.py", "print(1)")];
    const attempt = [f("src/sum.ts", "new"), f("test/extra.test.ts", "added"), f("tests/test_more.py", "added")];
    const ws = { original, attempt, locked: ["lib/"] };
    expect(plan({ run: "node_test" }, { workspace: ws }).protect).toEqual(["lib/locked.ts", "package.json", "test/sum.test.ts", ...HARNESS]);
    expect(plan({ run: "npm_test" }, { workspace: ws }).protect).toEqual(["lib/locked.ts", "package.json", "test/sum.test.ts", ...HARNESS]);
    expect(plan({ run: "pytest" }, { workspace: ws }).protect).toEqual(["conftest.py", "lib/locked.ts", "tests/test_calc.py", ...HARNESS]);
    expect(plan({ run: "tsc" }, { workspace: ws }).protect).toEqual(["lib/locked.ts", "package.json", ...HARNESS]);
    expect(plan({ run: "exec", args: ["python3", "check.py"] }, { workspace: ws }).protect).toEqual(["check.py", "lib/locked.ts", ...HARNESS]);
    expect(plan({ run: "exec", args: ["bash", "-c", "true"] }, { workspace: ws }).protect).toEqual(["lib/locked.ts", ...HARNESS]);
  });

  it("the harness is the check's own: a file of the attempt's or the original's under .loopsmith-judge/ is never placed", () => {
    const original = [f("src/sum.ts", "old"), f(".loopsmith-judge/loopsmith_exec.py", "the original's")];
    const attempt = [f(".loopsmith-judge/loopsmith_pytest.py", "import os; os._exit(0)"), f(".loopsmith-judge/extra.py", "x")];
    const req = plan({ run: "pytest" }, { workspace: { original, attempt, locked: [] } });
    expect(req.files.map((x) => x.path)).toEqual(["src/sum.ts", ...HARNESS]);
    expect(contents(req)[".loopsmith-judge/loopsmith_pytest.py"]).toBe(COMMAND_PYTEST_PY);
    expect(contents(req)[".loopsmith-judge/loopsmith_exec.py"]).toBe(COMMAND_EXEC_PY);
  });

  describe("the test files named to the runner are the client's", () => {
    const original = ["tests/test_a.py", "tests/sub/test_b.py", "tests/helper.py", "test_top.py", "other/x_test.py", "other/notes.py", "test/sum.test.ts", "test/util.js", "src/a.spec.ts", "src/b-test.mjs", "src/test.cjs", "src/main.ts"].map((p) => f(p, p));
    const attempt = [f("tests/test_sneaky.py", "added"), f("test/sneaky.test.ts", "added")];
    const args = (run: string, a: string[] = []) => {
      const req = plan({ run, args: a }, { workspace: { original, attempt, locked: [] } });
      return run === "pytest" ? req.command.slice(PYTEST.length) : req.command.slice(6 + REPORTERS.length);
    };

    it("pytest: with no path argument every client test file (pytest's python_files patterns), never the attempt's", () => {
      expect(args("pytest")).toEqual(["other/x_test.py", "test_top.py", "tests/sub/test_b.py", "tests/test_a.py"]);
      expect(args("pytest", ["-x", "-k", "add"])).toEqual(["-x", "-k", "add", "other/x_test.py", "test_top.py", "tests/sub/test_b.py", "tests/test_a.py"]);
    });

    it("pytest: a directory stands for the client's test files under it; a file or a node id stays as given", () => {
      expect(args("pytest", ["tests"])).toEqual(["tests/sub/test_b.py", "tests/test_a.py"]);
      expect(args("pytest", ["./tests/", "-x"])).toEqual(["tests/sub/test_b.py", "tests/test_a.py", "-x"]);
      expect(args("pytest", ["."])).toEqual(["other/x_test.py", "test_top.py", "tests/sub/test_b.py", "tests/test_a.py"]);
      expect(args("pytest", ["tests/test_a.py::test_one", "test_top.py"])).toEqual(["tests/test_a.py::test_one", "test_top.py"]);
      // The client's helper module is a path it may name; the attempt's test file is not among the client's.
      expect(args("pytest", ["tests/helper.py"])).toEqual(["tests/helper.py"]);
      expect(args("pytest", ["tests/test_sneaky.py"])).toEqual(["tests/test_sneaky.py", "other/x_test.py", "test_top.py", "tests/sub/test_b.py", "tests/test_a.py"]);
    });

    it("node_test: node's default test file patterns and files under a test/ directory", () => {
      // src/a.spec.ts is no default pattern of node's; src/main.ts is no test; the attempt's test/sneaky.test.ts is not the client's.
      expect(args("node_test")).toEqual(["src/b-test.mjs", "src/test.cjs", "test/sum.test.ts", "test/util.js"]);
      expect(args("node_test", ["test"])).toEqual(["test/sum.test.ts", "test/util.js"]);
      expect(args("node_test", ["test/sum.test.ts"])).toEqual(["test/sum.test.ts"]);
    });

    it("npm_test: its script chooses the files; args pass through as they are", () => {
      expect(plan({ run: "npm_test", args: ["test"] }, { workspace: { original, attempt, locked: [] } }).command).toEqual(["npm", "test", "--", "test"]);
    });
  });

  describe("exec of a client's python script", () => {
    const original = [f("check.py", "assert True\n"), f("src/sum.ts", "old"), f("tools/run.py", "pass\n")];
    const ws = (attempt: WorkspaceFile[] = []) => ({ workspace: { original, attempt, locked: [] } });

    it("runs it under the end-of-script marker, isolated, with a channel", () => {
      const req = plan({ run: "exec", args: ["python3", "check.py", "--fast"] }, ws());
      expect(req).toMatchObject({ command: ["python3", "-I", "-X", "pycache_prefix=/tmp/.loopsmith-pycache", "/work/.loopsmith-judge/loopsmith_exec.py", "check.py", "--fast"], channel: true, isolate: true, runtime: "python" });
      for (const script of ["./check.py", "/work/check.py", "tools/run.py"]) expect(plan({ run: "exec", args: ["python", script] }, ws()).command.slice(4), script).toEqual(["/work/.loopsmith-judge/loopsmith_exec.py", script]);
    });

    it("anything else is run as it is: another interpreter, a script the client does not have, a module", () => {
      for (const args of [["node", "check.py"], ["python3", "main.py"], ["python3", "-m", "check"], ["python3"], ["python3", "src/sum.ts"]]) {
        const req = plan({ run: "exec", args }, ws());
        expect(req.command, args.join(" ")).toEqual(args);
        expect(req.channel).toBeUndefined();
      }
    });

    it("the script is the client's: the attempt's version of it is not placed", () => {
      const req = plan({ run: "exec", args: ["python3", "check.py"] }, ws([f("check.py", "import os\nos._exit(0)\n"), f("src/sum.ts", "new")]));
      expect(contents(req)).toMatchObject({ "check.py": "assert True\n", "src/sum.ts": "new" });
      expect(req.protect).toContain("check.py");
    });
  });
});

describe("command: tsc and exec are judged by the exit code", () => {
  it("tsc: exit 0 passes; a type error fails and quotes tsc's output", () => {
    expect(judge({ run: "tsc" }, [run()])).toMatchObject({ passed: true, message: "tsc --noEmit exited 0" });
    const bad = judge({ run: "tsc" }, [run({ exitCode: 2, stdout: "src/sum.ts(2,3): error TS2322: Type 'string' is not assignable to type 'number'.\n" })]);
    expect(bad).toMatchObject({ passed: false, message: "tsc --noEmit exited 2\nsrc/sum.ts(2,3): error TS2322: Type 'string' is not assignable to type 'number'." });
    expect(bad.feedback).toBe(bad.message);
    expect(bad.tampered).toBeUndefined();
    // A report or a channel means nothing to tsc: the exit code alone decides.
    expect(judge({ run: "tsc" }, [nodeRun([{ name: "x", outcome: "failed" }])]).passed).toBe(true);
    expect(judge({ run: "tsc" }, [junitEvidence("<testsuites", { channel: { text: "junk\n", clipped: false } })]).passed).toBe(true);
    expect(judge({ run: "tsc" }, [nodeRun([{ name: "x" }], { exitCode: 1 })]).passed).toBe(false);
  });

  it("exec: exit 0 passes, anything else fails, and args are its label", () => {
    expect(judge({ run: "exec", args: ["python3", "check.py"] }, [run()])).toMatchObject({ passed: true, message: "python3 check.py exited 0" });
    expect(judge({ run: "exec", args: ["python3", "check.py"] }, [run({ exitCode: 1, stderr: "AssertionError\n" })])).toMatchObject({ passed: false, message: "python3 check.py exited 1\nAssertionError" });
    expect(judge({ run: "exec", args: ["false"] }, [run({ exitCode: -1 })]).passed).toBe(false);
  });

  it("a timeout or an OOM kill fails even when the command exited 0", () => {
    expect(judge({ run: "tsc", timeout_seconds: 9 }, [run({ timedOut: true })])).toMatchObject({ passed: false, message: "tsc --noEmit hit its time limit of 9 s\n(no output)" });
    expect(judge({ run: "exec", args: ["x"] }, [run({ oomKilled: true })])).toMatchObject({ passed: false, message: "x ran out of memory\n(no output)" });
  });

  it("fails closed when the command was not run", () => {
    expect(judge({ run: "tsc" }, [])).toMatchObject({ passed: false, message: "tsc --noEmit was not run" });
    expect(judge({ run: "node_test", args: ["test/a.test.ts"] }, [])).toMatchObject({ passed: false, message: "node --test test/a.test.ts was not run" });
  });

  it("labels are bounded", () => {
    const o = direct({ run: "exec", args: ["x".repeat(300)] }, [run()]);
    expect(o.message).toBe(`${"x".repeat(200)}… exited 0`);
  });
});

// issue 26: `python3 <script>` where the script is the client's runs under a marker that reports how it ended.
describe("command: exec of a client's python script", () => {
  const SCRIPT_WS: WorkspaceEvidence = { changed: [], locked: [], original: ["check.py", "check.sh", "src/sum.ts"] };
  const params = { run: "exec", args: ["python3", "check.py"] };
  const withEnd = (exitCode: number, ...events: Ev[]) => run({ exitCode, channel: { text: lines(events), clipped: false } });
  const ex = (runs: RunEvidence[], p: Record<string, unknown> = params) => judge(p, runs, SCRIPT_WS);

  it("passes when the script returned, or exited 0 from a file of the client's", () => {
    expect(ex([withEnd(0, { ev: "end", how: "returned" })])).toMatchObject({ passed: true, message: "python3 check.py exited 0" });
    expect(ex([withEnd(0, { ev: "end", how: "exit", code: 0, client: true })]).passed).toBe(true);
    for (const script of ["./check.py", "/work/check.py"]) expect(ex([withEnd(0, { ev: "end", how: "returned" })], { run: "exec", args: ["python", script] }).passed, script).toBe(true);
  });

  it("exit 0 without the script's end is tampering (os._exit(0) before the asserts)", () => {
    expectTampered(ex([run()]), "the command exited 0 before check.py finished");
    expectTampered(ex([withEnd(0)]), "the command exited 0 before check.py finished");
    expectTampered(ex([withEnd(0, { ev: "start" })]), "the command exited 0 before check.py finished");
    // A line on the channel that is not the marker's JSON is as good as no end.
    expectTampered(ex([run({ channel: { text: `${lines([{ ev: "end", how: "returned" }])}ok\n`, clipped: false } })]), "the command exited 0 before check.py finished");
  });

  it("exit 0 by a SystemExit raised outside the client's files is tampering (sys.exit(0) from the attempt's code)", () => {
    expectTampered(ex([withEnd(0, { ev: "end", how: "exit", code: 0, client: false })]), "check.py was ended early, with status 0, by code that is not the client's");
    expectTampered(ex([withEnd(0, { ev: "end", how: "exit", code: 0 })]), "check.py was ended early, with status 0, by code that is not the client's");
    expectTampered(ex([withEnd(0, { ev: "end", how: "exit", code: 0, client: "yes" })]), /ended early/);
  });

  it("a non-zero exit fails as a failure, whatever the marker says", () => {
    for (const r of [run({ exitCode: 1, stderr: "AssertionError\n" }), withEnd(1, { ev: "end", how: "raised" }), withEnd(3, { ev: "end", how: "exit", code: 3, client: false })]) {
      const o = ex([r]);
      expect(o.passed).toBe(false);
      expect(o.tampered).toBeUndefined();
      expect(o.message).toMatch(/^python3 check\.py exited [13]\n/);
    }
  });

  it("anything that is not a client's python script is judged by its exit code alone", () => {
    expect(ex([run()], { run: "exec", args: ["bash", "check.sh"] })).toMatchObject({ passed: true, message: "bash check.sh exited 0" });
    expect(ex([run()], { run: "exec", args: ["python3", "main.py"] }).passed).toBe(true);
    expect(ex([run()], { run: "exec", args: ["python3", "-m", "check"] }).passed).toBe(true);
    // Without a workspace no file is the client's.
    expect(judge(params, [run()], null).passed).toBe(true);
  });
});

describe.each(RUNNERS)("command: $run judged on the tests that ran", ({ run: preset, label, evidence, id }) => {
  const two: Tc[] = [{ name: "adds" }, { name: "adds negatives" }];

  it("passes when the command exits 0 and enough of the client's tests passed", () => {
    expect(judge({ run: preset }, [evidence(two)])).toMatchObject({ passed: true, message: `${label}: 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped` });
    expect(judge({ run: preset, min_tests: 2 }, [evidence(two)]).passed).toBe(true);
    expect(judge({ run: preset }, [evidence([{ name: "adds" }])])).toMatchObject({ passed: true, message: `${label}: 1 test: 1 passed, 0 failed, 0 errors, 0 skipped` });
  });

  it("fails on a non-zero exit with a failing test, naming the test", () => {
    const o = judge({ run: preset }, [evidence([{ name: "adds" }, { name: "adds negatives", outcome: "failed", message: "expected -3, got -1" }], { exitCode: 1, stdout: "not ok 2 - adds negatives\n" })]);
    expect(o.passed).toBe(false);
    expect(o.tampered).toBeUndefined();
    expect(o.message).toBe(`${label}: 2 tests: 1 passed, 1 failed, 0 errors, 0 skipped (exit code 1); first: ${id("adds negatives")} failed: expected -3, got -1\nnot ok 2 - adds negatives`);
    expect(o.findings).toEqual([{ where: `${id("adds negatives")} failed`, actual: "AssertionError", note: expect.stringMatching(/^expected -3, got -1($|\n)/) }]);
  });

  it("fails when it exits 0 but a test failed, errored or was skipped", () => {
    expect(judge({ run: preset }, [evidence([{ name: "adds" }, { name: "b", outcome: "failed", message: "boom" }])]).passed).toBe(false);
    const error = judge({ run: preset }, [evidence([{ name: "adds" }, { name: "b", outcome: "error", message: "fixture missing" }])]);
    expect(error.passed).toBe(false);
    expect(error.message).toMatch(new RegExp(`^${label}: 2 tests: 1 passed, 0 failed, 1 errors, 0 skipped \\(exit code 0\\); first: ${id("b")} error: fixture missing\n`));
    const skipped = judge({ run: preset }, [evidence([{ name: "adds" }, { name: "b", outcome: "skipped", message: "later" }])]);
    expect(skipped.passed).toBe(false);
    expect(skipped.message).toMatch(/1 passed, 0 failed, 0 errors, 1 skipped \(exit code 0\); first: .*b skipped: /);
  });

  it("fails when fewer than min_tests tests passed", () => {
    const o = judge({ run: preset, min_tests: 3 }, [evidence(two)]);
    expect(o).toMatchObject({ passed: false, message: `${label}: 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped; fewer than the required 3\n(no output)` });
  });

  it("fails when no test of the client's ran, whatever the exit code", () => {
    expect(judge({ run: preset }, [evidence([])])).toMatchObject({ passed: false, message: `${label}: no tests of the client's ran (exit code 0): every test must run\n(no output)` });
    expect(judge({ run: preset }, [evidence([], { exitCode: 1 })]).message).toMatch(/no tests of the client's ran \(exit code 1\)/);
    // Without a workspace nothing is the client's.
    expect(judge({ run: preset }, [evidence(two)], null).message).toMatch(/no tests of the client's ran/);
  });

  it("counts only tests of the client's test files (an attempt's own test file proves nothing)", () => {
    const extra = preset === "pytest" ? "tests/test_extra.py" : "test/extra.test.ts";
    const mixed = judge({ run: preset }, [evidence([{ name: "adds" }, { name: "always", file: extra }, { name: "again", file: extra }])]);
    expect(mixed).toMatchObject({ passed: true, message: `${label}: 1 test: 1 passed, 0 failed, 0 errors, 0 skipped (and 2 tests outside the client's test files, not counted)` });
    expect(judge({ run: preset, min_tests: 2 }, [evidence([{ name: "adds" }, { name: "always", file: extra }])]).message).toMatch(/^[^:]+: 1 test: 1 passed.*\(and 1 test outside the client's test files, not counted\); fewer than the required 2/);
    const only = judge({ run: preset }, [evidence([{ name: "always", file: extra }])]);
    expect(only).toMatchObject({ passed: false, message: `${label}: no tests of the client's ran (exit code 0 (and 1 test outside the client's test files, not counted)): every test must run\n(no output)` });
  });

  it("distrusts passing tests when the command exited non-zero", () => {
    const o = judge({ run: preset }, [evidence(two, { exitCode: 1 })]);
    expect(o).toMatchObject({ passed: false, message: `${label} exited 1 although its report lists 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped: the two disagree, so neither is trusted\n(no output)` });
  });

  it("a timeout or an OOM kill fails even when the tests passed", () => {
    expect(judge({ run: preset, timeout_seconds: 5 }, [evidence(two, { timedOut: true })])).toMatchObject({ passed: false, message: `${label} hit its time limit of 5 s\n(no output)` });
    expect(judge({ run: preset }, [evidence(two, { oomKilled: true })])).toMatchObject({ passed: false, message: `${label} ran out of memory\n(no output)` });
  });

  it("bounds its findings by max_findings and quotes the first three", () => {
    const cases: Tc[] = Array.from({ length: 12 }, (_, i) => ({ name: `t${i}`, outcome: "failed", message: `m${i}` }));
    const o = judge({ run: preset }, [evidence(cases, { exitCode: 1 })]);
    expect(o.passed).toBe(false);
    expect(o.findings).toHaveLength(10);
    expect(o.message).toContain(`first: ${id("t0")} failed: m0; ${id("t1")} failed: m1; ${id("t2")} failed: m2\n`);
    expect(judge({ run: preset, max_findings: 2 }, [evidence(cases, { exitCode: 1 })]).findings).toHaveLength(2);
    expect(judge({ run: preset, max_findings: 1 }, [evidence(cases, { exitCode: 1 })]).message).toContain(`first: ${id("t0")} failed: m0\n`);
  });
});

// issue 26: node's runners are judged from what the observer saw in the runner's own process.
describe.each([
  { run: "node_test", label: "node --test", evidence: nodeRun, elsewhere: npmRun },
  { run: "npm_test", label: "npm test", evidence: npmRun, elsewhere: nodeRun },
] as const)("command: $run reads its observer's events", ({ run: preset, label, evidence, elsewhere }) => {
  const PASS: Tc[] = [{ name: "adds" }];

  it("from its own place only (node --test: the channel; npm test: out/loopsmith-observed.jsonl), never from a JUnit report", () => {
    expect(judge({ run: preset }, [evidence(PASS)]).passed).toBe(true);
    expect(judge({ run: preset }, [elsewhere(PASS)])).toMatchObject({ passed: false, message: `${label}: the test runner reported nothing (exit code 0)\n(no output)` });
    const junit = '<testsuites><testsuite name="t"><testcase name="adds" classname="test"/></testsuite></testsuites>';
    expect(judge({ run: preset }, [junitEvidence(junit)]).message).toBe(`${label}: the test runner reported nothing (exit code 0)\n(no output)`);
    expect(judge({ run: preset }, [evidence([], { exitCode: 1, stderr: "Error: Cannot find module\n" }, [])]).message).toBe(`${label}: the test runner reported nothing (exit code 1)\nError: Cannot find module`);
  });

  it("a line that is not the observer's JSON is tampering", () => {
    for (const junk of ["ok 1 - adds", "[1]", "null", '"start"', '{"ev":1}', '{"name":"adds"}', "{"]) {
      const events = nodeEvents(PASS);
      const text = `${lines(events.slice(0, 2))}${junk}\n${lines(events.slice(2))}`;
      const r = preset === "node_test" ? run({ channel: { text, clipped: false } }) : run({ artifacts: [file("loopsmith-observed.jsonl", text)] });
      expectTampered(judge({ run: preset }, [r]), "the test runner's report channel carried lines its reporter never writes");
    }
    // Empty lines are no lines.
    const spaced = `\n${lines(nodeEvents(PASS)).replace(/\n/g, "\n\n")}`;
    expect(judge({ run: preset }, [preset === "node_test" ? run({ channel: { text: spaced, clipped: false } }) : run({ artifacts: [file("loopsmith-observed.jsonl", spaced)] })]).passed).toBe(true);
  });

  it("exit 0 before each runner that started has finished is tampering; a failed run is only a failure", () => {
    expectTampered(judge({ run: preset }, [evidence(PASS, {}, nodeEvents(PASS, { finish: false }))]), "the test run exited 0 before its test runner finished");
    const twice = [...nodeEvents(PASS), ...nodeEvents([{ name: "adds negatives" }])];
    expect(judge({ run: preset }, [evidence(PASS, {}, twice)])).toMatchObject({ passed: true, message: `${label}: 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped` });
    expectTampered(judge({ run: preset }, [evidence(PASS, {}, twice.slice(0, -1))]), "the test run exited 0 before its test runner finished");
    const cut = judge({ run: preset }, [evidence(PASS, { exitCode: 1 }, nodeEvents(PASS, { finish: false }))]);
    expect(cut.tampered).toBeUndefined();
    expect(cut.message).toMatch(/exited 1 although its report lists 1 test/);
  });

  it("a test file that ran no test of its own (an early exit) is no test; one that failed is a failure", () => {
    const early: Ev[] = [{ ev: "start" }, { ev: "test", outcome: "passed", name: "/work/test/sum.test.ts", file: "/work/test/sum.test.ts", nesting: 0, kind: "test" }, { ev: "finish" }];
    expect(judge({ run: preset }, [evidence([], {}, early)])).toMatchObject({ passed: false, message: `${label}: no tests of the client's ran (exit code 0): every test must run\n(no output)` });
    // Alongside real tests it is not counted, not even as a test outside the client's files.
    expect(judge({ run: preset, min_tests: 2 }, [evidence([], {}, [...early.slice(0, 2), ...nodeEvents(PASS).slice(1)])]).message).toMatch(new RegExp(`^${label}: 1 test: 1 passed, 0 failed, 0 errors, 0 skipped; fewer than the required 2`));
    const crashed = judge({ run: preset }, [evidence([{ name: "adds" }, { name: "/work/test/sum.test.ts", outcome: "failed", message: "SyntaxError" }], { exitCode: 1 })]);
    expect(crashed.message).toMatch(new RegExp(`^${label}: 2 tests: 1 passed, 1 failed`));
    // A test whose name merely contains /work/ counts.
    expect(judge({ run: preset }, [evidence([{ name: "reads /work/data" }])]).passed).toBe(true);
  });

  it("names a test by its file and its own name; suites are no tests; an unknown outcome is an error", () => {
    const events: Ev[] = [
      { ev: "start" },
      { ev: "test", outcome: "failed", name: "adds", file: "/work/test/sum.test.ts", nesting: 1, kind: "test", error: { type: "AssertionError", message: "3 !== 12" } },
      { ev: "test", outcome: "failed", name: "sum", file: "/work/test/sum.test.ts", nesting: 0, kind: "suite", error: { type: "Error", message: "1 subtest failed" } },
      { ev: "test", outcome: "cancelled", name: "later", file: "/work/test/sum.test.ts", nesting: 1, kind: "test", error: { type: 7, message: ["x"] } },
      { ev: "finish" },
    ];
    const o = judge({ run: preset }, [evidence([], { exitCode: 1 }, events)]);
    expect(o.message).toMatch(new RegExp(`^${label}: 2 tests: 0 passed, 1 failed, 1 errors, 0 skipped`));
    expect(o.findings).toEqual([
      { where: "test/sum.test.ts::adds failed", actual: "AssertionError", note: "3 !== 12" },
      { where: "test/sum.test.ts::later error", note: "" },
    ]);
  });
});

// issue 26: pytest's JUnit report is written inside the process the attempt's code runs in; the observer's
// events on the channel (a pipe, not a file) are compared with it.
describe("command: pytest's report cross-checked with its observer", () => {
  const CASES: Tc[] = [{ name: "test_add" }, { name: "test_neg" }];
  const tampered = (events: Ev[], over: Partial<RunEvidence> = {}, cases = CASES) => judge({ run: "pytest" }, [pytestRun(cases, over, events)]);
  const honest = (cases = CASES, exitstatus = 0) => pytestEvents(cases, exitstatus);
  const without = (events: Ev[], drop: (e: Ev) => boolean) => events.filter((e) => !drop(e));

  it("the honest run passes: every passing test started, returned and was reported passed, and the session ended with the exit code", () => {
    expect(judge({ run: "pytest" }, [pytestRun(CASES)])).toMatchObject({ passed: true, message: "pytest -q: 2 tests: 2 passed, 0 failed, 0 errors, 0 skipped" });
    // Class members and parameters (with "::" and "/" inside) are matched as pytest's junitxml names them.
    const report = `<testsuites><testsuite name="pytest">${[
      '<testcase classname="tests.test_calc.TestY" name="test_a"/>',
      '<testcase classname="tests.test_calc" name="test_p[a::b]"/>',
      '<testcase classname="tests.test_calc" name="test_p[x/y.py-1]"/>',
    ].join("")}</testsuite></testsuites>`;
    const events = pytestEvents(["TestY::test_a", "test_p[a::b]", "test_p[x/y.py-1]"].map((name) => ({ name })), 0);
    const o = judge({ run: "pytest" }, [run({ artifacts: [file("junit.xml", report)], channel: { text: lines(events), clipped: false } })]);
    expect(o).toMatchObject({ passed: true, message: "pytest -q: 3 tests: 3 passed, 0 failed, 0 errors, 0 skipped" });
  });

  it("exit 0 without pytest's finish is tampering (the run was cut short), with or without a report", () => {
    expectTampered(tampered(without(honest(), (e) => e.ev === "finish")), "the test run exited 0 before pytest finished its session");
    expectTampered(tampered([]), "the test run exited 0 before pytest finished its session");
    expectTampered(judge({ run: "pytest" }, [run()]), "the test run exited 0 before pytest finished its session");
    expectTampered(judge({ run: "pytest" }, [junitEvidence("<testsuites", { channel: { text: "", clipped: false } })]), "the test run exited 0 before pytest finished its session");
    // A non-zero exit without a finish is a failed run, judged on what there is.
    const crashed = tampered(without(honest(CASES, 1), (e) => e.ev === "finish"), { exitCode: 1 });
    expect(crashed.tampered).toBeUndefined();
    expect(crashed.message).toMatch(/^pytest -q exited 1 although its report lists 2 tests/);
  });

  it("a session status other than the exit code is tampering", () => {
    expectTampered(tampered(honest(CASES, 1), { exitCode: 0 }), "pytest ended its session with status 1, but the process exited 0");
    expectTampered(tampered(honest(CASES, 0), { exitCode: 1 }), "pytest ended its session with status 0, but the process exited 1");
    // A status that is not the number itself is not the exit code either.
    expectTampered(tampered([...without(honest(), (e) => e.ev === "finish"), { ev: "finish", exitstatus: "0" }]), "pytest ended its session with status 0, but the process exited 0");
  });

  it("a test the report lists as passed that pytest never reported passing is tampering", () => {
    expectTampered(tampered(without(honest(), (e) => e.id === "tests/test_calc.py::test_neg" && e.when === "call")), "the report lists tests.test_calc::test_neg as passed, but pytest never ran it");
    const failedCall = honest().map((e) => (e.id === "tests/test_calc.py::test_neg" && e.when === "call" ? { ...e, outcome: "failed" } : e));
    expectTampered(tampered(failedCall), "the report lists tests.test_calc::test_neg as passed, but pytest reported it failed");
    // A report from setup is not the test's.
    const setupOnly = without(honest(), (e) => e.id === "tests/test_calc.py::test_neg" && e.when === "call");
    expect(setupOnly.some((e) => e.id === "tests/test_calc.py::test_neg" && e.when === "setup" && e.outcome === "passed")).toBe(true);
  });

  it("a test reported passed whose body never started is tampering", () => {
    expectTampered(tampered(without(honest(), (e) => e.ev === "start" && e.id === "tests/test_calc.py::test_add")), "tests.test_calc::test_add was reported as passed without its body running");
  });

  it("a test reported passed although its body raised is tampering", () => {
    const raised = honest().flatMap((e) => (e.ev === "returned" && e.id === "tests/test_calc.py::test_add" ? [{ ev: "raised", id: e.id, type: "AssertionError" }] : [e]));
    expectTampered(tampered(raised), "tests.test_calc::test_add's body raised AssertionError, but the test was reported as passed");
    const long = honest().flatMap((e) => (e.ev === "returned" && e.id === "tests/test_calc.py::test_add" ? [{ ev: "raised", id: e.id, type: "E".repeat(300) }] : [e]));
    expectTampered(tampered(long), `tests.test_calc::test_add's body raised ${"E".repeat(100)}…, but the test was reported as passed`);
  });

  it("a channel line that is not the observer's JSON is tampering", () => {
    for (const junk of ["PASSED", "[]", "42", '{"id":"x"}', '{"ev":null}', "{"]) {
      const events = honest();
      const text = `${lines(events.slice(0, 3))}${junk}\n${lines(events.slice(3))}`;
      expectTampered(judge({ run: "pytest" }, [run({ artifacts: [file("junit.xml", pytestReport(CASES))], channel: { text, clipped: false } })]), "the observer's channel carried lines the observer never writes");
    }
  });

  it("a model learns only that tampering was seen, whether the check is hidden or not", () => {
    const cut = without(honest(), (e) => e.ev === "finish");
    for (const hidden of [false, true]) {
      const o = runCheck({ ...check("command", { run: "pytest" }), hidden, reveal: "full" }, emptyCtx({ program: PROGRAM, workspace: WS }), [pytestRun(CASES, { stdout: "2 passed in 0.01s\n" }, cut)]);
      expect(o.feedback).toBe(TAMPER_FEEDBACK);
      for (const secret of ["pytest", "finish", "exited 0", "2 passed"]) expect(o.feedback, secret).not.toContain(secret);
      expect(o.message).toContain("2 passed in 0.01s");
    }
  });

  it("failing, erroring and skipped tests are judged, not taken for tampering", () => {
    const cases: Tc[] = [{ name: "test_add" }, { name: "test_neg", outcome: "failed", message: "assert 1 == 2" }, { name: "test_db", outcome: "error", message: "fixture 'db' not found" }, { name: "test_later", outcome: "skipped", message: "later" }];
    const o = judge({ run: "pytest" }, [pytestRun(cases, { exitCode: 1 })]);
    expect(o.tampered).toBeUndefined();
    expect(o.message).toMatch(/^pytest -q: 4 tests: 1 passed, 1 failed, 1 errors, 1 skipped \(exit code 1\)/);
  });

  it("a missing or unreadable report after pytest finished fails as such", () => {
    const finished = (artifacts: RunEvidence["artifacts"], exitCode = 0) => run({ exitCode, artifacts, channel: { text: lines(honest([], exitCode)), clipped: false } });
    expect(judge({ run: "pytest" }, [finished([])])).toMatchObject({ passed: false, message: "pytest -q wrote no JUnit report (exit code 0)\n(no output)" });
    expect(judge({ run: "pytest" }, [finished([file("junit.xml", "<testsuites")])]).message).toMatch(/^the JUnit report is not valid XML \(.+\) \(exit code 0\)\n\(no output\)$/);
    expect(judge({ run: "pytest" }, [finished([file("junit.xml", "<report/>")])])).toMatchObject({ passed: false, message: "the JUnit report has no testsuite (exit code 0)\n(no output)" });
    // A report under another name is no report.
    expect(judge({ run: "pytest" }, [finished([file("report.xml", pytestReport(CASES))])]).message).toBe("pytest -q wrote no JUnit report (exit code 0)\n(no output)");
    expect(judge({ run: "pytest" }, [run({ exitCode: 4, stderr: "ERROR: file or directory not found: tests\n" })]).message).toBe("pytest -q wrote no JUnit report (exit code 4)\nERROR: file or directory not found: tests");
  });
});

describe("junitIdOf: a node id as pytest's junitxml names it", () => {
  // Expected values printed by pytest's own _pytest.junitxml.mangle_test_address.
  it.each([
    ["tests/test_a.py::test_x", "tests.test_a::test_x"],
    ["tests/test_a.py::TestX::test_y[1]", "tests.test_a.TestX::test_y[1]"],
    ["test_a.py::test_x[a::b]", "test_a::test_x[a::b]"],
    ["tests/test_a.py::test_x[a/b.py]", "tests.test_a::test_x[a/b.py]"],
    ["pkg/sub/test_a.py::T::U::test", "pkg.sub.test_a.T.U::test"],
    ["tests/test_a.py::test_x[1][2]", "tests.test_a::test_x[1][2]"],
    ["tests/test_py.py::test_pyx[x.py]", "tests.test_py::test_pyx[x.py]"],
    ["tests/test_a.py::test_x[a::b/c.py-[d]]", "tests.test_a::test_x[a::b/c.py-[d]]"],
  ])("%s -> %s", (nodeid, junit) => {
    expect(junitIdOf(nodeid)).toBe(junit);
  });
});

describe("command: the client's files", () => {
  const PASS = nodeRun([{ name: "adds" }]);
  const PY_PASS = pytestRun([{ name: "test_add" }]);
  const ws = (changed: string[], locked: string[] = [], original = ORIGINAL): WorkspaceEvidence => ({ changed, locked, original });
  const list = (paths: string[]) => `(${paths.join(", ")})`;

  it("an attempt that changed a locked file is tampering, even when the restored run passed", () => {
    const o = judge({ run: "node_test" }, [PASS], ws(["src/sum.ts", "lib/util.ts"], ["lib/"]));
    expectTampered(o, "the attempt changed the client's files (lib/util.ts)");
    expect(o.message).toBe(
      "tampered: the attempt changed the client's files (lib/util.ts); the attempt changed files it may not change (lib/util.ts): the client's locked files, the runner's configuration and its test files; they were restored from the original for this run, and an attempt that edits them is not accepted. With them restored: passed",
    );
    expect(o.findings).toEqual([{ where: "lib/util.ts", note: "a file of the client's the attempt changed" }]);
    // The check's own result says so to the client too.
    expect(direct({ run: "node_test" }, [PASS], ws(["lib/util.ts"], ["lib/"]))).toMatchObject({ passed: false, tampered: "the attempt changed the client's files (lib/util.ts)", message: expect.stringMatching(/^the attempt changed files it may not change \(lib\/util\.ts\)/) });
    // Changing only other files is fine; so is a workspace with nothing locked.
    expect(judge({ run: "node_test" }, [PASS], ws(["src/sum.ts"], ["lib/"])).passed).toBe(true);
    expect(judge({ run: "node_test" }, [PASS], ws(["src/sum.ts", "tests2/a.ts"], ["tests"])).passed).toBe(true);
  });

  it("the runner's test files of the client's are its own, locked or not; a test file the attempt adds is not", () => {
    for (const [preset, path, good] of [["node_test", "test/sum.test.ts", PASS], ["npm_test", "test/sum.test.ts", npmRun([{ name: "adds" }])], ["pytest", "tests/test_calc.py", PY_PASS]] as const) {
      expectTampered(judge({ run: preset }, [good], ws([path])), `the attempt changed the client's files (${path})`);
      const added = preset === "pytest" ? "tests/test_new.py" : "test/new.test.ts";
      expect(judge({ run: preset }, [good], ws([added])).passed, `${preset} ${added}`).toBe(true);
    }
    // A test file is the client's only for the runner that runs it.
    expect(judge({ run: "pytest" }, [PY_PASS], ws(["test/sum.test.ts"])).passed).toBe(true);
    expect(judge({ run: "tsc" }, [run()], ws(["test/sum.test.ts", "tests/test_calc.py"])).passed).toBe(true);
  });

  it("exec's client script is the client's", () => {
    const original = [...ORIGINAL, "check.py"];
    const ended = run({ channel: { text: lines([{ ev: "end", how: "returned" }]), clipped: false } });
    expectTampered(judge({ run: "exec", args: ["python3", "check.py"] }, [ended], ws(["check.py"], [], original)), "the attempt changed the client's files (check.py)");
    // A script the client does not have is the attempt's.
    expect(judge({ run: "exec", args: ["python3", "main.py"] }, [run()], ws(["main.py"], [], original)).passed).toBe(true);
  });

  it("says how the restored run went when it failed too", () => {
    const o = judge({ run: "tsc" }, [run({ exitCode: 2, stdout: "error TS2322" })], ws(["tsconfig.json"]));
    expect(o).toMatchObject({ passed: false, message: expect.stringMatching(/\(tsconfig\.json\).*With them restored: tsc --noEmit exited 2\nerror TS2322$/s) });
    expect(judge({ run: "tsc" }, [], ws(["tsconfig.json"])).message).toMatch(/With them restored: tsc --noEmit was not run$/);
  });

  it("lists ten changed files and bounds the findings by max_findings", () => {
    const many = Array.from({ length: 12 }, (_, i) => `lib/t${String(i).padStart(2, "0")}.ts`);
    const o = direct({ run: "node_test" }, [PASS], ws(many, ["lib"]));
    expect(o.passed).toBe(false);
    expect(o.message).toContain(`(${many.slice(0, 10).join(", ")}, ...):`);
    expect(o.tampered).toBe(`the attempt changed the client's files (${many.slice(0, 10).join(", ")}, ...)`);
    expect(o.findings).toHaveLength(10);
    expect(direct({ run: "node_test", max_findings: 3 }, [PASS], ws(many, ["lib"])).findings!.map((x) => x.where)).toEqual(many.slice(0, 3));
    const ten = direct({ run: "node_test" }, [PASS], ws(many.slice(0, 10), ["lib"]));
    expect(ten.message).toContain(`${list(many.slice(0, 10))}:`);
  });

  it.each([
    ["node_test", ["package.json", "sub/package.json", ".npmrc", "tsconfig.json", "tsconfig.build.json", "packages/a/tsconfig.json", "node_modules/chai/index.js", "node_modules", "test/node_modules/chai/index.js"]],
    ["npm_test", ["package.json", ".npmrc", "tsconfig.test.json", "node_modules/.bin/x"]],
    ["tsc", ["package.json", "tsconfig.json", "node_modules/@types/node/index.d.ts", "src/node_modules/x/index.d.ts"]],
    // .pytest.ini: pytest 7.2 reads it before pytest.ini (regression: an attempt could deselect the failing tests with it).
    ["pytest", ["conftest.py", "tests/conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "setup.cfg", "tox.ini", "tests/pytest.ini", "sitecustomize.py", "sitecustomize/__init__.py", "usercustomize.py",
      // Modules that shadow pytest and plugin registrations.
      "pytest.py", "pytest/__init__.py", "_pytest/main.py", "py.py", "pluggy/__init__.py", "iniconfig.py", "evil-1.0.dist-info/entry_points.txt", "evil.egg-info/entry_points.txt", "Evil-1.0.DIST-INFO/entry_points.txt", "evil.Egg-Info/entry_points.txt",
      // Python imports a sourceless .pyc and an extension module from sys.path too (checked: a lone pytest.pyc runs for `python3 -m pytest`).
      "pytest.pyc", "pluggy.cpython-311-x86_64-linux-gnu.so", "tomli.abi3.so", "packaging.pyc", "exceptiongroup/__init__.py"]],
    // The check's own harness.
    ["exec", [".loopsmith-judge/loopsmith_exec.py", ".loopsmith-judge/new.py"]],
  ] as const)("%s: a runner configuration file the attempt changed or added is tampering: %j", (preset, paths) => {
    const good = preset === "pytest" ? PY_PASS : preset === "npm_test" ? npmRun([{ name: "adds" }]) : preset === "tsc" || preset === "exec" ? run() : PASS;
    for (const path of paths) {
      const o = judge({ run: preset, ...(preset === "exec" ? { args: ["true"] } : {}) }, [good], ws([path]));
      expect(o.passed, path).toBe(false);
      expect(o.tampered, path).toBe(`the attempt changed the client's files (${path})`);
      expect(o.message).toContain(`changed files it may not change (${path})`);
    }
  });

  it.each([
    ["node_test", ["conftest.py", "pytest.ini", "src/tsconfig.ts", "mytsconfig.json", "tsconfig.json.bak", "package.json.orig", "node_modules2/x.js", "src/my_node_modules.ts", "npmrc", "test/extra.test.ts"]],
    ["pytest", ["package.json", "tsconfig.json", "node_modules/x.js", "test_conftest.py", "conftest.py.bak", "src/usercustomize.py.txt", "setup.py", "src/mysitecustomize.py", "pytest_helpers.py", "tests/pytest_util.py", "src/pluggy_notes.txt", "docs/info.dist-info.md", "p.pyy", "pkg.dist-info.bak", "src/pytest.pyc", "tests/test_extra.py"]],
    ["exec", ["package.json", "conftest.py", "pytest.ini", "tsconfig.json", "node_modules/x.js", "test/sum.test.ts", "tests/test_calc.py", "loopsmith-judge/x.py"]],
  ] as const)("%s: other files are the attempt's to change: %j", (preset, paths) => {
    const good = preset === "pytest" ? PY_PASS : preset === "exec" ? run() : PASS;
    for (const path of paths) expect(judge({ run: preset, ...(preset === "exec" ? { args: ["true"] } : {}) }, [good], ws([path])).passed, path).toBe(true);
  });
});

describe("command: the output a failure quotes", () => {
  const fail = (over: Partial<RunEvidence>, params: Record<string, unknown> = {}) => direct({ run: "exec", args: ["x"], ...params }, [run({ exitCode: 1, ...over })]).message;

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
    const o = direct({ run: "node_test" }, [nodeRun([{ name: "t", outcome: "failed", message: long }], { exitCode: 1 })]);
    expect(o.findings![0]!.note).toBe(`${"n".repeat(1500)}…`);
    expect(o.message).toContain(`first: test/sum.test.ts::t failed: ${"n".repeat(200)}…\n`);
    // A failure without a message or type still names the test.
    const bare = direct({ run: "node_test" }, [nodeRun([], { exitCode: 1 }, [{ ev: "start" }, { ev: "test", outcome: "failed", name: "t", file: "/work/test/sum.test.ts", nesting: 0, kind: "test" }, { ev: "finish" }])]);
    expect(bare.findings).toEqual([{ where: "test/sum.test.ts::t failed", note: "" }]);
    expect(bare.message).toContain("first: test/sum.test.ts::t failed: \n");
  });
});

describe("the JUnit reader", () => {
  const read = (xml: string) => readJunit(junitEvidence(xml), "w");
  type Case = { name: string; classname?: string; body?: string };
  const tc = (c: Case, classname: string) => `<testcase name="${c.name}" time="0.001" classname="${c.classname ?? classname}"${c.body ? `>${c.body}</testcase>` : "/>"}`;
  /** A report as node's junit reporter writes it: top-level tests under <testsuites>, describe blocks as suites. */
  const nodeReport = (top: Case[], suites: { name: string; cases: Case[] }[] = []) => {
    const inner = suites.map((s) => `<testsuite name="${s.name}" time="0.01" tests="${s.cases.length}">${s.cases.map((c) => tc(c, "test")).join("\n")}</testsuite>`);
    return `<?xml version="1.0" encoding="utf-8"?>\n<testsuites>\n${[...top.map((c) => tc(c, "test")), ...inner].join("\n")}\n<!-- tests ${top.length} -->\n</testsuites>\n`;
  };
  const xunit2 = (cases: Case[]) => `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="${cases.length}">${cases.map((c) => tc(c, "tests.test_calc")).join("")}</testsuite></testsuites>`;

  it("reads node's suites as paths and pytest's classnames as they are", () => {
    const node = read(nodeReport([{ name: "top" }], [{ name: "outer", cases: [{ name: "a" }] }]).replace("</testsuite>", '<testsuite name="inner"><testcase name="b" classname="test"/></testsuite></testsuite>'));
    expect(node).toEqual({ ok: true, cases: [{ id: "test::top", name: "top", outcome: "passed" }, { id: "outer::a", name: "a", outcome: "passed" }, { id: "outer > inner::b", name: "b", outcome: "passed" }] });
    const py = read(xunit2([{ name: "test_a", classname: "tests.test_x.TestY" }]));
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
    expect(readJunit(junitEvidence(null))).toEqual({ ok: false, message: "pytest wrote no JUnit report" });
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
    const bare = (el: string) => [pytestRun([{ name: "test_a" }, { name: "test_b", outcome: "failed" }], { artifacts: [file("junit.xml", xunit2([{ name: "test_a" }, { name: "test_b", body: el }]))] })];
    expect(judge({ run: "pytest" }, bare("<failure/>")).message).toMatch(/^pytest -q: 2 tests: 1 passed, 1 failed/);
    expect(judge({ run: "pytest" }, bare("<skipped/>")).message).toMatch(/^pytest -q: 2 tests: 1 passed, 0 failed, 0 errors, 1 skipped/);
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

describe("command: repeat", () => {
  it("tampering seen in any repetition is tampering, whatever the others showed", () => {
    const honest = { ...pytestRun([{ name: "test_add" }]), repetition: 0 };
    expect(judge({ run: "pytest", repeat: 2 }, [honest, { ...honest, repetition: 1 }])).toMatchObject({ passed: true, message: "pytest -q: 1 test: 1 passed, 0 failed, 0 errors, 0 skipped (in each of 2 runs)" });
    const o = judge({ run: "pytest", repeat: 2 }, [honest, { ...run(), repetition: 1 }]);
    expectTampered(o, "the test run exited 0 before pytest finished its session");
    expect(o.flaky).toBeUndefined();
  });
});

describe("a run that replaced what it was given read-only", () => {
  // gVisor lets a rename replace a root's file in a sticky directory; the sandbox reports it
  // (RunResult.protectedReplaced) and the verdict is tampering, whatever the command's own outcome.
  it("is tampering even when every test passed, naming what was replaced; the same run without it passes", () => {
    const honest = pytestRun([{ name: "test_a" }, { name: "test_b" }]);
    expect(judge({ run: "pytest" }, [honest]).passed).toBe(true);
    const o = judge({ run: "pytest" }, [{ ...honest, protectedReplaced: ["tests/test_calc.py", "/tmp/home/.npmrc"] }]);
    expectTampered(o, 'the run replaced files it was given read-only: "tests/test_calc.py", "/tmp/home/.npmrc"');
    expect(judge({ run: "exec", args: ["true"] }, [run({ protectedReplaced: [".loopsmith-judge/loopsmith_exec.py"] })]).passed).toBe(false);
  });

  it("in any repetition fails the check", () => {
    const honest = nodeRun([{ name: "adds" }]);
    const runs = [0, 1, 2].map((repetition) => ({ ...honest, repetition, ...(repetition === 2 ? { protectedReplaced: ["test/sum.test.ts"] } : {}) }));
    expect(judge({ run: "node_test", repeat: 3 }, runs.map((r) => ({ ...r, protectedReplaced: undefined }))).passed).toBe(true);
    const o = judge({ run: "node_test", repeat: 3 }, runs);
    expect(o.passed).toBe(false);
    expect(o.tampered).toMatch(/test\/sum\.test\.ts/);
  });
});
