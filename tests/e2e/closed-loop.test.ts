// The closed loop through the HTTP API on the real services: Postgres, Redis, Docker. Only the model is
// scripted; every program really runs in the sandbox and every check really runs in the verifier.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  EXPECTED_REPORT,
  EXPECTED_TAPE,
  INSPECT_VERIFIED,
  SCRIPT_CORRECT,
  SCRIPT_LEAKS_BLANK,
  SCRIPT_WRONG_TOTAL,
  demoGoal,
  demoScript,
  program,
  scriptedGoal,
} from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true, preimport: true });
});
afterAll(async () => {
  await loop?.close();
});


describe("the demo goal", () => {
  it("crashes on the currency, leaks a blank region, then verifies with the report the container computed", async () => {
    const goal = await loop.run(demoGoal());
    expect(goal.state).toBe("verified");
    expect(goal.verified).toBe(true);
    expect(goal.attempts).toBe(3);
    expect(goal.tape).toBe(EXPECTED_TAPE);
    expect(goal.report).toEqual(EXPECTED_REPORT);
    expect(goal.model).toEqual({ provider: "scripted", model: "scripted" });

    // Attempt 1 really crashed in the container, attempt 2 really wrote a NaN key.
    expect(goal.executions.map((e) => e.exit_code)).toEqual([1, 0, 0]);
    expect(goal.executions[0]!.stderr_tail).toMatch(/could not convert string to float: '\$1,299\.00'/);
    expect(goal.executions.every((e) => e.image_id.startsWith("sha256:"))).toBe(true);
    const inspections = goal.transitions.filter((t) => t.from === "inspect");
    const failed = (i: number) =>
      (inspections[i]!.detail.checks as { id: string; passed: boolean }[]).filter((c) => !c.passed).map((c) => c.id);
    expect(failed(0)).toEqual(expect.arrayContaining(["exits_clean", "artifact_exists", "json_parses"]));
    expect(failed(1)).toEqual(["no_null_region"]);
    expect(failed(2)).toEqual([]);

    // Checks: baseline + the client's (binding) + the planner's, each with its latest result.
    const ids = goal.checks.map((c) => `${c.source}:${c.id}`);
    expect(ids).toEqual([
      "baseline:exits_clean",
      "baseline:artifact_exists",
      "baseline:json_parses",
      "client:reconciles_total",
      "planner:schema_ok",
      "planner:no_null_region",
      "planner:top_is_argmax",
    ]);
    expect(goal.checks.every((c) => c.latest?.passed === true && c.latest.attempt === 3)).toBe(true);

    // Every model turn is recorded: plan, generate, 3 inspections, 2 refinements.
    expect(goal.cost.model_calls).toBe(7);
    expect(goal.cost.tokens_in).toBeGreaterThan(0);
    expect(goal.cost.sandbox_ms).toBeGreaterThan(0);
    expect(goal.transitions.map((t) => t.seq)).toEqual([...Array(11).keys()]);

    // The verified artifact is stored, byte for byte what the program wrote.
    const stored = await loop.prisma.artifact.findMany({ where: { goalId: goal.id, name: "result.json" }, include: { execution: true } });
    expect(stored).toHaveLength(2);
    const last = stored.find((a) => a.execution?.attempt === 3)!;
    expect(JSON.parse(Buffer.from(last.content).toString("utf8"))).toEqual(EXPECTED_REPORT);
  });

  it("with a budget of 2 attempts ends failed, with its tape and no report", async () => {
    const goal = await loop.run(demoGoal({ max_attempts: 2 }));
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("budget_attempts");
    expect(goal.attempts).toBe(2);
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → failed");
    expect(goal.report).toBeNull();
    expect(goal.transitions.at(-1)!.detail.reason).toBe("budget_attempts");
  });
});

