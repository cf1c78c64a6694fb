import { planOutput, type CheckSpec, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { listChecks } from "@loopsmith/verifier";
import { describeChecks } from "./checks";
import { describeInputs, RESULT_FILE, type InputSummary } from "./contract";

export const PLANNER_INSTRUCTIONS = `You are the planner of LoopSmith, a system that reaches goals by writing a Python program,
running it in a sandbox and checking the result with deterministic checks.
Your one job: turn the goal into a plan. Do not write the program.
- objective: the goal restated precisely.
- approach: short ordered steps the program should take, naming the data problems to handle.
- output_contract: the exact JSON shape of ${RESULT_FILE} (keys, types, rounding).
- checks: deterministic checks that prove the result is right, chosen from the check library, with params.
  The client's checks are already binding and will always run; add checks, never restate them weaker.
  Use kind "judgement" only for criteria no deterministic check can decide.`;

export interface PlannerInput {
  objective: string;
  success: string | null;
  inputs: InputSummary[];
  clientChecks: CheckSpec[];
}

export function plannerRequest(input: PlannerInput): ModelRequest<PlanOutput> {
  const library = listChecks()
    .map((c) => `- ${c.id}${c.aliasOf ? ` (alias of ${c.aliasOf})` : ""}: ${c.description}`)
    .join("\n");
  const prompt = [
    `Goal: ${input.objective}`,
    input.success ? `Definition of done, in the client's words: ${input.success}` : null,
    `Input files:\n${describeInputs(input.inputs)}`,
    `The client's binding checks:\n${input.clientChecks.length ? describeChecks(input.clientChecks) : "(none)"}`,
    `Check library:\n${library}`,
  ]
    .filter(Boolean)
    .join("\n\n");
  return { turn: "plan", index: 0, system: PLANNER_INSTRUCTIONS, prompt, schema: planOutput, schemaName: "Plan" };
}
