// The test_suite family through the public API: the client's own pytest files, hidden, run in a fresh
// container against the program. Exit code and JUnit report must agree; no tests, skips and errors fail.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkedGoal } from "../../support/checked-goal";
import { startLoop, type Loop } from "../../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

const TESTS = `import pytest
from slugify_lib import slugify

def test_lowercases():
    assert slugify("Hello World") == "hello-world"

def test_strips_punctuation():
    assert slugify("Hello, World!") == "hello-world"

def test_collapses_separators():
    assert slugify("  a -- b  ") == "a-b"

@pytest.mark.parametrize("text", ["", "   ", "!!!"])
def test_empty(text):
    assert slugify(text) == ""
`;

const CORRECT = `import re

def slugify(text):
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)
`;

const goal = (program: string, filename = "slugify_lib.py") =>
  checkedGoal({
    objective: "Write slugify(text) in slugify_lib.py: lowercase words of letters and digits joined by single hyphens.",
    deliverable: null,
    checker_files: [{ name: "test_slugify.py", text: TESTS }],
    checks: [{ id: "test_suite", params: { tests: ["test_slugify.py"], module: "slugify_lib", min_tests: 6, timeout_seconds: 60 } }],
    program,
    filename,
  });

describe("a goal graded by the client's hidden pytest suite", () => {
  it("verifies the right program", async () => {
    const g = await loop.run(goal(CORRECT));
    expect(g.state, JSON.stringify(g.checks.map((c) => c.latest?.message))).toBe("verified");
    expect(g.checks.find((c) => c.id === "test_suite")!.latest!.message).toBe("6 tests: 6 passed, 0 failed, 0 errors, 0 skipped");
  });

  const wrong: [string, string, RegExp][] = [
    ["keeps punctuation", "def slugify(text):\n    return '-'.join(text.lower().split())\n", /failed/],
    ["exits 0 as soon as it is imported", "import os\nos._exit(0)\n", /solution.s process ended|no tests|errors/],
    ["skips every test from its module", "import pytest\npytest.skip('later', allow_module_level=True)\n", /no tests were collected|skipped/],
    ["raises at import", "raise ImportError('not written yet')\n", /error|no tests/],
    [
      "brings a conftest.py that passes everything (it is never loaded)",
      "import pytest\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_call(item):\n    pass\ndef slugify(text):\n    return text\n",
      /failed/,
    ],
  ];
  for (const [name, program, why] of wrong) {
    it(`never verifies a program that ${name}`, async () => {
      const g = await loop.run(goal(program, name.includes("conftest") ? "conftest.py" : "slugify_lib.py"));
      expect(g.state).toBe("failed");
      const suite = g.checks.find((c) => c.id === "test_suite")!.latest!;
      expect(suite.passed).toBe(false);
      expect(suite.message).toMatch(why);
    });
  }

  it("under reveal input, the models learn which tests failed and how, never the test file's assertions", async () => {
    const g = await loop.run(goal("def slugify(text):\n    return '-'.join(text.lower().split())\n"));
    const suite = g.checks.find((c) => c.id === "test_suite")!.latest!;
    expect(suite.feedback).toContain("test_strips_punctuation failed");
    expect(suite.feedback).toContain("AssertionError");
    expect(suite.feedback).not.toContain('"hello-world"');
    expect(suite.findings.some((f) => (f.note ?? "").includes("hello-world"))).toBe(true);
  });
});

// Flake vs fail: `repeat` runs the suite k times on the same program, each time in fresh containers. A test
// whose result depends on the run (here, deterministically, on the repetition it is told it is) makes the
// check flaky: a failure, said as such to the client and the models, on the tape and in the failure report.
describe("repeat: flake vs fail", () => {
  const FLAKY_TESTS = `import os
from slugify_lib import slugify

def test_lowercases():
    assert slugify("Hello World") == "hello-world"

def test_depends_on_the_run():
    assert os.environ.get("LOOPSMITH_REPETITION") != "2"
`;
  const repeated = (tests: string, repeat: number, extra: Record<string, unknown> = {}, program = CORRECT) =>
    checkedGoal({
      objective: "Write slugify(text) in slugify_lib.py.",
      deliverable: null,
      checker_files: [{ name: "test_slugify.py", text: tests }],
      checks: [{ id: "test_suite", params: { tests: ["test_slugify.py"], module: "slugify_lib", min_tests: 1, timeout_seconds: 60, repeat, ...extra } }],
      program,
      filename: "slugify_lib.py",
    });
  const runsOnTape = (g: Awaited<ReturnType<Loop["run"]>>) =>
    (g.transitions.find((t) => t.from === "execute")!.detail as { check_runs: { runs: { repetition: number }[] }[] }).check_runs[0]!.runs.map((r) => r.repetition);

  it("a suite that passes every repetition verifies; one that disagrees with itself fails as flaky", async () => {
    const [stable, flaky] = await Promise.all([loop.run(repeated(TESTS, 2)), loop.run(repeated(FLAKY_TESTS, 3))]);
    expect(stable.state).toBe("verified");
    expect(stable.checks.find((c) => c.id === "test_suite")!.latest!.message).toBe("6 tests: 6 passed, 0 failed, 0 errors, 0 skipped (in each of 2 runs)");

    expect(flaky.state).toBe("failed");
    const latest = flaky.checks.find((c) => c.id === "test_suite")!.latest!;
    expect(latest.passed).toBe(false);
    expect(latest.flaky).toEqual({ runs: 3, passed: 2 });
    expect(latest.message).toMatch(/^flaky: the same program passed in 2 of 3 runs and failed in 1 /);
    expect(latest.feedback).toMatch(/^flaky: /);
    expect(flaky.failure_report!.failing_checks).toEqual([expect.objectContaining({ id: "test_suite", flaky: { runs: 3, passed: 2 } })]);
    // Every repetition's run is on the tape, numbered.
    expect(runsOnTape(flaky)).toEqual([1, 2, 3]);
    const inspect = flaky.transitions.find((t) => t.from === "inspect")!.detail as { checks: { id: string; flaky?: unknown }[] };
    expect(inspect.checks.find((c) => c.id === "test_suite")!.flaky).toEqual({ runs: 3, passed: 2 });
  });

  it("rerun_failed: a pass runs once; a failure runs once more, flaky when the rerun passes, failed twice when it does not", async () => {
    const FIRST_RUN_FAILS = FLAKY_TESTS.replace('!= "2"', '!= "1"');
    const wrong = "def slugify(text):\n    return text\n";
    const [passes, flaky, fails] = await Promise.all([
      loop.run(repeated(TESTS, 1, { rerun_failed: true })),
      loop.run(repeated(FIRST_RUN_FAILS, 1, { rerun_failed: true })),
      loop.run(repeated(TESTS, 1, { rerun_failed: true }, wrong)),
    ]);
    expect(passes.state).toBe("verified");
    expect(runsOnTape(passes)).toEqual([1]);
    expect(flaky.state).toBe("failed");
    expect(runsOnTape(flaky)).toEqual([1, 2]);
    expect(flaky.checks.find((c) => c.id === "test_suite")!.latest!.flaky).toEqual({ runs: 2, passed: 1 });
    expect(fails.state).toBe("failed");
    expect(runsOnTape(fails)).toEqual([1, 2]);
    const latest = fails.checks.find((c) => c.id === "test_suite")!.latest!;
    expect(latest.flaky).toBeUndefined();
    expect(latest.message).toMatch(/\(failed in each of 2 runs\)$/);
  });
});
