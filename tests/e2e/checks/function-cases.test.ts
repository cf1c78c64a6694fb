// The `cases` family through the public API: a function goal graded by hidden test cases, run in a
// container of their own and compared outside it. The right program is verified; wrong ones, and ones
// that try to fake a pass, never are.
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

// Integers exactly, also past 2^53, so the cases live in a checker file (request JSON numbers are doubles).
const CASES = JSON.stringify([
  { id: "zero", args: [0], expected: 0 },
  { id: "one", args: [1], expected: 1 },
  { id: "ten", args: [10], expected: 55 },
  { id: "ninety", args: [90], expected: 2880067194370816120 },
  { id: "big", args: [100], expected: 354224848179261915075 },
]).replace('"expected":2880067194370816000', '"expected":2880067194370816120').replace('"expected":354224848179261900000', '"expected":354224848179261915075');

const CORRECT = `def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a
`;

const goal = (program: string, extra: Record<string, unknown> = {}) =>
  checkedGoal({
    objective: "Write fib(n): the n-th Fibonacci number, fib(0) = 0, exact for large n.",
    deliverable: null,
    checker_files: [{ name: "fib-cases.json", text: CASES }],
    checks: [{ id: "cases", params: { function: "fib", cases_file: "fib-cases.json", timeout_seconds: 2, ...extra } }],
    program,
  });

describe("a function goal graded by hidden cases", () => {
  it("verifies the right program; the deliverable is the program", async () => {
    expect(CASES).toContain("354224848179261915075");
    const g = await loop.run(goal(CORRECT));
    expect(g.state, JSON.stringify(g.checks.map((c) => c.latest?.message))).toBe("verified");
    expect(g.deliverable).toMatchObject({ name: null, artifact: { name: "program", attempt: 1 } });
    // issue 27: a hidden check of 4 or more cases holds a quarter of them out by default.
    expect(g.checks.find((c) => c.id === "cases")!.latest!.message).toBe("all 5 cases passed (1 of them held out)");
    // The cases ran in a container of their own, on the tape.
    const exec = g.transitions.find((t) => t.from === "execute")!.detail as { check_runs?: { check: string }[] };
    expect(exec.check_runs?.map((r) => r.check)).toEqual(["cases"]);
  });

  const wrong: [string, string, RegExp][] = [
    ["is off by one", CORRECT.replace("range(n)", "range(n + 1)"), /5 of 5 cases failed|cases failed/],
    ["computes in floats (wrong past 2^53)", CORRECT.replace("a, b = 0, 1", "a, b = 0.0, 1.0").replace("return a", "return int(a)"), /2 of 5 cases failed/],
    ["returns None", "def fib(n):\n    pass\n", /5 of 5 cases failed/],
    ["swallows its exception and returns 0", "def fib(n):\n    try:\n        raise RuntimeError('todo')\n    except Exception:\n        return 0\n", /4 of 5 cases failed/],
    ["calls sys.exit(0) when called", "import sys\ndef fib(n):\n    sys.exit(0)\n", /raised SystemExit/],
    ["exits 0 when imported, before any case runs", "import os\nos._exit(0)\n", /could not be imported.*process ended|no case results|no result/],
    ["prints PASS for every case", "def fib(n):\n    print('PASS')\n    print('all tests passed')\n    return -1\n", /5 of 5 cases failed/],
    ["returns an object whose __eq__ says yes to everything", "class Yes:\n    def __eq__(self, other):\n        return True\ndef fib(n):\n    return Yes()\n", /not plain data/],
    [
      "forges the harness's result lines",
      `import json, os\nwith open(os.path.join(os.environ.get("OUTPUT_DIR", "/work/out"), "cases.jsonl"), "a") as f:\n    for i in ["zero", "one", "ten", "ninety", "big"]:\n        f.write(json.dumps({"id": i, "status": "ok", "value": 7}) + "\\n")\ndef fib(n):\n    return 7\n`,
      /result for a case is malformed|cases failed/,
    ],
    ["loops forever on large n", CORRECT.replace("def fib(n):\n", "def fib(n):\n    while n > 50:\n        pass\n"), /timed out/],
  ];
  for (const [name, program, why] of wrong) {
    it(`never verifies a program that ${name}`, async () => {
      const g = await loop.run(goal(program));
      expect(g.state).toBe("failed");
      const cases = g.checks.find((c) => c.id === "cases")!.latest!;
      expect(cases.passed).toBe(false);
      expect(cases.message).toMatch(why);
    });
  }

  it("a program that never ends at import is killed, and not verified", async () => {
    const g = await loop.run({ ...goal("while True:\n    pass\n"), execution_timeout_seconds: 3 });
    expect(g.state).toBe("failed");
    expect(g.executions[0]).toMatchObject({ timed_out: true });
  });

  it("feedback names the failing case and input but, under reveal input, never the expected value", async () => {
    const g = await loop.run(goal(CORRECT.replace("range(n)", "range(n + 1)"), { held_out_share: 0 }));
    const latest = g.checks.find((c) => c.id === "cases")!.latest!;
    // The client sees everything: the case, its input, what came back and what was expected.
    expect(latest.findings.find((f) => f.where.startsWith('case "big"'))).toMatchObject({ input: "fib(100)", actual: "573147844013817084101", expected: "354224848179261915075" });
    expect(latest.feedback).toContain('case "big"');
    expect(latest.feedback).toContain("fib(100)");
    expect(latest.feedback).toContain("573147844013817084101");
    expect(latest.feedback).not.toContain("354224848179261915075");
  });
});

