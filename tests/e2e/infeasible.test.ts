// An honest give-up (issue 27): the inspector or the refiner may declare a goal infeasible. Through the API
// with the scripted model, on the real services: the goal ends failed/declared_infeasible with the reason in
// its failure report, or (on_infeasible "ask") waits in awaiting_approval, where approve sends the refiner
// back with the client's note and reject (or no answer) upholds the give-up. A give-up never verifies.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceGoal } from "@loopsmith/db";
import { INSPECT_VERIFIED, program, SCRIPT_CORRECT, SCRIPT_CRASHES, scriptedGoal } from "../../scripts/demo/scenario";
import { startLoop, type GoalView, type Loop } from "../support/loop";

const REASON = "reconciles_total wants total_revenue to equal the sum of by_region, but the objective asks for the total before blank regions are dropped.";
const NOT_YET = { verified: false, failing_checks: ["exits_clean"], diagnosis: "It crashed.", fix_hint: "Parse the currency." };
const GIVE_UP = { ...NOT_YET, infeasible: { reason: REASON } };

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

/** The failure report of a goal that ended failed/declared_infeasible. */
function expectGaveUp(goal: GoalView, by: "inspector" | "refiner") {
  expect(goal.state, goal.tape).toBe("failed");
  expect(goal.verified).toBe(false);
  expect(goal.failure_reason).toBe("declared_infeasible");
  expect(goal.report).toBeNull();
  expect(goal.receipt).toBeNull();
  expect(goal.failure_report?.reason).toBe("declared_infeasible");
  expect(goal.failure_report?.infeasible).toEqual({ reason: REASON, declared_by: by });
  expect(goal.failure_report?.message).toContain(REASON);
}

async function refinePrompts(id: string): Promise<string[]> {
  const calls = await loop.prisma.modelCall.findMany({ where: { goalId: id, state: "refine" }, orderBy: { createdAt: "asc" } });
  return calls.map((c) => (c.request as { prompt: string }).prompt);
}

describe("issue 27: a give-up with on_infeasible fail (the default)", () => {
  it("the inspector's give-up ends the goal failed/declared_infeasible after its first attempt, the reason in the report", async () => {
    const goal = await loop.run(scriptedGoal({ inspect: [GIVE_UP] }));
    expectGaveUp(goal, "inspector");
    expect(goal.on_infeasible).toBe("fail");
    expect(goal.tape).toBe("plan → generate → execute → inspect → failed");
    expect(goal.attempts).toBe(1);
    // The checks still ran and are on the tape beside the give-up; no refiner was asked.
    const last = goal.transitions.at(-1)!;
    expect(last.detail).toMatchObject({ infeasible: { reason: REASON, declared_by: "inspector" }, checks_passed: false, reason: "declared_infeasible" });
    expect(goal.cost.model_calls).toBe(3);
    expect(goal.last_inspection?.infeasible).toEqual({ reason: REASON });
  });

  it("the refiner's give-up ends it the same way, declared by the refiner", async () => {
    const goal = await loop.run(scriptedGoal({ inspect: [NOT_YET], refine: [{ ...program(SCRIPT_CRASHES), infeasible: { reason: REASON } }] }));
    expectGaveUp(goal, "refiner");
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → failed");
    expect(goal.attempts).toBe(1);
    expect(goal.executions).toHaveLength(1);
  });

  it("an exported give-up replays to the same tape: the script keeps the refiner's give-up and the goal its on_infeasible", async () => {
    const original = await loop.run(scriptedGoal({ inspect: [NOT_YET], refine: [{ ...program(SCRIPT_CRASHES), infeasible: { reason: REASON } }] }, { max_attempts: 2 }));
    expectGaveUp(original, "refiner");
    const exported = await loop.request("GET", `/goals/${original.id}/script`);
    expect(exported.status).toBe(200);
    const body = exported.body.body as { on_infeasible: string; model: { script: { refine: { infeasible?: unknown }[] } } };
    expect(body.on_infeasible).toBe("fail");
    expect(body.model.script.refine[0]?.infeasible).toEqual({ reason: REASON });
    const replayed = await loop.run(body);
    expectGaveUp(replayed, "refiner");
    expect(replayed.tape).toBe(original.tape);
  });

  it("an inspector that says verified and infeasible over failing checks does not verify: the give-up stands", async () => {
    const goal = await loop.run(scriptedGoal({ inspect: [{ ...INSPECT_VERIFIED, infeasible: { reason: REASON } }] }));
    expectGaveUp(goal, "inspector");
    expect(goal.tape).toBe("plan → generate → execute → inspect → failed");
    // The veto still reads the checks: the stored inspection is "not verified" and lists what failed.
    expect(goal.last_inspection).toMatchObject({ verified: false, infeasible: { reason: REASON } });
    expect(goal.last_inspection?.failing_checks).toEqual(expect.arrayContaining(["exits_clean"]));
  });

  it("nor over passing checks: a give-up beside a verified is still a give-up, never a pass", async () => {
    const goal = await loop.run(scriptedGoal({ generate: program(SCRIPT_CORRECT), inspect: [{ ...INSPECT_VERIFIED, infeasible: { reason: REASON } }] }));
    expect(goal.transitions.find((t) => t.from === "inspect")?.detail.checks_passed).toBe(true);
    expectGaveUp(goal, "inspector");
  });
});

