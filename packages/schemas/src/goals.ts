import { z } from "zod";
import { checkSpec, inspection, modelProviders, modelSpec } from "./loop";

// The public goal API: what POST /goals accepts and what GET /goals/:id returns.

export const INPUT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MAX_INPUT_FILES = 20;
export const MAX_INPUTS_TOTAL_BYTES = 10 * 1024 * 1024;
export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_EXECUTION_TIMEOUT_SECONDS = 60;

export const goalInput = z
  .object({
    name: z.string().regex(INPUT_NAME, "a plain file name: letters, digits, '.', '_', '-' (up to 128)"),
    text: z.string().optional().describe("The file's content as UTF-8 text."),
    content_base64: z.base64().optional().describe("The file's content, base64-encoded."),
  })
  .strict()
  .refine((f) => (f.text === undefined) !== (f.content_base64 === undefined), {
    message: "give exactly one of text or content_base64",
  })
  .meta({ id: "GoalInputFile" });

export const createGoalBody = z
  .object({
    objective: z.string().trim().min(1).max(10_000),
    success: z.string().max(10_000).optional().describe("The definition of done in words, for the planner and inspector."),
    checks: z.array(checkSpec).max(50).default([]).describe("Binding acceptance checks; the planner may add, never drop or weaken."),
    inputs: z.array(goalInput).max(MAX_INPUT_FILES).default([]),
    max_attempts: z.int().min(1).max(20).default(DEFAULT_MAX_ATTEMPTS).describe("Executions before the goal ends failed."),
    execution_timeout_seconds: z.int().min(1).max(600).default(DEFAULT_EXECUTION_TIMEOUT_SECONDS),
    model: modelSpec.optional().describe("The server's default provider when omitted."),
  })
  .strict()
  .meta({ id: "CreateGoal" });
export type CreateGoalBody = z.infer<typeof createGoalBody>;

export const createGoalResponse = z
  .object({ id: z.uuid(), status_url: z.string(), state: z.string() })
  .meta({ id: "GoalAccepted" });

export const goalIdParams = z.object({ id: z.string() });

const isoDate = z.string().describe("ISO 8601 timestamp");

export const transitionView = z.object({
  seq: z.int(),
  from: z.string().nullable(),
  to: z.string(),
  at: isoDate,
  detail: z.record(z.string(), z.unknown()),
});

export const executionView = z.object({
  attempt: z.int(),
  exit_code: z.int(),
  duration_ms: z.int(),
  timed_out: z.boolean(),
  oom_killed: z.boolean(),
  stderr_tail: z.string(),
  stdout_tail: z.string(),
  artifacts: z.array(z.object({ name: z.string(), size: z.int(), sha256: z.string() })),
  image_id: z.string(),
});

export const checkView = z.object({
  id: z.string(),
  kind: z.enum(["deterministic", "judgement"]),
  params: z.record(z.string(), z.unknown()),
  description: z.string(),
  source: z.enum(["baseline", "client", "planner"]),
  latest: z.object({ attempt: z.int(), passed: z.boolean(), message: z.string() }).nullable(),
});

export const goalView = z
  .object({
    id: z.uuid(),
    objective: z.string(),
    success: z.string().nullable(),
    state: z.string(),
    verified: z.boolean(),
    failure_reason: z.string().nullable(),
    attempts: z.int(),
    max_attempts: z.int(),
    model: z.object({ provider: z.enum(modelProviders), model: z.string().nullable() }),
    inputs: z.array(z.object({ name: z.string(), size: z.int(), sha256: z.string() })),
    tape: z.string().describe("The states visited, e.g. plan → generate → execute → inspect → verified."),
    transitions: z.array(transitionView),
    plan: z
      .object({ objective: z.string(), approach: z.array(z.string()), output_contract: z.string() })
      .nullable(),
    checks: z.array(checkView).describe("Before PLAN ends: the client's checks; after: the frozen checks."),
    executions: z.array(executionView),
    last_inspection: inspection.nullable(),
    report: z.unknown().describe("The verified artifact (result.json); null unless verified."),
    cost: z.object({
      model_calls: z.int(),
      tokens_in: z.int(),
      tokens_out: z.int(),
      model_latency_ms: z.int(),
      sandbox_ms: z.int(),
      wall_time_ms: z.int(),
    }),
    created_at: isoDate,
    updated_at: isoDate,
    finished_at: isoDate.nullable(),
  })
  .meta({ id: "Goal" });
export type GoalView = z.infer<typeof goalView>;

export const errorBody = z
  .object({
    error: z.object({ code: z.string(), message: z.string(), details: z.unknown() }),
  })
  .meta({ id: "Error" });
