import { ERROR_CATALOG, type ErrorCode } from "@loopsmith/core";
import { FAILURE_REASONS, ON_INFEASIBLE, STATES } from "@loopsmith/machine";
import { receiptKeySet, receiptSchema } from "@loopsmith/receipts";
import { z } from "zod";
import { checkFinding, checkFlaky, checkSpec, inspection, LANGUAGES, modelProviders, modelSpec, RESULT_FILE, workspacePathProblem } from "./loop";

// The public goal API: what POST /goals accepts and what GET /goals/:id returns.

export const INPUT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
export const MAX_INPUT_FILES = 20;
/** The most programs a goal may sample per turn (best-of-N). */
export const MAX_CANDIDATES = 5;
export const MAX_INPUTS_TOTAL_BYTES = 10 * 1024 * 1024;
export const MAX_CHECKER_FILES = 50;
export const MAX_CHECKER_FILES_TOTAL_BYTES = 10 * 1024 * 1024;

/** A path under the program's output directory: relative, '/'-separated, at most 8 plain segments, no "." or "..". */
export function isArtifactPath(path: string): boolean {
  const segments = path.split("/");
  return path.length <= 512 && segments.length <= 8 && segments.every((s) => /^[A-Za-z0-9._-]{1,128}$/.test(s) && s !== "." && s !== "..");
}
/** issue 14: a workspace archive's limits (the archive as sent; its files unpacked; its entries). */
export const MAX_WORKSPACE_ARCHIVE_BYTES = 8 * 1024 * 1024;
// With the inputs (10 MiB) it stays under half the sandbox's 64 MiB work area, which the sandbox requires.
export const MAX_WORKSPACE_BYTES = 16 * 1024 * 1024;
export const MAX_WORKSPACE_ENTRIES = 5000;
/** The deliverable of a workspace goal: the patch (the changed files are artifacts under workspace/). */
export const WORKSPACE_PATCH = "workspace.patch";

/** A locked path: a workspace path, or a directory written with its trailing "/". */
const lockedPath = z
  .string()
  .superRefine((p, ctx) => {
    const problem = workspacePathProblem(p.endsWith("/") ? p.slice(0, -1) : p);
    if (problem) {
      ctx.addIssue({
        // Stryker disable next-line StringLiteral: equivalent; an issue's code is never shown, its path and message are
        code: "custom",
        message: `a path inside the workspace (a directory may end in "/"): this one ${problem}`,
      });
    }
  });

export const workspaceSpec = z
  .strictObject({
    archive_base64: z
      .base64()
      .max(Math.ceil(MAX_WORKSPACE_ARCHIVE_BYTES / 3) * 4, `at most ${MAX_WORKSPACE_ARCHIVE_BYTES} bytes before base64`)
      .describe("A tar, tar.gz or zip archive of the workspace, base64-encoded, unpacked into the program's working directory. Regular files and directories; links only to files inside it (they become copies); no absolute paths, no .., no devices, nothing under inputs/ or out/."),
    locked: z
      .array(lockedPath)
      .max(200)
      .default([])
      .describe('Paths the model may not change (tests, tsconfig.json, package.json, lockfiles); a directory ("test/") locks everything under it. Command checks restore them from the original and fail an attempt that changed one.'),
  })
  .meta({ id: "Workspace" });

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

/** A file a self-test fixture delivers, as if the program had written it under OUTPUT_DIR. */
const fixtureArtifact = z
  .strictObject({
    name: z.string().refine(isArtifactPath, 'a relative path under the output directory, e.g. "clean.csv"'),
    text: z.string().optional(),
    content_base64: z.base64().optional(),
  })
  .refine((f) => (f.text === undefined) !== (f.content_base64 === undefined), { message: "give exactly one of text or content_base64" });

/**
 * One known-good or known-bad answer for the evaluator's self-test: a program (run like an attempt, its
 * checks' own runs included), or the deliverable itself (artifacts and/or stdout of a clean exit).
 */
export const selfTestFixture = z
  .strictObject({
    name: z.string().min(1).max(100),
    program: z.string().min(1).max(200_000).optional().describe("A complete Python program, run like an attempt."),
    artifacts: z.array(fixtureArtifact).max(20).optional().describe("Files as if the program had written them (the run exits 0)."),
    stdout: z.string().max(1024 * 1024).optional().describe("What the program would have printed."),
  })
  .refine((f) => (f.program === undefined) !== (f.artifacts === undefined && f.stdout === undefined), {
    message: "give a program, or artifacts and/or stdout, not both",
  })
  .meta({ id: "SelfTestFixture" });