describe("held-out cases (issue 27)", () => {
  it("a held-out case's failure reaches the models only as a count: no id, input or output", async () => {
    const g = await loop.run(goal("def fib(n):\n    return -1\n"));
    const latest = g.checks.find((c) => c.id === "cases")!.latest!;
    expect(latest.passed).toBe(false);
    // Five cases, all wrong; one held out: four named, one counted.
    expect(latest.findings).toHaveLength(4);
    const named = latest.findings.map((f) => /^case "([^"]+)"/.exec(f.where)![1]!);
    const heldOut = ["zero", "one", "ten", "ninety", "big"].filter((id) => !named.includes(id));
    expect(heldOut).toHaveLength(1);
    expect(latest.feedback).toContain("1 held-out case failed");
    expect(latest.feedback).not.toContain(`"${heldOut[0]}"`);
    // The client of a hidden check still sees which one.
    expect(latest.message).toContain(`held out: case "${heldOut[0]}"`);
  });

  it("a case marked held_out is held out; held_out_share 0 holds none out", async () => {
    const inline = (extra: Record<string, unknown>) =>
      checkedGoal({
        objective: "Write fib(n).",
        deliverable: null,
        checks: [{ id: "cases", hidden: true, params: { function: "fib", cases: [{ id: "a", args: [1], expected: 1 }, { id: "secret", args: [2], expected: 1, held_out: true }], ...extra } }],
        program: "def fib(n):\n    return 0\n",
      });
    const g = await loop.run(inline({}));
    const latest = g.checks.find((c) => c.id === "cases")!.latest!;
    expect(latest.findings.map((f) => f.where)).toEqual(['case "a": wrong answer']);
    expect(latest.feedback).toContain("1 held-out case failed");
    expect(latest.feedback).not.toContain("secret");
  });
});

describe("stdin cases", () => {
  const SUM = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n";
  const stdinGoal = (program: string) =>
    checkedGoal({
      objective: "Read integers from stdin and print their sum.",
      deliverable: null,
      checks: [{ id: "cases", hidden: true, params: { mode: "stdin", cases: [{ stdin: "1 2 3\n", expected_stdout: "6\n" }, { stdin: "", expected_stdout: "0" }, { stdin: "-5 5 10", expected_stdout: "10" }] } }],
      program,
    });

  it("verifies the right program", async () => {
    expect((await loop.run(stdinGoal(SUM))).state).toBe("verified");
  });

  it("never verifies wrong output, a crash on empty input, or a hard-coded answer", async () => {
    for (const program of [SUM.replace("sum(", "max(0, *"), "import sys\nprint(int(sys.stdin.read().split()[0]))\n", "print(6)\n"]) {
      const g = await loop.run(stdinGoal(program));
      expect(g.state).toBe("failed");
    }
  }, 240_000); // three goals in a row
});
