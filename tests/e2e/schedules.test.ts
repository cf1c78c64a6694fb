// Schedules through the public API, with a real runner, sandbox, Postgres and Redis (scripted model): a
// pipeline that gets fresh inputs for each tick and must still produce a verified deliverable. The
// first tick's program is verified and pinned; the second tick's inputs change shape, the pinned program
// fails on them and the loop repairs it from that real failure (healed); the third tick runs the new pin
// with no model call (held).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "@loopsmith/db";
import type { ScheduleGoal, ScheduleView } from "@loopsmith/schemas";
import { demoGoal, demoScript, INSPECT_VERIFIED, program, SALES_CSV, SCRIPT_CORRECT, SCRIPT_CRASHES } from "../../scripts/demo/scenario";
import { startReceiver, type Receiver } from "../../packages/webhooks/test/support";
import { startLoop, type GoalView, type Loop } from "../support/loop";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const code = (body: Record<string, unknown>) => (body.error as { code: string } | undefined)?.code;
const paths = (body: Record<string, unknown>) => ((body.error as { details?: { path: string }[] }).details ?? []).map((d) => d.path);

/** Numbers already, no blank region: the naive program (revenue.astype(float)) is right on these. */
const CLEAN_CSV = `order_id,date,region,product,revenue
1,2024-03-01,North,Widget,100.50
2,2024-03-02,South,Gadget,200.00
3,2024-03-03,North,Gizmo,50.25
`;
/** Messy again, other rows: currency strings and a blank region, which the repaired program handles. */
const MESSY_CSV_2 = `order_id,date,region,product,revenue
2001,2024-04-01,East,Widget,"$1,000.00"
2002,2024-04-02,,Gadget,$20.00
2003,2024-04-03, West ,Gizmo,"$2,500.50"
2004,2024-04-04,East,Gizmo,$99.50
`;

/** The schedule's goal: the demo's checks; the model writes the naive program first and repairs it to the correct one. */
const template = (extra: Record<string, unknown> = {}) =>
  demoGoal({
    ...extra,
    inputs: [{ name: "sales.csv", text: CLEAN_CSV }],
    model: {
      provider: "scripted",
      script: { ...demoScript(), generate: program(SCRIPT_CRASHES, "Sum revenue per region."), inspect: [INSPECT_VERIFIED], refine: [program(SCRIPT_CORRECT, "Parse currency strings, drop blank regions.")] },
    },
  });

