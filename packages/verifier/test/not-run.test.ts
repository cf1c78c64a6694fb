// issue 27: a check that runs code and got no run says why when the program's own run explains it (the
// runner makes no check runs after a program run that timed out or ran out of memory), instead of
// blaming a missing test file.
import { describe, expect, it } from "vitest";
import { runChecks } from "../src/index";
import { check, emptyCtx, file } from "./support";

const PROGRAM = { filename: "solution.py", source: "def add(a, b):\n    return a + b\n" };
const TESTS = file("test_solution.py", "from solution import add\n\ndef test_add():\n    assert add(1, 2) == 3\n");
const WS = { changed: [], locked: [], original: ["tsconfig.json", "src/a.ts"] };

const judge = (id: string, params: Record<string, unknown>, over: Parameters<typeof emptyCtx>[0] = {}) =>
  runChecks([{ ...check(id, params), hidden: true, reveal: "input" }], emptyCtx({ program: PROGRAM, checkerFiles: [TESTS], workspace: WS, ...over }), () => [])[0]!;

const CHECKS: [string, Record<string, unknown>, string][] = [
  ["test_suite", { tests: ["test_solution.py"] }, "the tests were not run"],
  ["cases", { function: "add", cases: [{ args: [1, 2], expected: 3 }] }, "the cases were not run"],
  ["command", { run: "tsc" }, "tsc --noEmit was not run"],
];

describe("a check with no run of its own", () => {
  for (const [id, params, notRun] of CHECKS) {
    it(`${id}: names the program's timeout or OOM kill, to the client and to a model`, () => {
      const timedOut = judge(id, params, { timedOut: true, exitCode: 124 });
      expect(timedOut).toMatchObject({ passed: false, message: `${notRun}: the program's own run timed out`, feedback: `${notRun}: the program's own run timed out` });
      const oom = judge(id, params, { oomKilled: true, exitCode: 137 });
      expect(oom).toMatchObject({ passed: false, message: `${notRun}: the program's own run ran out of memory`, feedback: `${notRun}: the program's own run ran out of memory` });
    });
  }

  it("test_suite: a missing test file is named only when one is missing, and only to the client", () => {
    const missing = judge("test_suite", { tests: ["test_solution.py", "test_more.py"] });
    expect(missing).toMatchObject({ passed: false, message: 'the tests were not run: a test file is missing from the checker files ("test_more.py")', feedback: "the tests were not run" });
    const none = judge("test_suite", { tests: ["test_solution.py"] });
    expect(none.passed).toBe(false);
    expect(none.message).not.toContain("missing");
    expect(none.feedback).toBe("the tests were not run");
  });
});
