// Issue 27 (3): the self-test bites on the client's own checks. When the goal delivers a file, the empty
// run fails the baseline (artifact_exists, json_parses) alone, so it never probed what the client wrote;
// junk deliverables that exist and parse (an empty table with the expected header, {}, [], an empty text,
// the input copied through) do. Each vacuous definition of done of bench/honesty-vacuous.ts ends
// failed/evaluator_rejected with no model call, naming the probe; the honest one for the same task goes on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VACUOUS, type VacuousTask } from "../../../bench/honesty-vacuous";
import { checkedGoal } from "../../support/checked-goal";
import { startLoop, type Loop } from "../../support/loop";

type SelfTest = { ok: boolean; probes: { probe: string; kind: string; ok: boolean; failing_checks: string[]; run: { source: string; artifacts: string[] }; problem?: string }[] };

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

const goalOf = (task: VacuousTask, checks: unknown[]) =>
  checkedGoal({
    objective: task.objective,
    deliverable: task.deliverable,
    inputs: Object.entries(task.inputs).map(([name, text]) => ({ name, text })),
    checker_files: Object.entries(task.checkerFiles ?? {}).map(([name, text]) => ({ name, text })),
    checks,
    program: task.correct,
  });

describe("the self-test probes the client's checks with junk deliverables (issue 27)", () => {
  const cases = VACUOUS.flatMap((task) => Object.entries(task.vacuous).map(([what, v]) => ({ task, what, ...v })));

  it("covers the six vacuous definitions of done", () => {
    expect(cases.map((c) => c.what)).toEqual([
      "row_count min 0",
      "csv_schema requiring only one column",
      "json_schema {}",
      "json_assert exists at the root",
      "json_schema of an array that may be empty",
      'text_matches expected ""',
    ]);
  });

  it.each(cases.map((c) => [`${c.task.name}: ${c.what}`, c] as const))("refuses %s before any model call, naming the probe", async (_, c) => {
    const goal = await loop.run(goalOf(c.task, c.checks));
    expect(goal.state, goal.tape).toBe("failed");
    expect(goal.failure_reason).toBe("evaluator_rejected");
    expect(goal.tape).toBe("plan → failed");
    expect(goal.cost).toMatchObject({ model_calls: 0, tokens_in: 0, cost_usd: 0 });
    expect(goal.executions).toHaveLength(0);
    expect(goal.failure_report!.message).toMatch(c.probe);
    const st = goal.self_test as SelfTest;
    expect(st.ok).toBe(false);
    // The empty run failed as it had to, on the missing file: alone it would have let this definition through.
    expect(st.probes[0]).toMatchObject({ probe: "an empty run (exits 0, writes nothing)", ok: true });
    expect(st.probes[0]!.failing_checks).toContain("artifact_exists");
    const junk = st.probes.find((p) => c.probe.test(`${p.probe} ${p.problem ?? ""}`))!;
    expect(junk).toMatchObject({ kind: "probe", ok: false, failing_checks: [], run: { source: "given", artifacts: [c.task.deliverable] } });
  });

  it.each(VACUOUS.map((t) => [t.name, t] as const))("does not refuse an honest definition of done for the %s task: every junk probe fails it, and the right answer is verified", async (_, task) => {
    const goal = await loop.run(goalOf(task, task.honest));
    const st = goal.self_test as SelfTest;
    expect(st.ok, JSON.stringify(st.probes.filter((p) => !p.ok))).toBe(true);
    const junk = st.probes.filter((p) => p.probe.startsWith("a junk deliverable"));
    expect(junk.length).toBeGreaterThanOrEqual(2);
    for (const p of junk) expect(p.failing_checks.length, p.probe).toBeGreaterThan(0);
    expect(goal.state, goal.tape).toBe("verified");
  });
});