describe("schedules: a pipeline that holds, heals and re-runs its pinned program", () => {
  let loop: Loop;
  let receiver: Receiver;
  beforeAll(async () => {
    // Ticks a second apart (the server's shortest interval is a minute by default); three schedules at most.
    loop = await startLoop({ env: { SCHEDULE_MIN_INTERVAL_SECONDS: "1", TENANT_MAX_SCHEDULES: "3" } });
    receiver = await startReceiver([200]);
  });
  afterAll(async () => {
    await loop?.close();
    await receiver?.close();
  });

  const schedule = async (id: string) => (await loop.request("GET", `/schedules/${id}`)).body as unknown as ScheduleView;
  const goalsOf = async (id: string) => ((await loop.request("GET", `/schedules/${id}/goals`)).body as unknown as { goals: ScheduleGoal[] }).goals;
  /** Waits for the schedule's `n`-th goal to end; returns it as GET /schedules/:id/goals lists it and as GET /goals/:id shows it. */
  const nthGoal = async (id: string, n: number): Promise<{ listed: ScheduleGoal; view: GoalView }> => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const goals = await goalsOf(id);
      if (goals.length > n) throw new Error(`schedule ${id} created ${goals.length} goals, expected ${n}: ${JSON.stringify(goals)}`);
      const goal = goals.length === n ? goals[0]! : undefined;
      if (goal) {
        const view = await loop.waitForEnd(goal.id);
        const listed = (await goalsOf(id)).find((g) => g.id === goal.id)!;
        return { listed, view };
      }
      if (Date.now() > deadline) throw new Error(`schedule ${id}: no goal ${n} within 120 s; ${JSON.stringify(await schedule(id))}`);
      await sleep(200);
    }
  };
  const modelCalls = async (goalId: string) =>
    (await loop.prisma.modelCall.findMany({ where: { goalId }, orderBy: { createdAt: "asc" }, select: { state: true } })).map((c) => c.state);

  it("tick 1 verifies and pins; tick 2's new inputs break the pin and the loop heals it; tick 3 holds with no model call", async () => {
    const created = await loop.request("POST", "/schedules", {
      body: { name: "daily sales", goal: template({ webhook: { url: receiver.url } }), every_seconds: 1, skip_unchanged: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const s = created.body as unknown as ScheduleView;
    expect(created.headers.location).toBe(`/schedules/${s.id}`);
    expect(s).toMatchObject({ name: "daily sales", every_seconds: 1, cron: null, overlap: "skip", skip_unchanged: true, paused: false, pin: null, inputs_version: 1 });
    expect(s.inputs.map((f) => f.name)).toEqual(["sales.csv"]);
    expect(s.next_tick_at).not.toBeNull();

    // Tick 1: no pin yet, the usual loop; the naive program is right on clean numbers.
    const first = await nthGoal(s.id, 1);
    expect(first.view.state, first.view.tape).toBe("verified");
    expect(first.listed).toMatchObject({ tick_outcome: "verified", pinned_from: null });
    expect(await modelCalls(first.view.id)).toEqual(["plan", "generate", "inspect"]);
    const afterFirst = await schedule(s.id);
    expect(afterFirst.pin?.goal_id).toBe(first.view.id);
    // Ticks with no new inputs since are skipped, not run (skip_unchanged), or overlapped the running goal.
    const skipping = Date.now() + 10_000;
    while ((await schedule(s.id)).skipped_ticks < 2) {
      expect(Date.now(), "two skipped ticks within 10 s").toBeLessThan(skipping);
      await sleep(200);
    }
    expect((await goalsOf(s.id)).length).toBe(1);
    const idle = await schedule(s.id);
    expect(idle.last_tick?.result).toMatch(/^skipped_(unchanged|overlap)$/);

    // Tick 2: currency strings. The pinned program crashes on them; the loop opens from that failure.
    const put = await loop.request("PUT", `/schedules/${s.id}/inputs`, { body: { inputs: [{ name: "sales.csv", text: SALES_CSV }] } });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect((put.body as unknown as ScheduleView).inputs_version).toBe(2);
    const second = await nthGoal(s.id, 2);
    expect(second.view.state, second.view.tape).toBe("verified");
    expect(second.listed).toMatchObject({ tick_outcome: "healed", pinned_from: first.view.id });
    expect(second.view.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → verified");
    expect(second.view.executions.map((e) => e.exit_code)).toEqual([1, 0]);
    // No planner and no generator: the pin's plan and program; the inspector and the refiner on the failure.
    expect(await modelCalls(second.view.id)).toEqual(["inspect", "refine", "inspect"]);
    expect(second.view.report).toMatchObject({ total_revenue: 35145.65, top_region: "North" });
    const afterSecond = await schedule(s.id);
    expect(afterSecond.pin?.goal_id).toBe(second.view.id);
    expect(afterSecond.pin?.sha256).not.toBe(afterFirst.pin?.sha256);

    // Tick 3: messy again, other rows. The repaired program is pinned and holds: one run, no model.
    expect((await loop.request("PUT", `/schedules/${s.id}/inputs`, { body: { inputs: [{ name: "sales.csv", text: MESSY_CSV_2 }] } })).status).toBe(200);
    const third = await nthGoal(s.id, 3);
    expect(third.view.state, third.view.tape).toBe("verified");
    expect(third.listed).toMatchObject({ tick_outcome: "held", pinned_from: second.view.id, attempts: 1 });
    expect(third.view.tape).toBe("plan → generate → execute → inspect → verified");
    expect(await modelCalls(third.view.id)).toEqual([]);
    expect(third.view.cost.model_calls).toBe(0);
    expect(third.view.report).toMatchObject({ by_region: { East: 1099.5, West: 2500.5 }, total_revenue: 3600, top_region: "West" });
    // The tape says where the plan and the program came from.
    const rows = await loop.prisma.transition.findMany({ where: { goalId: third.view.id }, orderBy: { seq: "asc" }, select: { toState: true, detail: true } });
    expect((rows.find((r) => r.toState === "generate")!.detail as { pinned_from?: string }).pinned_from).toBe(second.view.id);
    expect((rows.find((r) => r.toState === "execute")!.detail as { pinned_from?: string }).pinned_from).toBe(second.view.id);
    expect((rows.find((r) => r.toState === "verified")!.detail as { pinned?: boolean }).pinned).toBe(true);
    expect(third.view).toMatchObject({ schedule_id: s.id, pinned_from: second.view.id });
    expect(first.view).toMatchObject({ schedule_id: s.id, pinned_from: null });
    // Each tick's goal had that tick's inputs.
    expect(third.view.inputs.map((f) => f.sha256)).not.toEqual(second.view.inputs.map((f) => f.sha256));
    // Each tick's end went to the template's webhook as schedule.tick.verified, not goal.verified.
    for (const g of [first, second, third]) {
      const deliveries = ((await loop.request("GET", `/goals/${g.view.id}/deliveries`)).body as unknown as { deliveries: { event: string }[] }).deliveries;
      expect(deliveries.map((d) => d.event)).toEqual(["schedule.tick.verified"]);
    }
    const deadline = Date.now() + 30_000;
    while (receiver.received.length < 3 && Date.now() < deadline) await sleep(100);
    const events = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: { id: string; schedule_id: string } });
    expect(events.slice(0, 3).map((e) => [e.type, e.data.id, e.data.schedule_id])).toEqual(
      [first, second, third].map((g) => ["schedule.tick.verified", g.view.id, s.id]),
    );

    // Each tick's tape replays as a plain goal: the pin's plan and program stand in for the turns no model answered.
    for (const g of [second.view, third.view]) {
      const exported = await loop.request("GET", `/goals/${g.id}/script`);
      expect(exported.status).toBe(200);
      const script = exported.body as unknown as { body: Record<string, unknown>; gaps: string[] };
      expect(script.gaps).toEqual([]);
      const replayed = await loop.run(script.body);
      expect(replayed.state).toBe("verified");
      expect(replayed.tape).toBe(g.tape);
      expect(replayed.executions.map((e) => e.exit_code)).toEqual(g.executions.map((e) => e.exit_code));
    }

    // Pause: no tick runs while paused, even with new inputs; resume ticks again.
    const paused = await loop.request("POST", `/schedules/${s.id}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.body).toMatchObject({ paused: true, next_tick_at: null });
    expect((await loop.request("PUT", `/schedules/${s.id}/inputs`, { body: { inputs: [{ name: "sales.csv", text: CLEAN_CSV }] } })).status).toBe(200);
    await sleep(1500); // a tick a second, were it not paused
    expect((await goalsOf(s.id)).length).toBe(3);
    const resumed = await loop.request("POST", `/schedules/${s.id}/resume`);
    expect(resumed.body).toMatchObject({ paused: false });
    const fourth = await nthGoal(s.id, 4);
    expect(fourth.listed.tick_outcome).toBe("held");

    const two = ((await loop.request("GET", `/schedules/${s.id}/goals?limit=2`)).body as unknown as { goals: ScheduleGoal[] }).goals;
    expect(two.map((g) => g.id)).toEqual([fourth.listed.id, third.view.id]);

    // Delete: the schedule goes, its goals stay (and say no schedule any more).
    expect((await loop.request("DELETE", `/schedules/${s.id}`)).status).toBe(204);
    expect((await loop.request("GET", `/schedules/${s.id}`)).status).toBe(404);
    expect((await loop.get(third.view.id)).status).toBe(200);
    expect(await loop.scheduleQueue.getJobScheduler(s.id)).toBeUndefined();
  });

  it("another tenant sees none of a schedule; ids that are not this tenant's are 404", async () => {
    const created = await loop.request("POST", "/schedules", { body: { goal: template(), cron: "0 3 * * *", timezone: "Europe/Paris", paused: true } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const s = created.body as unknown as ScheduleView;
    expect(s).toMatchObject({ cron: "0 3 * * *", timezone: "Europe/Paris", every_seconds: null, paused: true, next_tick_at: null });
    const other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
    for (const [method, url] of [
      ["GET", `/schedules/${s.id}`],
      ["GET", `/schedules/${s.id}/goals`],
      ["POST", `/schedules/${s.id}/resume`],
      ["DELETE", `/schedules/${s.id}`],
    ] as const) {
      const res = await loop.request(method, url, { key: other.api_key });
      expect(res.status, `${method} ${url}`).toBe(404);
      expect(code(res.body)).toBe("LS_ERR_NOT_FOUND");
    }
    expect((await loop.request("PUT", `/schedules/${s.id}/inputs`, { key: other.api_key, body: { inputs: [] } })).status).toBe(404);
    expect(((await loop.request("GET", "/schedules", { key: other.api_key })).body as unknown as { schedules: unknown[] }).schedules).toEqual([]);
    expect((await loop.request("GET", "/schedules/not-a-uuid")).status).toBe(404);
    const mine = ((await loop.request("GET", "/schedules")).body as unknown as { schedules: ScheduleView[] }).schedules;
    expect(mine.map((m) => m.id)).toContain(s.id);
    // Resumed, a cron schedule says when it ticks next (03:00 in Paris is 01:00 or 02:00 UTC).
    const resumed = (await loop.request("POST", `/schedules/${s.id}/resume`)).body as unknown as ScheduleView;
    expect(new Date(resumed.next_tick_at!).getUTCHours()).toBeOneOf([1, 2]);
    expect((await loop.request("DELETE", `/schedules/${s.id}`)).status).toBe(204);
  });

  it("a schedule deleted without the API (its tenant deleted) stops ticking: the runner's next tick removes its job scheduler", async () => {
    const created = await loop.request("POST", "/schedules", { body: { goal: template(), every_seconds: 1, overlap: "skip", skip_unchanged: true, paused: true } });
    const id = (created.body as unknown as ScheduleView).id;
    await loop.prisma.schedule.delete({ where: { id } });
    // As if its tenant's rows had cascaded away after the scheduler was made.
    await loop.scheduleQueue.upsertJobScheduler(id, { every: 1000 }, { name: "tick", data: { scheduleId: id } });
    const deadline = Date.now() + 20_000;
    while ((await loop.scheduleQueue.getJobScheduler(id)) !== undefined) {
      expect(Date.now(), "the job scheduler of a deleted schedule was not removed within 20 s").toBeLessThan(deadline);
      await sleep(200);
    }
  });

  it("refuses bad schedules with field paths: timing, time zone, cron, a workspace, and the goal's own rules under body.goal", async () => {
    const bad = async (body: Record<string, unknown>) => {
      const res = await loop.request("POST", "/schedules", { body });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      return { code: code(res.body), paths: paths(res.body) };
    };
    expect(await bad({ goal: template() })).toEqual({ code: "LS_ERR_VALIDATION", paths: ["body.cron"] });
    expect(await bad({ goal: template(), cron: "* * * * *", every_seconds: 5 })).toEqual({ code: "LS_ERR_VALIDATION", paths: ["body.every_seconds"] });
    expect((await bad({ goal: template(), cron: "61 * * * *" })).paths).toEqual(["body.cron"]);
    expect((await bad({ goal: template(), cron: "* * *" })).paths).toEqual(["body.cron"]);
    expect((await bad({ goal: template(), cron: "0 3 * * *", timezone: "Mars/Olympus" })).paths).toEqual(["body.timezone"]);
    expect((await bad({ goal: template(), every_seconds: 60, timezone: "UTC" })).paths).toEqual(["body.timezone"]);
    expect((await bad({ goal: template(), every_seconds: 0 })).code).toBe("LS_ERR_VALIDATION");
    expect((await bad({ goal: { ...template(), workspace: { archive_base64: "" } }, every_seconds: 60 })).code).toBe("LS_ERR_VALIDATION");
    const workspace = await bad({ goal: { ...template(), workspace: { archive_base64: Buffer.from("x").toString("base64") } }, every_seconds: 60 });
    expect(workspace.paths).toContain("body.goal.workspace");
    // A rule of the goal body itself, reported where it is in the schedule.
    const dup = await bad({ goal: { ...template(), inputs: [{ name: "a.csv", text: "x" }, { name: "a.csv", text: "y" }] }, every_seconds: 60 });
    expect(dup.paths).toEqual(["body.goal.inputs.1.name"]);
    const check = await bad({ goal: { ...template(), checks: [{ id: "reconciles_total", params: { tolerance: -1 } }] }, every_seconds: 60 });
    expect(check.paths.every((p) => p.startsWith("body.goal.checks.0"))).toBe(true);
    expect((await loop.request("GET", "/schedules")).status).toBe(200);
  });

  it("holds each tenant to TENANT_MAX_SCHEDULES and every schedule to SCHEDULE_MIN_INTERVAL_SECONDS", async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await loop.request("POST", "/schedules", { body: { goal: template(), every_seconds: 60, paused: true } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      made.push((res.body as unknown as ScheduleView).id);
    }
    const over = await loop.request("POST", "/schedules", { body: { goal: template(), every_seconds: 60, paused: true } });
    expect(over.status).toBe(409);
    expect(over.body.error).toMatchObject({ code: "LS_ERR_SCHEDULE_LIMIT", details: { limit: 3 } });
    for (const id of made) expect((await loop.request("DELETE", `/schedules/${id}`)).status).toBe(204);

    // A server whose shortest interval is a minute: a cron firing every 30 s is refused, one every minute is not.
    const strict = await startLoop({ runner: false, env: { SCHEDULE_MIN_INTERVAL_SECONDS: "60" } });
    try {
      const bad = async (body: Record<string, unknown>) => {
        const res = await strict.request("POST", "/schedules", { body: { goal: template(), paused: true, ...body } });
        expect(res.status, JSON.stringify(res.body)).toBe(400);
        return paths(res.body);
      };
      expect(await bad({ every_seconds: 59 })).toEqual(["body.every_seconds"]);
      expect(await bad({ cron: "*/30 * * * * *" })).toEqual(["body.cron"]);
      expect(await bad({ cron: "0,30 * * * * *" })).toEqual(["body.cron"]);
      // Two ticks 59 s apart once an hour: the shortest gap counts, not the average.
      expect(await bad({ cron: "0,59 0 * * * *" })).toEqual(["body.cron"]);
      for (const ok of [{ every_seconds: 60 }, { cron: "* * * * *" }, { cron: "0 0 29 2 *" }]) {
        const res = await strict.request("POST", "/schedules", { body: { goal: template(), paused: true, ...ok } });
        expect(res.status, `${JSON.stringify(ok)}: ${JSON.stringify(res.body)}`).toBe(201);
      }
    } finally {
      await strict.close();
    }
  });
});

describe("schedules: two runners taking ticks", () => {
  let loop: Loop;
  let first: Awaited<ReturnType<Loop["startRunner"]>> | undefined;
  beforeAll(async () => {
    loop = await startLoop({ env: { SCHEDULE_MIN_INTERVAL_SECONDS: "1" } });
    // A second runner on the same queues: both take ticks and goal steps.
    first = loop.runner();
    await loop.startRunner();
  });
  afterAll(async () => {
    await first?.close();
    await loop?.close();
  });

  it("ticks every second for a while: one goal per tick that ran, never two of the schedule's goals open at once", async () => {
    const created = await loop.request("POST", "/schedules", {
      body: { goal: demoGoal({ model: { provider: "scripted", script: { ...demoScript(), generate: program(SCRIPT_CORRECT), inspect: [INSPECT_VERIFIED] } } }), every_seconds: 1 },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = (created.body as unknown as ScheduleView).id;
    const deadline = Date.now() + 60_000;
    while ((await loop.prisma.goal.count({ where: { scheduleId: id, state: "verified" } })) < 3) {
      expect(Date.now(), "three ticks verified within 60 s").toBeLessThan(deadline);
      await sleep(250);
    }
    expect((await loop.request("POST", `/schedules/${id}/pause`)).status).toBe(200);
    const goals = await loop.prisma.goal.findMany({ where: { scheduleId: id }, orderBy: { createdAt: "asc" }, select: { id: true, idempotencyKey: true, createdAt: true, finishedAt: true, state: true } });
    for (const g of goals) if (g.finishedAt === null) await loop.waitForEnd(g.id);
    const ended = await loop.prisma.goal.findMany({ where: { scheduleId: id }, orderBy: { createdAt: "asc" }, select: { idempotencyKey: true, createdAt: true, finishedAt: true, state: true } });
    expect(ended.every((g) => g.state === "verified")).toBe(true);
    // Each goal came from a tick of its own...
    expect(new Set(ended.map((g) => g.idempotencyKey)).size).toBe(ended.length);
    // ...and each began after the one before it ended (overlap: skip). created_at is the tick transaction's
    // start, a moment before it looked for an open goal: 250 ms of slack, where a goal runs for a second or more.
    for (let i = 1; i < ended.length; i++) expect(ended[i]!.createdAt.getTime()).toBeGreaterThanOrEqual(ended[i - 1]!.finishedAt!.getTime() - 250);
    const row = await loop.prisma.schedule.findUniqueOrThrow({ where: { id } });
    expect(row.ticks).toBe(ended.length);
    // The later ticks ran the pin: no model call.
    const calls = await loop.prisma.modelCall.count({ where: { goalId: { in: (await loop.prisma.goal.findMany({ where: { scheduleId: id }, orderBy: { createdAt: "asc" }, select: { id: true } })).slice(1).map((g) => g.id) } } });
    expect(calls).toBe(0);
    expect((await loop.request("DELETE", `/schedules/${id}`)).status).toBe(204);
  });
});
