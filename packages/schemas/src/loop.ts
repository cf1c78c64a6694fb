import { z } from "zod";

// The shapes the closed loop passes between its parts: the four typed model turns, the acceptance checks,
// and what a check run produced. The model-facing objects keep every property required (nullable rather
// than optional) because strict structured-output modes demand it.

/** A JSON value, for check params. */
export const jsonValue: z.ZodType<unknown> = z.unknown();

/** How much of a hidden check's result a model may see (see the README's "Hidden material"). */
export const REVEALS = ["full", "input", "verdict"] as const;

/** The fields every check has, as a model writes them (the planner's additions). */
const checkFields = {
  id: z.string().min(1).max(100).describe("Check id, e.g. csv_matches (GET /checks lists them)."),
  params: z.record(z.string(), jsonValue).default({}).describe("Check parameters; see the check catalogue (GET /checks)."),
  kind: z.enum(["deterministic", "judgement"]).default("deterministic"),
  description: z.string().max(2000).default(""),
};

/**
 * One acceptance check. `deterministic` checks run in the verifier (unknown ids fail closed);
 * `judgement` checks are handed to the inspector model. `hidden` keeps a check's material (expected
 * values, cases, the checker files it reads) from every model and from the program's container.
 */
export const checkSpec = z
  .strictObject({
    ...checkFields,
    hidden: z
      .boolean()
      .optional()
      .describe("Keep the check's material from the models: they learn that the check exists and what it reads, never its expected values. Default: true when the check reads checker_files, else false."),
    reveal: z
      .enum(REVEALS)
      .optional()
      .describe('For hidden checks, what a failure may show a model: "verdict" (where it failed), "input" (+ the input and what the program produced; default), "full" (+ the expected value).'),
  })
  .meta({ id: "CheckSpec" });
export type CheckSpec = z.infer<typeof checkSpec>;
export type CheckSpecInput = z.input<typeof checkSpec>;

/** Where a frozen check came from: every goal's baseline, the client (binding), or the planner (additions). */
export const CHECK_SOURCES = ["baseline", "client", "planner"] as const;

/** A check as frozen at the end of PLAN: its origin and visibility resolved. */
export const frozenCheck = checkSpec
  // Defaults: plans frozen before checks had a visibility were all visible.
  .extend({ source: z.enum(CHECK_SOURCES).default("client"), hidden: z.boolean().default(false), reveal: z.enum(REVEALS).default("input") })
  .meta({ id: "FrozenCheck" });
export type FrozenCheck = z.infer<typeof frozenCheck>;

/** A check the planner adds: never hidden (its author is a model), so it has no visibility fields. */
export const plannedCheck = z.object(checkFields).meta({ id: "PlannedCheck" });

/** PLAN turn output. */
export const planOutput = z
  .object({
    objective: z.string().min(1),
    approach: z.array(z.string()),
    output_contract: z.string(),
    checks: z.array(plannedCheck),
  })
  .meta({ id: "Plan" });
export type PlanOutput = z.infer<typeof planOutput>;

/** The languages a goal's program can be written in (issue 14); each runs in its sandbox image. */
export const LANGUAGES = ["python", "javascript", "typescript"] as const;
export type Language = (typeof LANGUAGES)[number];
/** The file name endings of each language's programs. */
export const LANGUAGE_EXTENSIONS: Record<Language, readonly string[]> = { python: [".py"], javascript: [".js", ".mjs", ".cjs"], typescript: [".ts", ".mts", ".cts"] };

// Segments as the sandbox places them under /work: no "." or "..", no separators, nothing exotic.
const WORKSPACE_SEGMENT = /^[A-Za-z0-9._@+~-]{1,128}$/;
const WORKSPACE_PATH_MAX = 255;