export type SelfTestFixture = z.infer<typeof selfTestFixture>;

export const selfTestSpec = z
  .strictObject({
    good: z.array(selfTestFixture).max(10).default([]).describe("Each must pass every check."),
    bad: z.array(selfTestFixture).max(10).default([]).describe("Each must fail at least one check."),
  })
  .meta({ id: "SelfTest" });
export type SelfTestSpec = z.infer<typeof selfTestSpec>;

export const FEEDBACK_ARMS = ["full", "retry_only"] as const;

/** Per-goal caps. Each is checked before the model call or execution that would cross it. */
export const goalBudget = z
  .object({
    max_tokens: z.int().min(1).max(100_000_000).optional().describe("Model tokens (in + out) across every call."),
    max_cost_usd: z.number().positive().max(1_000_000).optional().describe("Model spend in USD, from the server's price table."),
    max_wall_seconds: z.int().min(1).max(30 * 24 * 3600).optional().describe("Wall-clock seconds from submission to the end."),
  })
  .strict()
  .meta({ id: "GoalBudget" });
export type GoalBudget = z.infer<typeof goalBudget>;

export const webhookSpec = z
  .object({
    url: z.url({ protocol: /^https?$/ }).max(2048).describe("Receives goal.verified / goal.failed / goal.cancelled / goal.awaiting_approval, signed per Standard Webhooks."),
    payload: z
      .enum(["full", "thin"])
      .optional()
      .describe("full (default): the whole goal, as GET /goals/:id shows it; thin: its id, state, verified, failure_reason, version and links, for receivers that fetch the goal themselves."),
  })
  .strict()
  .meta({ id: "Webhook" });

export const createGoalBody = z
  .object({
    objective: z.string().trim().min(1).max(10_000),
    success: z.string().max(10_000).optional().describe("The definition of done in words, for the planner and inspector."),
    checks: z.array(checkSpec).max(50).default([]).describe("Binding acceptance checks; the planner may add, never drop or weaken."),
    inputs: z.array(goalInput).max(MAX_INPUT_FILES).default([]).describe("Files the program reads (and the models see a preview of)."),
    checker_files: z
      .array(goalInput)
      .max(MAX_CHECKER_FILES)
      .default([])
      .describe("Hidden material that checks read (an expected CSV, test cases, pytest files): never in a model prompt, never in the program's container."),
    language: z
      .enum(LANGUAGES)
      .default("python")
      .describe("The program's language: python (Python 3.11, pandas, numpy, pytest), javascript or typescript (Node 20, npm, tsc 5.9); each runs in its own sandbox image."),
    workspace: workspaceSpec
      .optional()
      .describe('A directory tree the program works in (issue 14). The model changes files in it; the deliverable becomes the patch ("workspace.patch") and the changed files (artifacts under "workspace/").'),
    deliverable: z
      .string()
      .refine(isArtifactPath, 'a relative path under the output directory, e.g. "clean.csv"')
      .nullable()
      .default(RESULT_FILE)
      .describe('What the goal delivers: the file the program writes under OUTPUT_DIR (default "result.json"), or null when the deliverable is the program itself (goals checked by cases or test_suite).'),
    self_test: selfTestSpec
      .optional()
      .describe("Known-good and known-bad answers the checks must tell apart, run with the built-in probes before any model call."),
    feedback: z
      .enum(FEEDBACK_ARMS)
      .default("full")
      .describe('What the refiner is told: "full" (the run, the failed checks, the diagnosis) or "retry_only" (only that the attempt was wrong: the control arm).'),
    max_attempts: z.int().min(1).max(20).default(DEFAULT_MAX_ATTEMPTS).describe("Executions before the goal ends failed."),
    candidates: z
      .int()
      .min(1)
      .max(MAX_CANDIDATES)
      .default(1)
      .describe(
        "Best-of-N: programs sampled at once per GENERATE and REFINE turn. Each runs in the sandbox and is checked; the verifier picks one (a candidate that passes every check, else the one that fails fewest; ties: the shorter program, then the first), which becomes the attempt. Each candidate is a model call against the budgets.",
      ),
    on_infeasible: z
      .enum(ON_INFEASIBLE)
      .default("fail")
      .describe('When the inspector or refiner declares the goal infeasible (say, its tests contradict its objective): "fail" (default) ends it failed with reason declared_infeasible; "ask" waits in awaiting_approval for the client: approve to make the refiner try again, reject to end it failed.'),
    execution_timeout_seconds: z.int().min(1).max(600).default(DEFAULT_EXECUTION_TIMEOUT_SECONDS),
    model: modelSpec.optional().describe("The server's default provider when omitted."),
    budget: goalBudget.optional().describe("Caps beyond max_attempts; server defaults fill what is omitted, server maximums bound it."),
    approval_threshold_usd: z
      .number()
      .nonnegative()
      .max(1_000_000)
      .optional()
      .describe("Pause in awaiting_approval before a model call would take the spend past this (USD). Default: the tenant's policy."),
    webhook: webhookSpec.optional(),
  })
  .strict()
  .meta({ id: "CreateGoal" });
