// Schedules (pipelines): a goal template that a BullMQ job scheduler ticks on a cron expression or an
// interval. The API stores the template and the files and keeps the job scheduler in step with the row;
// the runners' tick worker (apps/runner/src/ticks.ts) creates each tick's goal.
import type { Queue } from "bullmq";
import { CronExpressionParser } from "cron-parser";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { LoopSmithError } from "@loopsmith/core";
import { goalsOf, UUID, type Prisma, type PrismaClient } from "@loopsmith/db";
import {
  createScheduleBody,
  errorBody,
  MAX_INPUTS_TOTAL_BYTES,
  putScheduleInputsBody,
  scheduleGoals,
  scheduleList,
  scheduleRepeat,
  scheduleTickTemplate,
  scheduleView,
  type ScheduleGoal,
  type ScheduleView,
} from "@loopsmith/schemas";
import { tenantOf } from "../auth";
import { DEFAULT_LIMITS } from "../config";
import type { Services } from "../services";
import { decodeFiles, goalSummaryOf, invalid, prepareGoalBody } from "./goals";

const scheduleIdParams = z.object({ id: z.string() });

type ScheduleRow = Prisma.ScheduleGetPayload<{ include: { files: { select: { kind: true; name: true; size: true; sha256: true } } } }>;

const withFileList = { files: { select: { kind: true, name: true, size: true, sha256: true }, orderBy: { name: "asc" as const } } };

