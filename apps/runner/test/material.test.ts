// A goal's material (inputs, checker files, workspace, frozen plan) kept between its steps, against real
// Postgres and goals submitted through the API. Each row is changed behind the cache's back (which nothing
// in the product does: the rows never change) to tell a kept value from a fresh read.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "@loopsmith/core";
import { createCheckPool } from "@loopsmith/verifier";
import { demoGoal } from "../../../scripts/demo/scenario";
import { startLoop, type Loop } from "../../../tests/support/loop";
import { runnerConfigSchema } from "../src/config";
import { createGoalMaterial } from "../src/states/material";
import { runStep } from "../src/step";
import { stepDeps } from "./support/step-deps";

let loop: Loop;
const checks = createCheckPool({ timeoutMs: 30_000 });
beforeAll(async () => {
  loop = await startLoop({ runner: false });
});
afterAll(async () => {
  await checks.close();
  await loop?.close();
});

const EXPECTED = "region,total\nnorth,1\n";

async function submit(extra: Record<string, unknown> = {}): Promise<string> {
  const res = await loop.post(demoGoal({ checker_files: [{ name: "expected.csv", text: EXPECTED }], ...extra }));
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
}
/** Rewrites the goal's stored input and checker file (what a fresh read would then return). */
async function rewrite(goalId: string, text: string) {
  await loop.prisma.goalInput.updateMany({ where: { goalId }, data: { content: Buffer.from(text) } });
  await loop.prisma.goalCheckerFile.updateMany({ where: { goalId }, data: { content: Buffer.from(text) } });
}
const text = (files: { content: Buffer }[]) => files.map((f) => f.content.toString("utf8"));

describe("a goal's material, kept between its steps", () => {
  it("is read once per goal: a later call returns what the first read, not the row as it is now", async () => {
    const material = createGoalMaterial(loop.prisma, 1024 * 1024);
    const id = await submit();
    const first = await material.inputs(id);
    const hidden = await material.checkerFiles(id);
    expect(first.map((f) => f.name)).toEqual(["sales.csv"]);
    expect(text(hidden)).toEqual([EXPECTED]);
    await rewrite(id, "changed\n");
    expect(await material.inputs(id)).toBe(first);
    expect(text(await material.checkerFiles(id))).toEqual([EXPECTED]);
    expect(material.stats().goals).toBe(1);
    // The same goal through a cache that keeps nothing: every call reads the row.
    const uncached = createGoalMaterial(loop.prisma, 0);
    expect(text(await uncached.inputs(id))).toEqual(["changed\n"]);
    expect(uncached.stats()).toEqual({ bytes: 0, goals: 0 });
  });

  it("calls made at once share one read", async () => {
    const material = createGoalMaterial(loop.prisma, 1024 * 1024);
    const id = await submit();
    const [a, b, c] = await Promise.all([material.inputs(id), material.inputs(id), material.inputs(id)]);
    expect(b).toBe(a);
    expect(c).toBe(a);
  });

  it("hands out frozen values: a step that tried to change one would throw, not change the next step's", async () => {
    const material = createGoalMaterial(loop.prisma, 1024 * 1024);
    const id = await submit();
    const inputs = await material.inputs(id);
    expect(() => inputs.push({ name: "extra.csv", content: Buffer.from("x") })).toThrow(TypeError);
    expect(() => {
      (inputs[0] as { name: string }).name = "other.csv";
    }).toThrow(TypeError);
    expect((await material.inputs(id)).map((f) => f.name)).toEqual(["sales.csv"]);
  });

  it("keeps no failed read: a plan not written yet is read again once it is", async () => {
    const material = createGoalMaterial(loop.prisma, 1024 * 1024);
    const id = await submit();
    await expect(material.plan(id)).rejects.toThrow(/the plan is missing/);
    const deps = stepDeps({ prisma: loop.prisma, sandbox: { runnerId: loop.prefix }, checks, config: parseConfig(runnerConfigSchema, { LOOPSMITH_SCRIPTED_MODEL: "true" }) });
    expect(await runStep(deps, { goalId: id, version: 0 })).toMatchObject({ done: true, from: "plan", to: "generate" });
    expect((await material.plan(id)).checks.length).toBeGreaterThan(0);
  });

  it("stays within its byte budget, least recently used goal out, and keeps nothing larger than the budget", async () => {
    const sales = (await loop.prisma.goalInput.findFirst({ where: { goal: { objective: { not: "" } } } }))!;
    const budget = 2 * (sales.name.length + sales.content.length) + 100;
    const material = createGoalMaterial(loop.prisma, budget);
    const [a, b, c] = [await submit(), await submit(), await submit()];
    await material.inputs(a);
    await material.inputs(b);
    await material.inputs(a); // a is now the more recent
    await material.inputs(c); // over budget: b goes
    expect(material.stats().goals).toBe(2);
    expect(material.stats().bytes).toBeLessThanOrEqual(budget);
    await rewrite(a, "a changed\n");
    await rewrite(b, "b changed\n");
    expect(text(await material.inputs(a))).not.toEqual(["a changed\n"]);
    expect(text(await material.inputs(b))).toEqual(["b changed\n"]);

    const small = createGoalMaterial(loop.prisma, 10);
    const d = await submit();
    await small.inputs(d);
    expect(small.stats()).toEqual({ bytes: 0, goals: 0 });
    await rewrite(d, "d changed\n");
    expect(text(await small.inputs(d))).toEqual(["d changed\n"]);
  });

  it("forgets a goal once a step moves it out of the working states", async () => {
    const config = parseConfig(runnerConfigSchema, { LOOPSMITH_SCRIPTED_MODEL: "true" });
    const deps = stepDeps({ prisma: loop.prisma, sandbox: { runnerId: loop.prefix }, checks, config });
    const id = await submit({ budget: { max_wall_seconds: 60 } });
    await deps.material.inputs(id);
    await deps.material.checkerFiles(id);
    expect(deps.material.stats().goals).toBe(1);
    // Past its wall-clock budget: the step ends the goal without running PLAN.
    await loop.prisma.goal.update({ where: { id }, data: { createdAt: new Date(Date.now() - 120_000) } });
    expect(await runStep(deps, { goalId: id, version: 0 })).toMatchObject({ done: true, from: "plan", to: "failed" });
    expect(deps.material.stats()).toEqual({ bytes: 0, goals: 0 });
  });
});