export type CreateGoalBody = z.infer<typeof createGoalBody>;

export const createGoalResponse = z
  .object({ id: z.uuid(), status_url: z.string(), state: z.literal("plan").describe("Every goal starts in plan.") })
  .meta({ id: "GoalAccepted" });

export const goalIdParams = z.object({ id: z.string() });

/** The budgets a goal runs under, defaults and the tenant's policy filled in. */
export const budgetsView = z
  .object({
    max_attempts: z.int(),
    execution_timeout_seconds: z.int(),
    max_tokens: z.int(),
    max_cost_usd: z.number(),
    max_wall_seconds: z.int(),
    approval_threshold_usd: z.number().nullable(),
  })
  .meta({ id: "Budgets" });
export type Budgets = z.infer<typeof budgetsView>;

const isoDate = z.string().meta({ format: "date-time", description: "ISO 8601 timestamp (UTC)" });
const state = z.enum(STATES);
const failureReason = z.enum(FAILURE_REASONS);

/**
 * How a model_calls row that may have been billed without an answer starts its error text: the runner
 * writes it (a call found unsettled by the retry of its step), the goal view counts it.
 */
export const POSSIBLY_BILLED = "possibly billed";
/** The error text of a model_calls row reserved before its call and not settled yet. */
export const MODEL_CALL_RESERVED = "reserved: the call has not settled";

export const transitionView = z.object({
  seq: z.int(),
  from: state.nullable().describe("null on the first row."),
  to: state,
  at: isoDate,
  detail: z.record(z.string(), z.unknown()),
  hash: z
    .string()
    .nullable()
    .describe("sha256 of the canonical JSON of {prev, seq, from, to, at, detail}, prev being the previous row's hash (\"\" for row 0). Null on rows from before the chain."),
});

export const executionLimits = z.object({
  timeout_ms: z.int(),
  memory_bytes: z.int(),
  nano_cpus: z.int(),
  pids_limit: z.int(),
  work_tmpfs_bytes: z.int(),
  tmp_tmpfs_bytes: z.int(),
  nofile: z.int(),
  file_size_bytes: z.int(),
  stdout_cap_bytes: z.int(),
  stderr_cap_bytes: z.int(),
  artifact_max_bytes: z.int(),
  artifacts_total_bytes: z.int(),
  artifact_max_count: z.int(),
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
  image_id: z.string().describe("The sandbox image's id (sha256 of its config): content-addressed, set for every image."),
  image_digest: z.string().nullable().describe("The image's registry digest (RepoDigest) when it has one; null for images built locally by docker import."),
  sandbox_runtime: z
    .string()
    .nullable()
    .describe("The engine runtime the program's container ran under: runsc (gVisor, a kernel of its own between the program and the host's) or runc; null for runs recorded before it was kept."),
  script_sha256: z.string().nullable().describe("sha256 of the program that ran."),
  limits: executionLimits.nullable().describe("What the run was allowed."),
});

export const modelCallView = z.object({
  state: z.string().describe("The turn: plan, generate, inspect, refine."),
  attempt: z.int(),
  provider: z.string(),
  model: z.string(),
  system_sha256: z.string().nullable().describe("sha256 of the system prompt (UTF-8)."),
  prompt_sha256: z.string().nullable().describe("sha256 of the prompt as first sent (UTF-8); schema retries append the rejected reply and its error."),
  tokens_in: z.int(),
  tokens_out: z.int(),
  cost_usd: z.number(),
  latency_ms: z.int(),
  error_kind: z
    .enum(["reserved", "possibly_billed", "unavailable", "failed"])
    .nullable()
    .describe("null: answered. reserved: in flight. possibly_billed: its runner died mid-call. unavailable: the provider could not be reached (the step was retried). failed: the output kept failing its schema, or the provider refused the request."),
  created_at: isoDate,
});


/** One check's result on one attempt, as the client sees it. */
const checkResultView = z.object({
  attempt: z.int(),
  passed: z.boolean(),
  message: z.string().describe("The full verdict."),
  feedback: z.string().describe("What the models were told about it."),
  findings: z.array(checkFinding).describe("The first differences: where, input, actual, expected, note."),
  flaky: checkFlaky.optional(),
});

