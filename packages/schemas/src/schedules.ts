import { z } from "zod";
import { createGoalBody, goalInput, goalSummary, MAX_INPUT_FILES } from "./goals";

// Schedules (pipelines): a goal template run on a cron expression or an interval, each tick a goal of its
// own, starting from the pinned program once one was verified.

export const OVERLAP = ["skip", "wait"] as const;

export const createScheduleBody = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    goal: createGoalBody.describe(
      "The goal each tick creates, as POST /goals takes it. Its inputs are the schedule's first inputs; PUT /schedules/{id}/inputs replaces them. A workspace cannot be scheduled.",
    ),
    cron: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('A cron expression: 5 fields (minute hour day month weekday), or 6 with seconds first. Give cron or every_seconds.'),
    timezone: z.string().trim().min(1).max(100).optional().describe('The IANA time zone the cron expression is read in (default "UTC").'),
    every_seconds: z.int().min(1).max(366 * 24 * 3600).optional().describe("An interval instead of a cron expression."),
    overlap: z
      .enum(OVERLAP)
      .default("skip")
      .describe('A tick that finds the previous tick\'s goal still open: "skip" (default) records a skipped tick; "wait" holds the tick until that goal ends.'),
    skip_unchanged: z.boolean().default(false).describe("Skip a tick when no inputs were PUT since the last tick that created a goal."),
    paused: z.boolean().default(false).describe("Create the schedule paused: no tick runs until POST /schedules/{id}/resume."),
  })
  .strict()
  .meta({ id: "CreateSchedule" });
export type CreateScheduleBody = z.infer<typeof createScheduleBody>;

export const putScheduleInputsBody = z
  .object({ inputs: z.array(goalInput).max(MAX_INPUT_FILES).describe("Replace every input file; the next tick's goal gets these.") })
  .strict()
  .meta({ id: "ScheduleInputs" });

const isoDate = z.string().meta({ format: "date-time", description: "ISO 8601 timestamp (UTC)" });

export const TICK_RESULTS = ["created", "skipped_paused", "skipped_overlap", "skipped_unchanged"] as const;

export const scheduleView = z
  .object({
    id: z.uuid(),
    name: z.string().nullable(),
    objective: z.string(),
    cron: z.string().nullable(),
    timezone: z.string().nullable(),
    every_seconds: z.int().nullable(),
    overlap: z.enum(OVERLAP),
    skip_unchanged: z.boolean(),
    paused: z.boolean(),
    inputs: z.array(z.object({ name: z.string(), size: z.int(), sha256: z.string() })),
    inputs_version: z.int().describe("Bumped by every PUT of inputs."),
    pin: z
      .object({
        goal_id: z.uuid().describe("The verified goal whose program is pinned."),
        filename: z.string(),
        sha256: z.string().describe("sha256 of the pinned program's source."),
        pinned_at: isoDate,
      })
      .nullable()
      .describe("The program the next tick runs first, with no model call; null until a tick's goal is verified."),
    ticks: z.int().describe("Ticks that created a goal."),
    skipped_ticks: z.int(),
    last_tick: z
      .object({ at: isoDate, result: z.enum(TICK_RESULTS), goal_id: z.uuid().nullable() })
      .nullable(),
    next_tick_at: isoDate.nullable().describe("When the next tick is due; null while paused."),
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ id: "Schedule" });
export type ScheduleView = z.infer<typeof scheduleView>;

export const scheduleList = z.object({ schedules: z.array(scheduleView) }).meta({ id: "ScheduleList" });

export const TICK_OUTCOMES = ["running", "held", "healed", "broke", "verified", "failed", "cancelled"] as const;

export const scheduleGoal = goalSummary
  .extend({
    pinned_from: z.uuid().nullable().describe("The verified goal whose program this tick ran first; null when there was no pin yet."),
    tick_outcome: z
      .enum(TICK_OUTCOMES)
      .describe(
        "held: the pinned program passed every check on the fresh inputs (no model call); healed: it failed and the loop repaired it (the new program is pinned); broke: it failed and the loop did not repair it; verified / failed / cancelled: a tick with no pin yet; running: not ended.",
      ),
  })
  .meta({ id: "ScheduleGoal" });
export type ScheduleGoal = z.infer<typeof scheduleGoal>;

export const scheduleGoals = z.object({ goals: z.array(scheduleGoal) }).meta({ id: "ScheduleGoals" });

/** What the runner stores as a schedule's pin and copies onto each tick's goal. */
export const schedulePin = z.object({
  goal_id: z.uuid(),
  code: z.object({ filename: z.string(), language: z.string(), source: z.string() }).loose(),
  plan: z.object({ objective: z.string(), approach: z.unknown(), output_contract: z.unknown(), checks: z.unknown() }),
  pinned_at: z.string(),
});
export type SchedulePin = z.infer<typeof schedulePin>;

export const scheduleJobSchema = z.object({ scheduleId: z.uuid() });
export type ScheduleJob = z.infer<typeof scheduleJobSchema>;

/** The repeat options of a schedule's BullMQ job scheduler (one per schedule, id = schedule id). */
export function scheduleRepeat(s: { cron: string | null; timezone: string | null; everyMs: number | null }) {
  return s.cron !== null ? { pattern: s.cron, tz: s.timezone ?? "UTC" } : { every: s.everyMs ?? 60_000 };
}

/** The job template every tick of a schedule is added from. */
export function scheduleTickTemplate(scheduleId: string) {
  return {
    name: "tick",
    data: { scheduleId } satisfies ScheduleJob,
    opts: { attempts: 5, backoff: { type: "exponential", delay: 2000 }, removeOnComplete: { age: 24 * 3600, count: 10_000 }, removeOnFail: { age: 7 * 24 * 3600 } },
  };
}
