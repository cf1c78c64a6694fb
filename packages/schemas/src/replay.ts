import { z } from "zod";
import { createGoalBody } from "./goals";
import { transitionView } from "./goals";

// Export, replay and judge agreement (issue 15): GET /goals/:id/script and GET /reports/judges.

export const GOAL_SCRIPT_FORMAT = "loopsmith.goal-script/1";

/** What the original goal did, for comparing a replay with it (GET /goals/:id carries the same fields). */
export const recordedOutcome = z
  .object({
    state: z.string(),
    verified: z.boolean(),
    failure_reason: z.string().nullable(),
    attempts: z.int(),
    tape: z.string(),
    transitions: z.array(transitionView.pick({ seq: true, from: true, to: true, at: true, detail: true })),
    provider: z.string().describe("The provider that answered the original goal's model turns."),
    model: z.string().nullable(),
    loopsmith_version: z.string().nullable(),
    wall_time_ms: z.int().nullable(),
    hidden_messages: z
      .array(z.object({ pointer: z.string().describe("A JSON Pointer into original, e.g. /transitions/4/detail/checks/3/message."), text: z.string() }))
      .describe(
        "Checker material (the owner's only): the tape's texts that hold hidden material (hidden checks' messages, self-test problems naming them). Each stands in transitions as the marker \"(hidden: see original.hidden_messages)\"; @loopsmith/replay's restoreHidden puts them back.",
      ),
  })
  .meta({ id: "RecordedOutcome" });
export type RecordedOutcome = z.infer<typeof recordedOutcome>;

export const goalScript = z
  .object({
    format: z.literal(GOAL_SCRIPT_FORMAT),
    goal_id: z.uuid().describe("The goal this was exported from."),
    exported_at: z.string(),
    body: createGoalBody.describe(
      "POST this to /goals to replay the goal offline: the recorded model turns become a scripted model's script; the programs and the checks really run again. Model-visible parts: objective, success, inputs, the script, visible checks. Checker material (the owner's only): checker_files, the params of hidden checks, and original.hidden_messages.",
    ),
    gaps: z
      .array(z.string())
      .describe("Model turns the original did not record an answer for (a model failure, a budget stop), filled with placeholders: the replay may differ from there on."),
    original: recordedOutcome,
  })
  .meta({ id: "GoalScript" });
export type GoalScript = z.infer<typeof goalScript>;

export const judgeCounts = z
  .object({
    goals: z.int(),
    inspections: z.int().describe("INSPECT turns the inspector model answered."),
    agree: z.int(),
    false_accepts: z.int().describe("The inspector said verified while a deterministic check failed: the veto stopped it."),
    false_rejects: z.int().describe("The inspector said not verified while every check passed: it cost an attempt (or the goal)."),
    false_reject_attempts: z.int().describe("Executions run after a false reject (what the false rejects cost in attempts)."),
    false_reject_tokens: z.int().describe("Model tokens (in + out) spent after a false reject."),
    false_reject_cost_usd: z.number(),
  })
  .meta({ id: "JudgeCounts" });
export type JudgeCounts = z.infer<typeof judgeCounts>;

export const judgeReport = z
  .object({
    since: z.string(),
    until: z.string(),
    tenant: judgeCounts.describe("Every goal of the calling tenant created in the window."),
    by_model: z.array(judgeCounts.extend({ provider: z.string(), model: z.string() })),
    by_check: z
      .array(z.object({ id: z.string(), false_accepts: z.int().describe("Inspections said verified while this check failed.") }))
      .describe("The deterministic checks that vetoed the inspector, most often first."),
    goals: z
      .array(
        judgeCounts.omit({ goals: true }).extend({
          goal_id: z.uuid(),
          provider: z.string(),
          model: z.string(),
          state: z.string(),
          vetoed_by: z.array(z.string()).describe("Check ids that failed under an inspector's verified."),
        }),
      )
      .describe("Goals with at least one disagreement, newest first (up to 100)."),
  })
  .meta({ id: "JudgeReport" });
export type JudgeReport = z.infer<typeof judgeReport>;

export const judgeReportQuery = z
  .object({
    since: z.iso.datetime({ offset: true }).optional().describe("ISO 8601: goals created at or after this instant; default 30 days ago."),
    until: z.iso.datetime({ offset: true }).optional().describe("ISO 8601: goals created before this instant; default now."),
  })
  .strict();
