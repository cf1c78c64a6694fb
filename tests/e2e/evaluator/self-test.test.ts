// Issue 11: the evaluator's self-test, before any model call. A definition of done that an empty run
// passes, a "bad" fixture it accepts or a "good" one it rejects ends the goal failed/evaluator_rejected
// with no request sent to the model; a sound one goes on to plan, with the probes on the tape.
import { afterEach, describe, expect, it } from "vitest";
import { checkedGoal } from "../../support/checked-goal";
import { fakeProviderLoops } from "../../support/fake-loop";
import { startLoop, type Loop } from "../../support/loop";

const fakeLoop = fakeProviderLoops("fake");
let loop: Loop | undefined;
afterEach(async () => {
  await loop?.close();
  loop = undefined;
});


type SelfTest = { ok: boolean; probes: { probe: string; kind: string; ok: boolean; failing_checks: string[]; run: { timed_out: boolean; source: string }; problem?: string }[] };

const EXPECTED = "id,total\n1,10.50\n2,3.25\n";
const csvGoal = (selfTest: unknown) => ({
  ...checkedGoal({
    objective: "Write totals.csv.",
    deliverable: "totals.csv",
    checker_files: [{ name: "expected.csv", text: EXPECTED }],
    checks: [{ id: "csv_matches", params: { artifact: "totals.csv", expected_file: "expected.csv", atol: 0.005 } }],
    program: `import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "totals.csv"), "w").write(${JSON.stringify(EXPECTED)})\n`,
  }),
  self_test: selfTest,
});

describe("the evaluator's self-test", () => {
  it("ends a vacuous goal evaluator_rejected before any model call: an empty run passes its checks", async () => {
    const { fake, loop } = await fakeLoop([]);
    // "Done" = the program prints nothing: an empty run is done.
    const goal = await loop.run({
      objective: "Print nothing.",
      deliverable: null,
      checks: [{ id: "cases", params: { mode: "stdin", cases: [{ stdin: "", expected_stdout: "" }] } }],
      model: { provider: "openai-compatible" },
    });
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("evaluator_rejected");
    expect(goal.tape).toBe("plan → failed");
    expect(fake.requests).toHaveLength(0);
    expect(goal.cost).toMatchObject({ model_calls: 0, tokens_in: 0, cost_usd: 0 });
    const st = goal.self_test as SelfTest;
    expect(st.ok).toBe(false);
    expect(st.probes.find((p) => p.probe.startsWith("an empty run"))).toMatchObject({ ok: false, failing_checks: [] });
    expect(goal.failure_report!.message).toMatch(/an empty run .* passed every check/);
  });

  it("rejects a definition of done that accepts a known-bad answer or refuses a known-good one, naming the fixture", async () => {
    const { fake, loop } = await fakeLoop([]);
    const acceptsBad = await loop.run({
      ...csvGoal({ bad: [{ name: "rounded to whole cents... but right", artifacts: [{ name: "totals.csv", text: "id,total\n1,10.5\n2,3.25\n" }] }] }),
      model: { provider: "openai-compatible" },
    });
    expect(acceptsBad).toMatchObject({ state: "failed", failure_reason: "evaluator_rejected" });
    expect(acceptsBad.failure_report!.message).toContain('bad fixture "rounded to whole cents... but right" passed every check');
    const refusesGood = await loop.run({
      ...csvGoal({ good: [{ name: "the answer", artifacts: [{ name: "totals.csv", text: "id,total\n1,10.50\n2,3.30\n" }] }] }),
      model: { provider: "openai-compatible" },
    });
    expect(refusesGood).toMatchObject({ state: "failed", failure_reason: "evaluator_rejected" });
    expect(refusesGood.failure_report!.message).toMatch(/good fixture "the answer" failed csv_matches/);
    expect(fake.requests).toHaveLength(0);
  });

  it("passes a sound definition of done: the probes and fixtures are on the tape, the endless probe was killed, and the goal goes on", async () => {
    loop = await startLoop({ shared: true });
    const goal = await loop.run(
      csvGoal({
        good: [
          { name: "the answer", artifacts: [{ name: "totals.csv", text: EXPECTED }] },
          { name: "the answer as a program", program: `import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "totals.csv"), "w").write("id,total\\n1,10.5\\n2,3.25\\n")\n` },
        ],
        bad: [
          { name: "one total off", artifacts: [{ name: "totals.csv", text: "id,total\n1,10.50\n2,3.26\n" }] },
          { name: "a row dropped", program: `import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "totals.csv"), "w").write("id,total\\n1,10.50\\n")\n` },
        ],
      }),
    );
    expect(goal.state).toBe("verified");
    const st = goal.self_test as SelfTest;
    expect(st.ok).toBe(true);
    // issue 27: and a junk deliverable (the expected file's header, no rows) that csv_matches refuses.
    expect(st.probes.map((p) => [p.kind, p.ok])).toEqual([["probe", true], ["probe", true], ["probe", true], ["good", true], ["good", true], ["bad", true], ["bad", true]]);
    expect(st.probes[2]).toMatchObject({ probe: "a junk deliverable: totals.csv as an empty table with the expected header", failing_checks: ["csv_matches"], run: { source: "given", artifacts: ["totals.csv"] } });
    const endless = st.probes.find((p) => p.probe === "a program that never ends")!;
    expect(endless.run).toMatchObject({ source: "sandbox", timed_out: true });
    expect(endless.failing_checks).toContain("exits_clean");
    expect(st.probes.find((p) => p.probe === 'good fixture "the answer as a program"')!.run.source).toBe("sandbox");
  });

  it("judges program fixtures of a function goal through the checks' own runs", async () => {
    loop = await startLoop({ shared: true });
    const fib = (body: string) => `def fib(n):\n${body}\n`;
    const goal = await loop.run({
      ...checkedGoal({
        deliverable: null,
        checks: [{ id: "cases", params: { function: "fib", cases: [{ args: [10], expected: 55 }, { args: [0], expected: 0 }] } }],
        program: fib("    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a"),
      }),
      self_test: { good: [{ name: "iterative", program: fib("    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a") }], bad: [{ name: "off by one", program: fib("    a, b = 1, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a") }] },
    });
    expect(goal.state).toBe("verified");
    expect((goal.self_test as SelfTest).probes.every((p) => p.ok)).toBe(true);
    // The empty run of a function goal really ran its cases (and failed them).
    expect((goal.self_test as SelfTest).probes[0]).toMatchObject({ run: { source: "sandbox" }, failing_checks: ["cases"] });
  });

  it("refuses at submit time what is visible then: a deliverable fixture for checks that run code", async () => {
    loop = await startLoop({ runner: false });
    const res = await loop.post({
      ...checkedGoal({ deliverable: null, checks: [{ id: "cases", params: { function: "f", cases: [{ args: [], expected: 1 }] } }], program: "def f(): return 1\n" }),
      self_test: { good: [{ name: "x", artifacts: [{ name: "a.txt", text: "1" }] }] },
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("body.self_test.good.0");
  });
});
