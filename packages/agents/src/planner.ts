import { planOutput, type CheckSpec, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { listChecks } from "@loopsmith/verifier";
import { describeChecks } from "./checks";
import { describeInputs, type InputSummary } from "./contract";

export function plannerInstructions(deliverable: string | null): string {
  const contract =
    deliverable === null
      ? "the program's interface: module-level functions with their exact signatures and return types (the checks import and call them)"
      : deliverable.endsWith(".json")
        ? `the exact JSON shape of ${deliverable} (keys, types, rounding)`
        : `the exact format of ${deliverable} (for a CSV: columns in order, types, formatting)`;
  return `You are the planner of LoopSmith, a system that reaches goals by writing a Python program,
running it in a sandbox and checking the result with deterministic checks.
Your one job: turn the goal into a plan. Do not write the program.
- objective: the goal restated precisely.
- approach: short ordered steps the program should take, naming the data problems to handle.
- output_contract: ${contract}.
- checks: deterministic checks that prove the result is right, chosen from the check library, with params.
  The client's checks are already binding and will always run; add checks, never restate them weaker.
  Some client checks are hidden (you see what they read, not what they expect); you cannot use the
  client's checker files. Use kind "judgement" only for criteria no deterministic check can decide.`;
}

/** The instructions for the default deliverable (result.json). */
export const PLANNER_INSTRUCTIONS = plannerInstructions("result.json");

export interface PlannerInput {
  objective: string;
  success: string | null;
  inputs: InputSummary[];
  clientChecks: CheckSpec[];
  deliverable?: string | null;
}

export function plannerRequest(input: PlannerInput): ModelRequest<PlanOutput> {
  const library = listChecks()
    .map((c) => `- ${c.id}${c.aliasOf ? ` (alias of ${c.aliasOf})` : ""}: ${c.description} Example params: ${JSON.stringify(c.example)}`)
    .join("\n");
  const deliverable = input.deliverable === undefined ? "result.json" : input.deliverable;
  const prompt = [
    `Goal: ${input.objective}`,
    `Deliverable: ${deliverable === null ? "the program itself (checks import it and call its functions)" : `the file ${deliverable} in OUTPUT_DIR`}`,
    input.success ? `Definition of done, in the client's words: ${input.success}` : null,
    `Input files:\n${describeInputs(input.inputs)}`,
    `The client's binding checks:\n${input.clientChecks.length ? describeChecks(input.clientChecks) : "(none)"}`,
    `Check library:\n${library}`,
  ]
    .filter(Boolean)
    .join("\n\n");
  return { turn: "plan", index: 0, system: plannerInstructions(deliverable), prompt, schema: planOutput, schemaName: "Plan" };
}