describe("issue 27: a give-up with on_infeasible ask", () => {
  async function waiting(script: Parameters<typeof scriptedGoal>[0], overrides: Record<string, unknown> = {}) {
    const res = await loop.post(scriptedGoal(script, { on_infeasible: "ask", max_attempts: 3, ...overrides }));
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    const goal = await loop.waitForEnd(res.body.id as string);
    expect(goal.state, goal.tape).toBe("awaiting_approval");
    expect(goal.on_infeasible).toBe("ask");
    expect(goal.transitions.at(-1)!.detail).toMatchObject({ infeasible: { reason: REASON } });
    return goal;
  }

  it("waits for the client; approve with a note sends the refiner back, told the give-up and the note, and the checks can still verify it", async () => {
    const goal = await waiting({ inspect: [GIVE_UP, INSPECT_VERIFIED], refine: [program(SCRIPT_CORRECT)] });
    expect(goal.tape).toBe("plan → generate → execute → inspect → awaiting_approval");
    expect(goal.failure_report).toBeNull();
    const note = "Use the total after blank regions are dropped; the check is right.";
    const approved = await loop.request("POST", `/goals/${goal.id}/approve`, { body: { note } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.state).toBe("refine");
    const done = await loop.waitForEnd(goal.id);
    expect(done.state, done.tape).toBe("verified");
    expect(done.tape).toBe("plan → generate → execute → inspect → awaiting_approval → refine → execute → inspect → verified");
    expect(done.transitions.find((t) => t.from === "awaiting_approval")!.detail).toMatchObject({ by: "client", note, infeasible: { reason: REASON, declared_by: "inspector" } });
    const [prompt] = await refinePrompts(goal.id);
    expect(prompt).toContain(`Earlier this goal was declared infeasible: ${REASON}`);
    expect(prompt).toContain(`The client's note: ${note}`);
    // The inspection the refiner worked from was the give-up's own.
    expect(prompt).toContain(`Diagnosis: ${NOT_YET.diagnosis}`);
  });

  it("reject upholds the give-up: failed/declared_infeasible, the reason in the report", async () => {
    const goal = await waiting({ inspect: [GIVE_UP] });
    const rejected = await loop.request("POST", `/goals/${goal.id}/reject`);
    expect(rejected.status, JSON.stringify(rejected.body)).toBe(200);
    const done = rejected.body as unknown as GoalView;
    expectGaveUp(done, "inspector");
    expect(done.tape).toBe("plan → generate → execute → inspect → awaiting_approval → failed");
    expect(done.failure_report?.message).toMatch(/^The client rejected going on, so the give-up stands\. The inspector declared the goal infeasible: /);
  });

  it("the refiner's give-up waits too, and a reject ends it declared by the refiner", async () => {
    const goal = await waiting({ inspect: [NOT_YET], refine: [{ ...program(SCRIPT_CRASHES), infeasible: { reason: REASON } }] });
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → awaiting_approval");
    const rejected = await loop.request("POST", `/goals/${goal.id}/reject`);
    expectGaveUp(rejected.body as unknown as GoalView, "refiner");
  });

  it("a verified beside the give-up waits like any give-up, never verifies", async () => {
    const goal = await waiting({ generate: program(SCRIPT_CORRECT), inspect: [{ ...INSPECT_VERIFIED, infeasible: { reason: REASON } }] });
    expect(goal.verified).toBe(false);
    expect(goal.tape).toBe("plan → generate → execute → inspect → awaiting_approval");
    await loop.request("POST", `/goals/${goal.id}/cancel`);
  });

  it("with no attempt left there is nothing to ask: the give-up ends the goal at once", async () => {
    const goal = await loop.run(scriptedGoal({ inspect: [GIVE_UP] }, { on_infeasible: "ask", max_attempts: 1 }));
    expectGaveUp(goal, "inspector");
    expect(goal.tape).toBe("plan → generate → execute → inspect → failed");
  });

  it("an empty note is a 400 naming body.note, and the goal keeps waiting", async () => {
    const goal = await waiting({ inspect: [GIVE_UP] });
    const res = await loop.request("POST", `/goals/${goal.id}/approve`, { body: { note: "" } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: "LS_ERR_VALIDATION", details: [expect.objectContaining({ path: "body.note" })] });
    expect((await loop.get(goal.id)).body.state).toBe("awaiting_approval");
    await loop.request("POST", `/goals/${goal.id}/cancel`);
  });
});

describe("issue 27: requests", () => {
  let api: Loop;
  beforeAll(async () => {
    // No runner: goals stay where the test puts them.
    api = await startLoop({ runner: false, env: { SANDBOX_POOL_SIZE: "0" } });
  });
  afterAll(async () => {
    await api?.close();
  });

  it("an on_infeasible that is neither fail nor ask is a 400 with its field path", async () => {
    for (const value of ["retry", null, true]) {
      const res = await api.post(scriptedGoal({}, { on_infeasible: value }));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "LS_ERR_VALIDATION", details: [expect.objectContaining({ path: "body.on_infeasible" })] });
    }
  });

  it("a note is refused on a spending pause (nothing would read it), which approve and reject answer as before", async () => {
    const res = await api.post(scriptedGoal({}));
    const id = res.body.id as string;
    // A spending pause before PLAN's call, as the runner writes it (the scripted model costs nothing).
    await advanceGoal(api.prisma, { goalId: id, fromVersion: 0, from: "plan", to: "awaiting_approval", detail: { turn: "plan", approval_threshold_usd: 0 } });
    const noted = await api.request("POST", `/goals/${id}/approve`, { body: { note: "try harder" } });
    expect(noted.status).toBe(400);
    expect(noted.body.error).toMatchObject({ code: "LS_ERR_VALIDATION", details: [expect.objectContaining({ path: "body.note" })] });
    const rejected = await api.request("POST", `/goals/${id}/reject`);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ state: "failed", failure_reason: "rejected" });
    expect((rejected.body as unknown as GoalView).failure_report?.infeasible).toBeUndefined();
  });
});

describe("issue 27: no answer to an asked give-up", () => {
  let timeoutLoop: Loop;
  beforeAll(async () => {
    timeoutLoop = await startLoop({ runnerEnv: { APPROVAL_TIMEOUT_SECONDS: "1" } });
  });
  afterAll(async () => {
    await timeoutLoop?.close();
  });

  it("upholds the give-up when the approval timeout passes", async () => {
    const res = await timeoutLoop.post(scriptedGoal({ inspect: [GIVE_UP] }, { on_infeasible: "ask", max_attempts: 3 }));
    const goal = await timeoutLoop.waitForEnd(res.body.id as string, 120_000, ["verified", "failed", "cancelled", "errored"]);
    expectGaveUp(goal, "inspector");
    expect(goal.tape).toBe("plan → generate → execute → inspect → awaiting_approval → failed");
    expect(goal.failure_report?.message).toMatch(/^No answer came within the approval timeout, so the give-up stands\./);
  });
});