export const checkView = z.object({
  id: z.string(),
  kind: z.enum(["deterministic", "judgement"]),
  params: z.record(z.string(), z.unknown()),
  description: z.string(),
  source: z.enum(["baseline", "client", "planner"]),
  hidden: z.boolean().describe("Hidden from the models: they were told the check exists and what it reads, never its material."),
  reveal: z.enum(["full", "input", "verdict"]).describe("For hidden checks: how much of a failure the models were shown."),
  latest: checkResultView.nullable(),
  results: z.array(checkResultView).describe("The check's result on every attempt it judged, oldest first (latest is the last)."),
});

/** Why a goal failed, assembled from the tape when it ends in `failed`. */
export const failureReport = z
  .object({
    reason: failureReason,
    message: z.string(),
    last_transitions: z.array(transitionView),
    last_run: z
      .object({
        attempt: z.int(),
        exit_code: z.int(),
        timed_out: z.boolean(),
        oom_killed: z.boolean(),
        stderr_tail: z.string(),
      })
      .nullable(),
    failing_checks: z.array(z.object({ id: z.string(), message: z.string(), flaky: checkFlaky.optional() })),
    last_diagnosis: z.string().nullable(),
    last_script: z.string().nullable(),
    stuck_hashes: z.array(z.string()).optional().describe("Set for reason stuck: the outcome hash that repeated, once per repeat."),
    infeasible: z
      .object({ reason: z.string(), declared_by: z.enum(["inspector", "refiner"]) })
      .optional()
      .describe("Set for reason declared_infeasible: the model's reason for giving up, and which model gave it."),
  })
  .meta({ id: "FailureReport" });
export type FailureReport = z.infer<typeof failureReport>;

/** The signed receipt (its schema lives with the code that signs and verifies it), named for OpenAPI here. */
export const receiptView = receiptSchema.meta({ id: "Receipt" });
export const receiptKeysView = receiptKeySet.meta({ id: "ReceiptKeys" });

export const goalView = z
  .object({
    id: z.uuid(),
    objective: z.string(),
    success: z.string().nullable(),
    language: z.enum(LANGUAGES),
    workspace: z
      .object({ files: z.int(), size: z.int(), sha256: z.string().describe("sha256 of the stored (normalized) workspace."), locked: z.array(z.string()) })
      .nullable()
      .describe("The goal's workspace: how many files, their bytes, and the locked paths."),
    state,
    verified: z.boolean(),
    failure_reason: failureReason.nullable().describe("Set when the goal ended failed."),
    attempts: z.int(),
    max_attempts: z.int(),
    model: z.object({ provider: z.enum(modelProviders), model: z.string().nullable() }),
    inputs: z.array(z.object({ name: z.string(), size: z.int(), sha256: z.string() })),
    checker_files: z.array(z.object({ name: z.string(), size: z.int(), sha256: z.string() })).describe("Names and hashes only; the contents stay the client's."),
    feedback: z.enum(FEEDBACK_ARMS).describe("The refiner's arm."),
    candidates: z.int().describe("Programs sampled per GENERATE and REFINE turn (best-of-N); 1: one."),
    on_infeasible: z.enum(ON_INFEASIBLE).describe("What a model's give-up does: fail, or ask the client (awaiting_approval)."),
    self_test: z
      .unknown()
      .describe("The evaluator self-test's outcome (probes and fixtures with their verdicts); null until PLAN ran it."),
    deliverable: z
      .object({
        name: z.string().nullable().describe("The artifact the goal delivers, or null when the program itself is the deliverable."),
        artifact: z
          .object({ attempt: z.int(), name: z.string(), size: z.int(), sha256: z.string() })
          .nullable()
          .describe("Set once verified: the verified attempt's file (for a program deliverable, the program)."),
      })
      .describe("What the goal delivers."),
    tape: z.string().describe("The states visited, e.g. plan → generate → execute → inspect → verified."),
    transitions: z.array(transitionView),
    plan: z
      .object({ objective: z.string(), approach: z.array(z.string()), output_contract: z.string() })
      .nullable(),
    checks: z.array(checkView).describe("Before PLAN ends: the client's checks; after: the frozen checks."),
    executions: z.array(executionView),
    model_calls: z.array(modelCallView).describe("Every model call, oldest first, with the hashes of what it was sent."),
    last_inspection: inspection.nullable(),
    report: z.unknown().describe("The verified deliverable parsed as JSON when it is a .json file (exactly as written, big integers as strings of digits... see the README); null unless verified or for other deliverables."),
    failure_report: failureReport.nullable().describe("Set when the goal ended failed."),
    budgets: budgetsView,
    webhook: z
      .object({
        url: z.string(),
        payload: z.enum(["full", "thin"]),
        disabled_at: z.string().nullable().describe("When a receiver's 410 Gone disabled this webhook: no later event of the goal is sent."),
      })
      .nullable(),
    cost: z.object({
      cost_usd: z.number().describe("Model spend so far (USD) from the price table, possibly billed calls included."),
      model_calls: z.int(),
      possibly_billed_calls: z
        .int()
        .describe("Calls whose runner died before the answer came back: the provider may have billed them, so their reserved estimate stays counted (in the totals and the budget)."),
      tokens_in: z.int(),
      tokens_out: z.int(),
      model_latency_ms: z.int(),
      sandbox_ms: z.int(),
      wall_time_ms: z.int(),
    }),
    schedule_id: z.uuid().nullable().describe("The schedule whose tick created the goal (null for goals submitted with POST /goals, or once the schedule was deleted)."),
    pinned_from: z
      .uuid()
      .nullable()
      .describe("A schedule's tick that started from the pinned program: the verified goal that program (and its plan) came from; PLAN and GENERATE made no model call."),
    loopsmith_version: z
      .string()
      .nullable()
      .describe('The LoopSmith that accepted the goal: "git:<commit>" ("-dirty" with uncommitted changes), LOOPSMITH_VERSION, or "package:<version>".'),
    receipt: receiptView.nullable().describe("The signed receipt, once verified (also at GET /goals/{id}/receipt)."),
    created_at: isoDate,
    updated_at: isoDate,
    finished_at: isoDate.nullable(),
  })
  .meta({ id: "Goal" });
