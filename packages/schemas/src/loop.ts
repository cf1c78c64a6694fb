import { z } from "zod";

// The shapes the closed loop passes between its parts: the four typed model turns, the acceptance checks,
// and what a check run produced. The model-facing objects keep every property required (nullable rather
// than optional) because strict structured-output modes demand it.

/** A JSON value, for check params. */
export const jsonValue: z.ZodType<unknown> = z.unknown();

/**
 * One acceptance check. `deterministic` checks run in the verifier (unknown ids fail closed);
 * `judgement` checks are handed to the inspector model.
 */
export const checkSpec = z
  .object({
    id: z.string().min(1).max(100).describe("Check id, e.g. reconciles_total."),
    params: z.record(z.string(), jsonValue).default({}).describe("Check parameters; see the check library."),
    kind: z.enum(["deterministic", "judgement"]).default("deterministic"),
    description: z.string().max(2000).default(""),
  })
  .meta({ id: "CheckSpec" });
export type CheckSpec = z.infer<typeof checkSpec>;
export type CheckSpecInput = z.input<typeof checkSpec>;

/** PLAN turn output. */
export const planOutput = z
  .object({
    objective: z.string().min(1),
    approach: z.array(z.string()),
    output_contract: z.string(),
    checks: z.array(checkSpec),
  })
  .meta({ id: "Plan" });
export type PlanOutput = z.infer<typeof planOutput>;

/** GENERATE and REFINE turn output: one complete program. */
export const generatedCode = z
  .object({
    filename: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}\.py$/, "a plain file name ending in .py")
      .describe("File name of the script, e.g. analysis.py."),
    language: z.literal("python"),
    source: z.string().min(1).max(200_000),
    notes: z.string(),
  })
  .meta({ id: "GeneratedCode" });
export type GeneratedCode = z.infer<typeof generatedCode>;

/** INSPECT turn output: judgement only; the machine and the verifier decide the next state. */
export const inspection = z
  .object({
    verified: z.boolean(),
    failing_checks: z.array(z.string()),
    diagnosis: z.string(),
    fix_hint: z.string(),
  })
  .meta({ id: "Inspection" });
export type Inspection = z.infer<typeof inspection>;

/** What one check concluded about one execution. */
export const checkOutcome = z
  .object({
    id: z.string(),
    params: z.record(z.string(), jsonValue),
    passed: z.boolean(),
    message: z.string(),
  })
  .meta({ id: "CheckOutcome" });
export type CheckOutcome = z.infer<typeof checkOutcome>;

/** The file every generated program writes its answer to, in its output directory. */
export const RESULT_FILE = "result.json";

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
    inspect: z.array(inspection).min(1),
    refine: z.array(generatedCode).default([]),
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
