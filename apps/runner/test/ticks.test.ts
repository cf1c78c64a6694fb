// A schedule's tick, as the runners' tick worker runs it (apps/runner/src/ticks.ts), against the real
// Postgres and Redis: ticks taken by two runners at once, a tick retried after its runner died, the
// overlap and skip rules, and the job schedulers Redis lost. Schedules are created through the API, paused
// or far in the future, so that only the ticks this file runs happen.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GoalJob, ScheduleView } from "@loopsmith/schemas";
import { demoGoal } from "../../../scripts/demo/scenario";
import { startLoop, type Loop } from "../../../tests/support/loop";
import { restoreJobSchedulers, runTick, type TickDeps } from "../src/ticks";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ runner: false });
});
afterAll(async () => {
  await loop?.close();
});

async function newSchedule(extra: Record<string, unknown> = {}): Promise<ScheduleView> {
  const res = await loop.request("POST", "/schedules", { body: { goal: demoGoal(), every_seconds: 3600, paused: true, ...extra } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const s = res.body as unknown as ScheduleView;
  // Paused only to keep BullMQ from ticking: the row is what a tick reads.
  await loop.prisma.schedule.update({ where: { id: s.id }, data: { paused: false } });
  return s;
}

function deps(): TickDeps & { enqueued: GoalJob[] } {
  const enqueued: GoalJob[] = [];
  return { prisma: loop.prisma, now: () => new Date(), enqueue: async (job) => void enqueued.push(job), enqueued };
}

const goalsOf = (scheduleId: string) => loop.prisma.goal.findMany({ where: { scheduleId }, select: { id: true, state: true, idempotencyKey: true, scheduleId: true } });
const end = (goalId: string) => loop.prisma.goal.update({ where: { id: goalId }, data: { state: "cancelled" } });

describe("schedule ticks", () => {
  it("two runners taking the same tick (a redelivered job) create one goal; both enqueue that goal", async () => {
    const s = await newSchedule();
    const d = deps();
    const [a, b] = await Promise.all([runTick(d, s.id, "repeat:x:1"), runTick(d, s.id, "repeat:x:1")]);
    const goals = await goalsOf(s.id);
    expect(goals).toHaveLength(1);
    expect([a, b].map((t) => t.result)).toEqual(["created", "created"]);
    expect([a, b].filter((t) => t.result === "created" && t.replayed)).toHaveLength(1);
    expect(d.enqueued).toEqual([
      { goalId: goals[0]!.id, version: 0 },
      { goalId: goals[0]!.id, version: 0 },
    ]);
    expect(goals[0]).toMatchObject({ state: "plan", idempotencyKey: "schedule-tick:repeat:x:1" });
    const row = await loop.prisma.schedule.findUniqueOrThrow({ where: { id: s.id } });
    expect(row).toMatchObject({ ticks: 1, skippedTicks: 0, tickedInputsVersion: 1 });
  });

  it("two different ticks at once never overlap: one creates the goal, the other is skipped", async () => {
    const s = await newSchedule();
    const d = deps();
    const results = await Promise.all([runTick(d, s.id, "repeat:y:1"), runTick(d, s.id, "repeat:y:2")]);
    expect(results.map((r) => r.result).sort()).toEqual(["created", "skipped_overlap"]);
    expect(await goalsOf(s.id)).toHaveLength(1);
    const row = await loop.prisma.schedule.findUniqueOrThrow({ where: { id: s.id } });
    expect(row).toMatchObject({ ticks: 1, skippedTicks: 1 });
    expect((row.lastTick as { result: string }).result).toMatch(/^(created|skipped_overlap)$/);
  });

  it("a tick retried after its runner died between the commit and the enqueue enqueues the goal it created, once", async () => {
    const s = await newSchedule();
    const dying: TickDeps = { ...deps(), enqueue: async () => Promise.reject(new Error("runner killed")) };
    await expect(runTick(dying, s.id, "repeat:z:1")).rejects.toThrow("runner killed");
    const d = deps();
    const retried = await runTick(d, s.id, "repeat:z:1");
    const goals = await goalsOf(s.id);
    expect(goals).toHaveLength(1);
    expect(retried).toEqual({ result: "created", goalId: goals[0]!.id, replayed: true });
    expect(d.enqueued).toEqual([{ goalId: goals[0]!.id, version: 0 }]);
  });

  it('overlap "wait" holds a tick while the previous goal is open, then creates the next one', async () => {
    const s = await newSchedule({ overlap: "wait" });
    const d = deps();
    const first = await runTick(d, s.id, "repeat:w:1");
    expect(first.result).toBe("created");
    expect(await runTick(d, s.id, "repeat:w:2")).toEqual({ result: "wait" });
    await end((first as { goalId: string }).goalId);
    expect((await runTick(d, s.id, "repeat:w:2")).result).toBe("created");
    expect(await goalsOf(s.id)).toHaveLength(2);
  });

  it("skip_unchanged skips a tick with no new inputs and runs the one after a PUT; a paused or deleted schedule creates nothing", async () => {
    const s = await newSchedule({ skip_unchanged: true });
    const d = deps();
    const first = await runTick(d, s.id, "repeat:u:1");
    await end((first as { goalId: string }).goalId);
    expect(await runTick(d, s.id, "repeat:u:2")).toEqual({ result: "skipped_unchanged" });
    expect((await loop.request("PUT", `/schedules/${s.id}/inputs`, { body: { inputs: [{ name: "sales.csv", text: "a,b\n1,2\n" }] } })).status).toBe(200);
    const third = await runTick(d, s.id, "repeat:u:3");
    expect(third.result).toBe("created");
    const goal = await loop.prisma.goal.findUniqueOrThrow({ where: { id: (third as { goalId: string }).goalId }, include: { inputFiles: true } });
    expect(goal.inputFiles.map((f) => Buffer.from(f.content).toString())).toEqual(["a,b\n1,2\n"]);
    await end(goal.id);

    await loop.prisma.schedule.update({ where: { id: s.id }, data: { paused: true } });
    expect(await runTick(d, s.id, "repeat:u:4")).toEqual({ result: "skipped_paused" });
    expect((await loop.request("DELETE", `/schedules/${s.id}`)).status).toBe(204);
    expect(await runTick(d, s.id, "repeat:u:5")).toEqual({ result: "gone" });
    expect(await goalsOf(s.id)).toHaveLength(0); // deleted: its goals stay, no longer linked
    expect(await loop.prisma.goal.count({ where: { id: goal.id } })).toBe(1);
  });

  it("a schedule's hidden checker files reach its goals as checker files, never as inputs", async () => {
    const res = await loop.request("POST", "/schedules", {
      body: {
        goal: demoGoal({
          checker_files: [{ name: "expected.csv", text: "region,total\nNorth,1\n" }],
          checks: [{ id: "csv_matches", params: { artifact: "out.csv", expected_file: "expected.csv" } }],
          deliverable: "out.csv",
        }),
        every_seconds: 3600,
        paused: true,
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = (res.body as unknown as ScheduleView).id;
    expect((res.body as unknown as ScheduleView).inputs.map((f) => f.name)).toEqual(["sales.csv"]);
    await loop.prisma.schedule.update({ where: { id }, data: { paused: false } });
    const tick = await runTick(deps(), id, "repeat:h:1");
    const goal = await loop.prisma.goal.findUniqueOrThrow({ where: { id: (tick as { goalId: string }).goalId }, include: { inputFiles: true, checkerFiles: true } });
    expect(goal.inputFiles.map((f) => f.name)).toEqual(["sales.csv"]);
    expect(goal.checkerFiles.map((f) => f.name)).toEqual(["expected.csv"]);
    const view = (await loop.request("GET", `/schedules/${id}`)).body;
    expect(JSON.stringify(view)).not.toContain("North,1");
  });

  it("a job scheduler Redis lost is restored; a paused schedule's is not", async () => {
    const live = await newSchedule();
    const paused = (await loop.request("POST", "/schedules", { body: { goal: demoGoal(), cron: "0 3 1 1 *", paused: true } })).body as unknown as ScheduleView;
    expect(await loop.scheduleQueue.getJobScheduler(live.id)).toBeUndefined(); // created paused: never registered
    const restored = await restoreJobSchedulers(loop.prisma, loop.scheduleQueue, loop.prefix);
    expect(restored).toBeGreaterThanOrEqual(1);
    expect((await loop.scheduleQueue.getJobScheduler(live.id))?.every).toBe(3_600_000);
    expect(await loop.scheduleQueue.getJobScheduler(paused.id)).toBeUndefined();
    expect(await restoreJobSchedulers(loop.prisma, loop.scheduleQueue, loop.prefix)).toBe(0);
  });
});
