// Best-of-N through the API, on the real services (scripted model, real sandbox, real checks): a goal asks
// for `candidates`, each GENERATE and REFINE turn samples that many programs at once, EXECUTE runs and
// checks each, and the verifier keeps one. Which one is a function of the checks' verdicts alone.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INSPECT_VERIFIED, program, SCRIPT_CORRECT, SCRIPT_CRASHES, SCRIPT_LEAKS_BLANK, scriptedGoal } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

interface Tried {
  candidate: number;
  chosen: boolean;
  exit_code: number;
  failing_checks: string[];
}
const executeRows = async (goalId: string) =>
  (await loop.prisma.transition.findMany({ where: { goalId, fromState: "execute" }, orderBy: { seq: "asc" }, select: { toState: true, detail: true } })).map(
    (r) => r.detail as { candidates?: Tried[]; chosen?: { candidate: number; code: { source: string } } },
  );
const calls = async (goalId: string) =>
  (await loop.prisma.modelCall.findMany({ where: { goalId }, orderBy: { createdAt: "asc" }, select: { state: true, attempt: true, request: true, tokensIn: true, tokensOut: true } }));

describe("best-of-N: candidates per turn, the verifier picks", () => {
  it("three programs at once: the one that passes every check is the attempt, wherever it stands", async () => {
    const goal = await loop.run(
      scriptedGoal({ generate: program(SCRIPT_CRASHES), generate_candidates: [program(SCRIPT_LEAKS_BLANK), program(SCRIPT_CORRECT)], inspect: [INSPECT_VERIFIED] }, { candidates: 3 }),
    );
    expect(goal.state, goal.tape).toBe("verified");
    expect(goal.candidates).toBe(3);
    expect(goal.tape).toBe("plan → generate → execute → inspect → verified");
    expect(goal.attempts).toBe(1);
    expect(goal.executions.map((e) => e.exit_code)).toEqual([0]);
    const [row] = await executeRows(goal.id);
    expect(row!.candidates!.map((c) => [c.candidate, c.chosen, c.exit_code])).toEqual([
      [1, false, 1],
      [2, false, 0],
      [3, true, 0],
    ]);
    expect(row!.candidates![1]!.failing_checks).toContain("no_null_region");
    expect(row!.candidates![2]!.failing_checks).toEqual([]);
    expect(row!.chosen!.candidate).toBe(3);
    // The attempt's program, as stored and as every later reader sees it, is the chosen one.
    const prog = await loop.request("GET", `/goals/${goal.id}/attempts/1/program`);
    expect(prog.body).toBe(SCRIPT_CORRECT);
    expect((await calls(goal.id)).map((c) => c.state)).toEqual(["plan", "generate", "generate", "generate", "inspect"]);
    expect(goal.report).toMatchObject({ total_revenue: 35145.65 });
  });

  it("none passes: the loop refines from the candidate that failed fewest checks; the next turn's candidates are picked again", async () => {
    const goal = await loop.run(
      scriptedGoal(
        {
          generate: program(SCRIPT_CRASHES),
          generate_candidates: [program(SCRIPT_LEAKS_BLANK)],
          inspect: [INSPECT_VERIFIED],
          refine: [program(SCRIPT_CRASHES)],
          refine_candidates: [[program(SCRIPT_CORRECT)]],
        },
        { candidates: 2 },
      ),
    );
    expect(goal.state, goal.tape).toBe("verified");
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → verified");
    const [first, second] = await executeRows(goal.id);
    expect(first!.chosen!.candidate).toBe(2); // the blank-region leak fails fewer checks than the crash
    expect(second!.chosen!.candidate).toBe(2); // the refined candidate that passes, not the first
    // The refiner was shown the program that was kept, not the first sampled.
    const refines = (await calls(goal.id)).filter((c) => c.state === "refine");
    expect(refines).toHaveLength(2);
    for (const r of refines) {
      const prompt = (r.request as { prompt: string }).prompt;
      expect(prompt).toContain('dropna=False');
      expect(prompt).not.toContain('df["revenue"].astype(float)');
    }
    expect(goal.executions.map((e) => e.exit_code)).toEqual([0, 0]);
  });

  it("the candidates' reservations take turns: a token budget that fits two calls stops the third before it is made", async () => {
    // One goal to measure what a plan and a generate call reserve, on this script and these inputs.
    const probe = await loop.run(scriptedGoal({ inspect: [INSPECT_VERIFIED] }));
    const probeCalls = await calls(probe.id);
    const plan = probeCalls.find((c) => c.state === "plan")!;
    const gen = probeCalls.find((c) => c.state === "generate")!;
    const req = gen.request as { system: string; prompt: string };
    const genEstimate = Math.ceil((req.system.length + req.prompt.length) / 4) + 1024; // MODEL_OUTPUT_TOKENS_ESTIMATE
    const genActual = gen.tokensIn + gen.tokensOut;
    expect(genActual).toBeLessThan(genEstimate);
    // Any of the first two answers may settle (its estimate replaced by what it used) before the third
    // reserves. The budget fits two estimates however they settle; the third needs its estimate on top of
    // at least two calls' real use, which is more than the budget whatever has settled.
    expect(2 * genActual).toBeGreaterThan(genEstimate);
    const budget = plan.tokensIn + plan.tokensOut + 2 * genEstimate;
    const goal = await loop.run(scriptedGoal({ inspect: [INSPECT_VERIFIED] }, { candidates: 3, budget: { max_tokens: budget } }));
    expect(goal.state, goal.tape).toBe("failed");
    expect(goal.failure_reason).toBe("budget_tokens");
    expect((await calls(goal.id)).filter((c) => c.state === "generate")).toHaveLength(2);
    const spent = (await calls(goal.id)).reduce((n, c) => n + c.tokensIn + c.tokensOut, 0);
    expect(spent).toBeLessThanOrEqual(budget);
  });

  it("a best-of-N goal exports and replays to the same tape and the same picks", async () => {
    const goal = await loop.run(
      scriptedGoal({ generate: program(SCRIPT_CRASHES), generate_candidates: [program(SCRIPT_CORRECT)], inspect: [INSPECT_VERIFIED] }, { candidates: 2 }),
    );
    expect(goal.state).toBe("verified");
    const exported = await loop.request("GET", `/goals/${goal.id}/script`);
    const script = exported.body as unknown as { body: { candidates: number; model: { script: { generate_candidates?: unknown[] } } }; gaps: string[] };
    expect(script.gaps).toEqual([]);
    expect(script.body.candidates).toBe(2);
    expect(script.body.model.script.generate_candidates).toHaveLength(1);
    const replayed = await loop.run(script.body);
    expect(replayed.tape).toBe(goal.tape);
    expect((await executeRows(replayed.id))[0]!.chosen!.candidate).toBe(2);
  });

  it("refuses more candidates than the server samples", async () => {
    const res = await loop.post(scriptedGoal({}, { candidates: 6 }));
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain("body.candidates");
  });
});