function toView(s: ScheduleRow, next: number | undefined): ScheduleView {
  const pin = s.pin as { goal_id: string; code: { filename: string; source: string }; pinned_at: string; sha256?: string } | null;
  const last = s.lastTick as ScheduleView["last_tick"];
  return {
    id: s.id,
    name: s.name,
    objective: (s.template as { objective: string }).objective,
    cron: s.cron,
    timezone: s.cron !== null ? (s.timezone ?? "UTC") : null,
    every_seconds: s.everyMs !== null ? s.everyMs / 1000 : null,
    overlap: s.overlap as ScheduleView["overlap"],
    skip_unchanged: s.skipUnchanged,
    paused: s.paused,
    inputs: s.files.filter((f) => f.kind === "input").map((f) => ({ name: f.name, size: f.size, sha256: f.sha256 })),
    inputs_version: s.inputsVersion,
    pin: pin ? { goal_id: pin.goal_id, filename: pin.code.filename, sha256: pin.sha256 ?? "", pinned_at: pin.pinned_at } : null,
    ticks: s.ticks,
    skipped_ticks: s.skippedTicks,
    last_tick: last,
    next_tick_at: !s.paused && next !== undefined ? new Date(next).toISOString() : null,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

/** Rewrites the goal body's field paths (body.checks.0) to where they are in a schedule (body.goal.checks.0). */
function underGoal(e: unknown): never {
  if (e instanceof LoopSmithError && Array.isArray(e.details)) {
    const details = (e.details as { path?: unknown }[]).map((d) =>
      typeof d.path === "string" && d.path.startsWith("body.") ? { ...d, path: `body.goal.${d.path.slice(5)}` } : d,
    );
    throw new LoopSmithError(e.code, e.message, details);
  }
  throw e;
}

/** How many of a cron expression's next ticks are compared with SCHEDULE_MIN_INTERVAL_SECONDS. */
const CRON_GAPS_CHECKED = 60;

/**
 * The cross-field rules of a schedule's timing; a cron expression is parsed as BullMQ will parse it, and
 * no two of its next ticks may be closer than `minSeconds`.
 */
function timingProblems(body: { cron?: string; timezone?: string; every_seconds?: number }, minSeconds: number) {
  const problems: { path: string; message: string }[] = [];
  if ((body.cron === undefined) === (body.every_seconds === undefined)) {
    problems.push({ path: body.cron === undefined ? "body.cron" : "body.every_seconds", message: "give exactly one of cron and every_seconds" });
    return problems;
  }
  if (body.every_seconds !== undefined && body.every_seconds < minSeconds)
    problems.push({ path: "body.every_seconds", message: `${body.every_seconds} s is under this server's shortest interval, ${minSeconds} s (SCHEDULE_MIN_INTERVAL_SECONDS)` });
  if (body.timezone !== undefined) {
    if (body.cron === undefined) problems.push({ path: "body.timezone", message: "a time zone goes with a cron expression" });
    try {
      new Intl.DateTimeFormat("en", { timeZone: body.timezone });
    } catch {
      problems.push({ path: "body.timezone", message: `not an IANA time zone: ${JSON.stringify(body.timezone)}` });
      return problems;
    }
  }
  if (body.cron !== undefined) {
    const fields = body.cron.split(/\s+/).length;
    if (fields < 5 || fields > 6) problems.push({ path: "body.cron", message: `a cron expression has 5 fields (or 6 with seconds first); this one has ${fields}` });
    else {
      let expr: ReturnType<typeof CronExpressionParser.parse> | undefined;
      try {
        expr = CronExpressionParser.parse(body.cron, { tz: body.timezone ?? "UTC" });
      } catch (e) {
        problems.push({ path: "body.cron", message: `not a cron expression: ${(e as Error).message}` });
      }
      const gap = expr ? shortestGapSeconds(expr) : Infinity;
      if (gap < minSeconds) problems.push({ path: "body.cron", message: `ticks ${gap} s apart; this server's shortest interval is ${minSeconds} s (SCHEDULE_MIN_INTERVAL_SECONDS)` });
    }
  }
  return problems;
}

/** The shortest gap between the next CRON_GAPS_CHECKED ticks; a rare expression (29 February) has fewer. */
function shortestGapSeconds(expr: ReturnType<typeof CronExpressionParser.parse>): number {
  const ticks: number[] = [];
  try {
    for (let i = 0; i < CRON_GAPS_CHECKED && expr.hasNext(); i++) ticks.push(expr.next().getTime());
  } catch {
    // No further tick within cron-parser's search: the ones found are all there is to compare.
  }
  return ticks.length < 2 ? Infinity : Math.min(...ticks.slice(1).map((t, i) => t - ticks[i]!)) / 1000;
}

function scheduleQueueOf(deps: Services): Queue {
  if (!deps.scheduleQueue) throw new LoopSmithError("LS_ERR_NOT_READY", "Schedules are not available on this server (no schedule queue).");
  return deps.scheduleQueue;
}

async function findSchedule(prisma: PrismaClient, tenantId: string, id: string): Promise<ScheduleRow> {
  const row = UUID.test(id) ? await prisma.schedule.findFirst({ where: { id, tenantId }, include: withFileList }) : null;
  if (!row) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No schedule ${id}.`);
  return row;
}

async function nextTick(queue: Queue | undefined, id: string): Promise<number | undefined> {
  return (await queue?.getJobScheduler(id).catch(() => undefined))?.next;
}

/** How a tick's goal went, from its row: see scheduleGoal.tick_outcome. */
export function tickOutcome(g: { state: string; verified: boolean; attempts: number; pinned: unknown }): ScheduleGoal["tick_outcome"] {
  const ended = g.state === "verified" || g.state === "failed" || g.state === "cancelled";
  if (!ended) return "running";
  if (g.pinned == null) return g.state as "verified" | "failed" | "cancelled";
  if (g.verified) return g.attempts <= 1 ? "held" : "healed";
  return "broke";
}

export const scheduleRoutes: FastifyPluginAsyncZod<{ deps: () => Services }> = async (app, opts) => {
  app.post(
    "/schedules",
    {
      schema: {
        operationId: "createSchedule",
        description: "Stores the goal template (checked as POST /goals checks a goal) and its first inputs, and starts ticking unless `paused`. Each tick creates a goal with the schedule's current inputs; a tick is skipped while the previous tick's goal is open (`overlap: skip`) or waits for it (`wait`), and with `skip_unchanged` when no inputs were PUT since the last tick that ran. Once a tick's goal is verified its program is pinned: the next tick runs it first, with no model call; if a check fails on the new inputs, the loop repairs it from that failure and the repaired program is pinned.",
        summary: "Run a goal on a schedule; once a tick is verified, later ticks start from its program",
        tags: ["schedules"],
        body: createScheduleBody,
        response: { 201: scheduleView, 400: errorBody, 401: errorBody, 409: errorBody, 413: errorBody, 415: errorBody, 429: errorBody, 503: errorBody },
      },
    },
    async (req, reply) => {
      const deps = opts.deps();
      const queue = scheduleQueueOf(deps);
      const tenant = tenantOf(req);
      const body = req.body;
      const limits = deps.limits ?? DEFAULT_LIMITS;
      const problems = timingProblems(body, limits.SCHEDULE_MIN_INTERVAL_SECONDS);
      if (body.goal.workspace !== undefined) problems.push({ path: "body.goal.workspace", message: "a goal with a workspace cannot be scheduled" });
      if (problems.length) throw invalid(problems);
      const goal = await prepareGoalBody(body.goal, deps, tenant, req.log).catch(underGoal);
      // Counted before the insert: two creates racing can pass the cap by one each, as racing submits can.
      const max = limits.TENANT_MAX_SCHEDULES;
      if (max > 0 && (await deps.prisma.schedule.count({ where: { tenantId: tenant.id } })) >= max)
        throw new LoopSmithError("LS_ERR_SCHEDULE_LIMIT", `This tenant has ${max} schedules, its limit (TENANT_MAX_SCHEDULES); delete one first.`, { limit: max });
      const g = body.goal;
      const template = {
        webhook: g.webhook ?? null,
        objective: g.objective,
        success: g.success ?? null,
        checks: goal.checks,
        deliverable: g.deliverable,
        language: g.language,
        feedback: g.feedback,
        onInfeasible: g.on_infeasible,
        selfTest: g.self_test ?? null,
        maxAttempts: g.max_attempts,
        candidates: g.candidates,
        budgets: goal.budgets,
        model: goal.model,
      };
      const files = [
        ...goal.inputs.map((f) => ({ kind: "input", ...f })),
        ...goal.checkerFiles.map((f) => ({ kind: "checker", ...f })),
      ].map((f) => ({ kind: f.kind, name: f.name, size: f.content.length, sha256: f.sha256, content: new Uint8Array(f.content) }));
      const row = await deps.prisma.schedule.create({
        data: {
          tenantId: tenant.id,
          name: body.name ?? null,
          template: template as Prisma.InputJsonValue,
          cron: body.cron ?? null,
          timezone: body.cron !== undefined ? (body.timezone ?? "UTC") : null,
          everyMs: body.every_seconds !== undefined ? body.every_seconds * 1000 : null,
          overlap: body.overlap,
          skipUnchanged: body.skip_unchanged,
          paused: body.paused,
          queuePrefix: deps.queuePrefix ?? "loopsmith",
          files: { create: files },
        },
        include: withFileList,
      });
      if (!row.paused) {
        try {
          await queue.upsertJobScheduler(row.id, scheduleRepeat(row), scheduleTickTemplate(row.id));
        } catch (err) {
          // A schedule that would never tick must not look created.
          req.log.error({ err, scheduleId: row.id }, "job scheduler not created; schedule withdrawn");
          await deps.prisma.schedule.delete({ where: { id: row.id } }).catch(() => undefined);
          throw new LoopSmithError("LS_ERR_NOT_READY", "The job queue is unavailable; the schedule was not created. Retry later.");
        }
      }
      return reply.status(201).header("location", `/schedules/${row.id}`).send(toView(row, await nextTick(queue, row.id)));
    },
  );

  app.get(
    "/schedules",
    {
      schema: {
        operationId: "listSchedules",
        description: "Up to 500 schedules, with their pin and latest tick.",
        summary: "This tenant's schedules, newest first",
        tags: ["schedules"],
        response: { 200: scheduleList, 401: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const deps = opts.deps();
      const rows = await deps.prisma.schedule.findMany({ where: { tenantId: tenantOf(req).id }, orderBy: [{ createdAt: "desc" }, { id: "desc" }], take: 500, include: withFileList });
      return { schedules: await Promise.all(rows.map(async (r) => toView(r, await nextTick(deps.scheduleQueue, r.id)))) };
    },
  );

  app.get(
    "/schedules/:id",
    {
      schema: {
        operationId: "getSchedule",
        description: "Its timing, its current inputs (names and hashes), the pinned program, counts of ticks run and skipped, the latest tick and when the next is due.",
        summary: "A schedule: timing, inputs, pin and its latest tick",
        tags: ["schedules"],
        params: scheduleIdParams,
        response: { 200: scheduleView, 401: errorBody, 404: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const deps = opts.deps();
      const row = await findSchedule(deps.prisma, tenantOf(req).id, req.params.id);
      return toView(row, await nextTick(deps.scheduleQueue, row.id));
    },
  );

  app.put(
    "/schedules/:id/inputs",
    {
      schema: {
        operationId: "putScheduleInputs",
        description: "Replaces every input file; the next tick's goal gets these. Bumps inputs_version (skip_unchanged compares it with the last tick that ran). A goal already running keeps the inputs it started with.",
        summary: "Replace the inputs the schedule's next tick uses",
        tags: ["schedules"],
        params: scheduleIdParams,
        body: putScheduleInputsBody,
        response: { 200: scheduleView, 400: errorBody, 401: errorBody, 404: errorBody, 413: errorBody, 415: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const deps = opts.deps();
      const tenant = tenantOf(req);
      const row = await findSchedule(deps.prisma, tenant.id, req.params.id);
      const problems: { path: string; message: string }[] = [];
      const inputs = decodeFiles(req.body.inputs, "inputs", MAX_INPUTS_TOTAL_BYTES, problems);
      if (problems.length) throw invalid(problems);
      await deps.prisma.$transaction([
        deps.prisma.scheduleFile.deleteMany({ where: { scheduleId: row.id, kind: "input" } }),
        deps.prisma.scheduleFile.createMany({
          data: inputs.map((f) => ({ scheduleId: row.id, kind: "input", name: f.name, size: f.content.length, sha256: f.sha256, content: new Uint8Array(f.content) })),
        }),
        deps.prisma.schedule.update({ where: { id: row.id }, data: { inputsVersion: { increment: 1 } } }),
      ]);
      const updated = await findSchedule(deps.prisma, tenant.id, row.id);
      return toView(updated, await nextTick(deps.scheduleQueue, row.id));
    },
  );

  for (const action of ["pause", "resume"] as const) {
    app.post(
      `/schedules/:id/${action}`,
      {
        schema: {
          operationId: `${action}Schedule`,
          description:
            action === "pause"
              ? "No tick runs until it is resumed; a goal already running goes on. Pausing a paused schedule changes nothing."
              : "Ticks again from now on (a tick missed while paused is not made up).",
          summary: action === "pause" ? "Stop ticking (a goal already running goes on)" : "Tick again",
          tags: ["schedules"],
          params: scheduleIdParams,
          response: { 200: scheduleView, 401: errorBody, 404: errorBody, 429: errorBody, 503: errorBody },
        },
      },
      async (req) => {
        const deps = opts.deps();
        const queue = scheduleQueueOf(deps);
        const tenant = tenantOf(req);
        const row = await findSchedule(deps.prisma, tenant.id, req.params.id);
        await deps.prisma.schedule.update({ where: { id: row.id }, data: { paused: action === "pause" } });
        // The row says first, so a tick that fires in between reads "paused" and records a skip.
        if (action === "pause") await queue.removeJobScheduler(row.id);
        else await queue.upsertJobScheduler(row.id, scheduleRepeat(row), scheduleTickTemplate(row.id));
        const updated = await findSchedule(deps.prisma, tenant.id, row.id);
        return toView(updated, await nextTick(queue, row.id));
      },
    );
  }

  app.delete(
    "/schedules/:id",
    {
      schema: {
        operationId: "deleteSchedule",
        description: "Stops its ticks and deletes it with its files. Its goals stay (their schedule_id becomes null); a goal already running goes on.",
        summary: "Delete a schedule (its goals stay)",
        tags: ["schedules"],
        params: scheduleIdParams,
        response: { 204: z.null().describe("Deleted."), 401: errorBody, 404: errorBody, 429: errorBody, 503: errorBody },
      },
    },
    async (req, reply) => {
      const deps = opts.deps();
      const queue = scheduleQueueOf(deps);
      const row = await findSchedule(deps.prisma, tenantOf(req).id, req.params.id);
      await queue.removeJobScheduler(row.id);
      await deps.prisma.schedule.delete({ where: { id: row.id } });
      return reply.status(204).send(null);
    },
  );

  app.get(
    "/schedules/:id/goals",
    {
      schema: {
        operationId: "listScheduleGoals",
        description: "Each tick's goal with `tick_outcome`: held (the pinned program passed on the new inputs with no model call), healed (it failed and the loop repaired it), broke (it failed and the loop did not repair it), or verified / failed / cancelled for a tick with no pin yet, running until it ends.",
        summary: "The goals the schedule's ticks created, newest first, each with whether the pipeline held, healed or broke",
        tags: ["schedules"],
        params: scheduleIdParams,
        querystring: z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) }).strict(),
        response: { 200: scheduleGoals, 400: errorBody, 401: errorBody, 404: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const deps = opts.deps();
      const tenant = tenantOf(req);
      const row = await findSchedule(deps.prisma, tenant.id, req.params.id);
      const goals = await goalsOf(deps.prisma, tenant.id).list({ limit: req.query.limit, scheduleId: row.id });
      return {
        goals: goals.slice(0, req.query.limit).map((g) => ({
          ...goalSummaryOf(g),
          pinned_from: (g.pinned as { goal_id?: string } | null)?.goal_id ?? null,
          tick_outcome: tickOutcome(g),        })),
      };
    },
  );
};