/** Why a path cannot be a workspace file (under the program's working directory), or null when it can. */
export function workspacePathProblem(path: string): string | null {
  if (path.length === 0 || path.length > WORKSPACE_PATH_MAX) return `must be 1-${WORKSPACE_PATH_MAX} characters`;
  if (path.startsWith("/")) return "is absolute";
  const segments = path.split("/");
  if (segments.includes("..")) return "leaves the workspace (..)";
  if (!segments.every((s) => WORKSPACE_SEGMENT.test(s) && s !== ".")) return "must be '/'-separated plain names (letters, digits, . _ - @ + ~), no empty or . segments";
  if (segments[0] === "inputs" || segments[0] === "out") return `is under ${segments[0]}/, which the sandbox keeps for itself`;
  return null;
}

export const workspacePath = z
  .string()
  .superRefine((p, ctx) => {
    const problem = workspacePathProblem(p);
    if (problem) {
      ctx.addIssue({
        // Stryker disable next-line StringLiteral: equivalent; an issue's code is never shown, its path and message are
        code: "custom",
        message: `a path inside the workspace: this one ${problem}`,
      });
    }
  })
  .describe('A path relative to the workspace root (the program\'s working directory), e.g. "src/sum.ts".');

/**
 * GENERATE and REFINE turn output: one complete program, and (workspace goals) the other files it changes.
 * A plain object (no refinements), so that callers can extend it; the runner runs the program with the
 * goal's language, and the program's own file wins over an entry of `files` with the same path.
 */