export type GoalView = z.infer<typeof goalView>;

export const errorBody = z
  .object({
    error: z.object({
      code: z.enum(Object.keys(ERROR_CATALOG) as [ErrorCode, ...ErrorCode[]]).describe("Stable: clients match on it. See the error catalog in the README."),
      message: z.string(),
      details: z.unknown().describe("For validation errors: [{path, message}], path like body.inputs.0.name."),
    }),
  })
  .meta({ id: "Error" });

export const goalSummary = goalView
  .pick({ id: true, objective: true, state: true, verified: true, failure_reason: true, attempts: true, created_at: true, updated_at: true, finished_at: true })
  .extend({ cost_usd: z.number().describe("Model spend so far (USD), as cost.cost_usd of GET /goals/:id.") })
  .meta({ id: "GoalSummary" });
export type GoalSummary = z.infer<typeof goalSummary>;


export const listGoalsQuery = z
  .object({
    state: z.enum(STATES).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(200).optional().describe("next_cursor from the previous page."),
    q: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe("Only goals whose objective contains this text (any case), or the goal with this id."),
  })
  .strict();

export const goalList = z
  .object({
    goals: z.array(goalSummary),
    next_cursor: z.string().nullable().describe("Pass as ?cursor= for the next (older) page; null on the last page."),
  })
  .meta({ id: "GoalList" });

export const idempotencyHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces")
    .optional()
    .describe("Retry-safe submit: the same key and body return the same goal; the same key with another body is a 409."),
});

export const approveBody = z
  .object({
    approval_threshold_usd: z
      .number()
      .nonnegative()
      .max(1_000_000)
      .nullable()
      .optional()
      .describe("The next spending threshold that pauses the goal again; null or omitted: no further approval needed."),
    budget: goalBudget.optional().describe("Raise (or set) caps while approving."),
    note: z
      .string()
      .min(1)
      .max(4000)
      .optional()
      .describe("Only when the goal waits after a model declared it infeasible: what the refiner is told with the request to try again (which reading of the objective to follow, say)."),
  })
  .strict()
  .meta({ id: "Approval" });
export type ApproveBody = z.infer<typeof approveBody>;

/** GET /checks: the check library. */
export const checkCatalogue = z
  .object({
    checks: z.array(
      z.object({
        id: z.string(),
        description: z.string(),
        aliasOf: z.string().optional().describe("Set on aliases: the check whose logic this one runs with other defaults."),
        runsCode: z.boolean().describe("Runs the program's code in sandbox containers of its own (cases, test_suite)."),
        publicParams: z.array(z.string()).describe("The params a model may see when the check is hidden; the rest is material."),
        params: z.record(z.string(), z.unknown()).describe("The params as a JSON Schema."),
        example: z.record(z.string(), z.unknown()),
      }),
    ),
  })
  .meta({ id: "CheckCatalogue" });