describe("the deterministic veto", () => {
  it("an inspector that says verified while reconciles_total fails never reaches verified", async () => {
    const goal = await loop.run(
      scriptedGoal(
        { generate: program(SCRIPT_WRONG_TOTAL), inspect: [INSPECT_VERIFIED], refine: [program(SCRIPT_WRONG_TOTAL)] },
        { max_attempts: 2 },
      ),
    );
    expect(goal.state).toBe("failed");
    expect(goal.verified).toBe(false);
    expect(goal.tape).not.toContain("verified");
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → failed");
    const reconcile = goal.checks.find((c) => c.id === "reconciles_total")!;
    expect(reconcile.latest).toMatchObject({ passed: false });
    expect(reconcile.latest!.message).toMatch(/difference 44\.5/);
    for (const t of goal.transitions.filter((x) => x.from === "inspect")) {
      expect(t.detail.inspector_overruled).toBe(true);
      expect((t.detail.inspection as { verified: boolean }).verified).toBe(false);
    }
  });

  it("a planner cannot weaken a client check: its looser copy runs beside the client's, which still fails", async () => {
    const looser = { id: "reconciles_total", params: { values_path: "by_region", total_path: "total_revenue", tolerance: 1000 } };
    const goal = await loop.run(
      scriptedGoal(
        { plan: { ...demoScript().plan, checks: [looser] }, generate: program(SCRIPT_WRONG_TOTAL), inspect: [INSPECT_VERIFIED] },
        { max_attempts: 1 },
      ),
    );
    expect(goal.state).toBe("failed");
    const reconciles = goal.checks.filter((c) => c.id === "reconciles_total");
    expect(reconciles.map((c) => [c.source, c.params.tolerance, c.latest?.passed])).toEqual([
      ["client", 0.01, false],
      ["planner", 1000, true],
    ]);
  });

  it("an unknown check id fails closed", async () => {
    const { plan } = demoScript();
    const goal = await loop.run(
      scriptedGoal(
        {
          plan: { ...plan, checks: [...plan.checks, { id: "totally_made_up", params: {} }] },
          generate: program(SCRIPT_CORRECT),
          inspect: [INSPECT_VERIFIED],
        },
        { max_attempts: 1 },
      ),
    );
    expect(goal.state).toBe("failed");
    const made = goal.checks.find((c) => c.id === "totally_made_up")!;
    expect(made.source).toBe("planner");
    expect(made.latest).toMatchObject({ passed: false });
    expect(made.latest!.message).toMatch(/unknown check id/);
    // Everything else passed: the unknown check alone kept the goal from verified.
    expect(goal.checks.filter((c) => c.latest?.passed === false).map((c) => c.id)).toEqual(["totally_made_up"]);
  });

  it("a client check with an unknown id is refused up front with its field path", async () => {
    const res = await loop.post(demoGoal({ checks: [{ id: "reconciles_total", params: { values_path: "by_region", total_path: "total_revenue" } }, { id: "nope" }] }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: "LS_ERR_VALIDATION" } });
    expect((res.body.error as { details: { path: string }[] }).details.map((d) => d.path)).toContain("body.checks.1.id");
  });
});

describe("a runaway program", () => {
  it("is killed at the timeout, recorded, and the loop goes on to refine", async () => {
    const goal = await loop.run(
      scriptedGoal(
        {
          generate: program("while True:\n    pass\n", "spins forever"),
          inspect: [
            { verified: false, failing_checks: ["exits_clean"], diagnosis: "The program never ended.", fix_hint: "Remove the loop." },
            INSPECT_VERIFIED,
          ],
          refine: [program(SCRIPT_CORRECT)],
        },
        // The limit holds for the fix too: 2 s let a pandas program on a loaded machine time out as well.
        { execution_timeout_seconds: 5 },
      ),
    );
    expect(goal.state).toBe("verified");
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → verified");
    expect(goal.executions[0]).toMatchObject({ exit_code: 124, timed_out: true });
    expect(goal.executions[0]!.duration_ms).toBeGreaterThanOrEqual(5000);
    expect(goal.executions[0]!.duration_ms).toBeLessThan(15_000);
    const firstInspect = goal.transitions.find((t) => t.from === "inspect")!;
    const exits = (firstInspect.detail.checks as { id: string; passed: boolean; message: string }[]).find((c) => c.id === "exits_clean")!;
    expect(exits.passed).toBe(false);
    expect(exits.message).toMatch(/timed out/i);
    expect(goal.report).toEqual(EXPECTED_REPORT);
  });
});

describe("the second refinement sees the real failure", () => {
  it("stores what the refiner was given: the script, the run and the diagnosis", async () => {
    const goal = await loop.run(demoGoal());
    const calls = await loop.prisma.modelCall.findMany({ where: { goalId: goal.id, state: "refine" }, orderBy: { attempt: "asc" } });
    expect(calls).toHaveLength(2);
    const prompt = (calls[1]!.request as { prompt: string }).prompt;
    expect(prompt).toContain(SCRIPT_LEAKS_BLANK.split("\n")[6]!);
    expect(prompt).toMatch(/FAIL no_null_region/);
    expect(prompt).toMatch(/"nan"/i);
    expect(prompt).toContain("Rows with a blank region are grouped under a NaN key");
  });
});

describe("a runner that cannot build the goal's model", () => {
  it("ends the goal as a recorded model failure instead of retrying forever", async () => {
    const mismatched = await startLoop({ preimport: true, runnerEnv: { LOOPSMITH_SCRIPTED_MODEL: "false" } });
    try {
      const goal = await mismatched.run(demoGoal());
      expect(goal.state).toBe("failed");
      expect(goal.failure_reason).toBe("model_failure");
      expect(goal.tape).toBe("plan → failed");
      expect(goal.transitions.at(-1)!.detail.model_error).toMatchObject({ code: "LS_ERR_MODEL_DISABLED" });
    } finally {
      await mismatched.close();
    }
  });
});