export const generatedCode = z
  .object({
    filename: z
      .string()
      .regex(
        /^(?!(?:inputs|out)\/)(?:[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\/){0,7}[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\.(?:py|js|mjs|cjs|ts|mts|cts)$/,
        "a file name (a relative path in a workspace, not under inputs/ or out/) ending in .py, .js, .mjs, .cjs, .ts, .mts or .cts",
      )
      .describe("File name of the program, e.g. analysis.py (in a workspace goal: its path there, e.g. src/sum.ts)."),
    language: z.enum(LANGUAGES),
    source: z.string().min(1).max(200_000),
    notes: z.string(),
    files: z
      .array(z.object({ path: workspacePath, content: z.string().max(1_000_000) }))
      .max(100)
      .default([])
      .describe("Workspace goals: every other file the attempt changes or adds, each with its full content (never a diff). Applied to the original workspace."),
  })
  .meta({ id: "GeneratedCode" });
export type GeneratedCode = z.infer<typeof generatedCode>;

/**
 * issue 27: a model's honest give-up: the goal cannot be done as asked (say, its tests contradict its
 * objective). It can only end the goal `failed` (declared_infeasible) or ask the client; never pass it.
 */
export const infeasibleDeclaration = z.object({
  reason: z.string().min(1).max(4000).describe("Why the goal cannot be done as asked, with the evidence (which check or test contradicts which part of the objective)."),
});
export type InfeasibleDeclaration = z.infer<typeof infeasibleDeclaration>;

const INFEASIBLE_FIELD =
  "null, unless the goal cannot be done as asked (for example its tests contradict its objective): then why. This gives up honestly; it never verifies the goal.";

/** INSPECT turn output: judgement only; the machine and the verifier decide the next state. */
export const inspection = z
  .object({
    verified: z.boolean(),
    failing_checks: z.array(z.string()),
    diagnosis: z.string(),
    fix_hint: z.string(),
    // Optional here for inspections stored before it existed; the model's schema requires it (inspectorOutput).
    infeasible: infeasibleDeclaration.nullish().describe(INFEASIBLE_FIELD),
  })
  .meta({ id: "Inspection" });
export type Inspection = z.infer<typeof inspection>;

/**
 * The give-up as a model is asked for it: required and nullable in the JSON schema it is sent (strict
 * structured output), while a reply that leaves it out reads as null: a model (or a test's fake server)
 * that does not know the field is not giving up.
 */
const infeasibleAnswer = z.preprocess((v) => (v === undefined ? null : v), infeasibleDeclaration.nullable()).describe(INFEASIBLE_FIELD);

/** What the inspector model answers: the inspection, its give-up field required. */
export const inspectorOutput = inspection.extend({ infeasible: infeasibleAnswer });

/** REFINE turn output: the next program, or (infeasible set) a give-up, the program then returned unchanged. */
export const refineOutput = generatedCode.extend({ infeasible: infeasibleAnswer });
export type RefineOutput = z.infer<typeof refineOutput>;

/** A located difference in a check's result (see the verifier's Finding). */
export const checkFinding = z
  .object({
    where: z.string(),
    input: z.string().optional(),
    actual: z.string().optional(),
    expected: z.string().optional(),
    note: z.string().optional(),
  })
  .meta({ id: "CheckFinding" });

/** What one check concluded about one execution. */
/** A check run `repeat` times whose runs disagreed on the same program: a failure, reported as such. */
export const checkFlaky = z
  .object({
    runs: z.int().describe("How many times the check ran on the same program."),
    passed: z.int().describe("How many of those runs passed (at least one, and fewer than all)."),
  })
  .describe("Set when the check ran more than once on the same program (its `repeat` param) and the runs disagreed: the check failed, and is flaky rather than simply failing.")
  .meta({ id: "CheckFlaky" });
export type CheckFlaky = z.infer<typeof checkFlaky>;

export const checkOutcome = z
  .object({
    id: z.string(),
    params: z.record(z.string(), jsonValue),
    passed: z.boolean(),
    message: z.string().describe("The full verdict (the client sees everything about its own goal)."),
    feedback: z.string().describe("What the models were told: for hidden checks, without the check's material."),
    hidden: z.boolean(),
    findings: z.array(checkFinding),
    tampered: z
      .string()
      .optional()
      .describe("Set when the run showed the attempt tampering with what judges it (a locked file, the runner's configuration, the report, a run cut short before the tests finished): what was seen. Models are told only that tampering was detected."),
    flaky: checkFlaky.optional(),
  })
  .meta({ id: "CheckOutcome" });
export type CheckOutcome = z.infer<typeof checkOutcome>;
/** The file every generated program writes its answer to, in its output directory. */
export const RESULT_FILE = "result.json";

/** A scripted REFINE entry: the refiner's output, its give-up optional. */
export const scriptedRefine = generatedCode
  .extend({ infeasible: infeasibleDeclaration.nullish().describe(INFEASIBLE_FIELD) })
  .meta({ id: "ScriptedRefine" });

export const modelTurns = ["plan", "generate", "inspect", "refine"] as const;
export type ModelTurn = (typeof modelTurns)[number];

/**
 * The scripted model's script (see DESIGN.md): `inspect[i]` answers the i-th INSPECT, `refine[i]` the i-th
 * REFINE, and the last entry of a list repeats when it runs out.
 */
export const scriptedScript = z
  .object({
    plan: planOutput,
    generate: generatedCode,
    // infeasible may be left out (no entry gives up unless it says so): scripts from before it still run.
    inspect: z.array(inspection).min(1),
    refine: z.array(scriptedRefine).default([]),
    // Best-of-N (a goal's `candidates`): what the further candidates of a turn answer. Without them every
    // candidate answers as the first.
    generate_candidates: z
      .array(generatedCode)
      .max(10)
      .optional()
      .describe("Candidate k (1-based, after the first) of GENERATE answers entry k-1; the last repeats."),
    refine_candidates: z
      .array(z.array(scriptedRefine).max(10))
      .max(50)
      .optional()
      .describe("refine_candidates[i][k-1]: candidate k (after the first) of the i-th REFINE, as refine[i] answers the first."),
  })
  .meta({ id: "ScriptedModelScript" });
export type ScriptedScript = z.infer<typeof scriptedScript>;
export type ScriptedScriptInput = z.input<typeof scriptedScript>;

export const modelProviders = ["scripted", "openai-compatible", "anthropic", "google"] as const;
export type ModelProvider = (typeof modelProviders)[number];

/** Which model drives a goal. Credentials and endpoints are server configuration, never request data. */
export const modelSpec = z
  .discriminatedUnion("provider", [
    z.object({ provider: z.literal("scripted"), script: scriptedScript }).strict(),
    z
      .object({
        provider: z.enum(["openai-compatible", "anthropic", "google"]),
        model: z.string().min(1).max(200).optional().describe("Model name; the server's default when omitted."),
      })
      .strict(),
  ])
  .meta({ id: "ModelSpec" });
export type ModelSpec = z.infer<typeof modelSpec>;
