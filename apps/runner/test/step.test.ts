// One step of one goal against real Postgres and the real sandbox, with the scheduling of the next step
// recorded instead of queued, so that redeliveries and races can be staged exactly.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "@loopsmith/core";
import type { GoalJob } from "@loopsmith/schemas";
import { demoGoal } from "../../../scripts/demo/scenario";
import { startLoop, type Loop } from "../../../tests/support/loop";
import { runnerConfigSchema } from "../src/config";
import { runStep, type StepRunnerDeps } from "../src/step";
import { stepDeps } from "./support/step-deps";
import { createCheckPool } from "@loopsmith/verifier";

let loop: Loop;
let scheduled: GoalJob[];
let deps: StepRunnerDeps;

const checks = createCheckPool({ timeoutMs: 30_000 });

beforeAll(async () => {
  loop = await startLoop({ runner: false });
  const config = parseConfig(runnerConfigSchema, { LOOPSMITH_SCRIPTED_MODEL: "true" });
  deps = stepDeps({
    prisma: loop.prisma,
    sandbox: { runnerId: loop.prefix },
    checks,
    config,
    enqueue: async (job) => {
      scheduled.push(job);
    },
  });
});
afterAll(async () => {
  await checks.close();
  await loop?.close();
});

async function newGoal(): Promise<string> {
  scheduled = [];
  const res = await loop.post(demoGoal());
  expect(res.status).toBe(202);
  return res.body.id as string;
}

describe("runStep", () => {
  it("moves one state, writes one tape row and schedules the next version", async () => {
    const id = await newGoal();
    expect(await runStep(deps, { goalId: id, version: 0 })).toEqual({ done: true, from: "plan", to: "generate", version: 1 });
    expect(scheduled).toEqual([{ goalId: id, version: 1 }]);
    const goal = await loop.get(id);
    expect(goal.body.tape).toBe("plan → generate");
    expect(goal.body.plan).not.toBeNull();
  });

  it("a redelivered job does nothing but schedule the next step again (in case that failed)", async () => {
    const id = await newGoal();
    await runStep(deps, { goalId: id, version: 0 });
    scheduled = [];
    expect(await runStep(deps, { goalId: id, version: 0 })).toMatchObject({ done: false, skipped: "stale" });
    expect(scheduled).toEqual([{ goalId: id, version: 1 }]);
    expect((await loop.get(id)).body.tape).toBe("plan → generate");

    // Two versions behind: nothing at all.
    await runStep(deps, { goalId: id, version: 1 });
    scheduled = [];
    expect(await runStep(deps, { goalId: id, version: 0 })).toMatchObject({ done: false, skipped: "stale" });
    expect(scheduled).toEqual([]);
  });

  it("two runners racing on the same step: one move is written, the other is dropped with its evidence", async () => {
    const id = await newGoal();
    await runStep(deps, { goalId: id, version: 0 });
    await runStep(deps, { goalId: id, version: 1 });
    // Both run EXECUTE (two real containers); compare-and-set lets exactly one of them record it.
    const outcomes = await Promise.all([runStep(deps, { goalId: id, version: 2 }), runStep(deps, { goalId: id, version: 2 })]);
    expect(outcomes.filter((o) => o.done)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.done)).toMatchObject([{ skipped: "stale" }]);
    const goal = await loop.get(id);
    expect(goal.body.tape).toBe("plan → generate → execute → inspect");
    expect(goal.body.executions).toHaveLength(1);
    expect(await loop.prisma.transition.count({ where: { goalId: id } })).toBe(4);
  });

  it("a job for a goal that does not exist, or has ended, does nothing", async () => {
    expect(await runStep(deps, { goalId: "00000000-0000-4000-8000-000000000000", version: 0 })).toEqual({ done: false, skipped: "missing" });
    const id = await newGoal();
    await loop.prisma.goal.update({ where: { id }, data: { state: "failed" } });
    expect(await runStep(deps, { goalId: id, version: 0 })).toMatchObject({ done: false, skipped: "terminal" });
  });
});
