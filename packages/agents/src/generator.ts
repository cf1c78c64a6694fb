import { generatedCode, type CheckSpec, type GeneratedCode, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { describeChecks } from "./checks";
import { describeInputs, SCRIPT_CONTRACT, type InputSummary } from "./contract";

export const GENERATOR_INSTRUCTIONS = `You are the generator of LoopSmith. Your one job: write one complete Python program that
carries out the plan. Return the whole file, never a fragment or a diff.
${SCRIPT_CONTRACT}
Handle the data as it really is (look at the input preview): messy numbers, blanks, mixed formats.`;

export interface GeneratorInput {
  plan: PlanOutput;
  checks: CheckSpec[];
  inputs: InputSummary[];
}

export function generatorRequest(input: GeneratorInput): ModelRequest<GeneratedCode> {
  const prompt = [
    `Objective: ${input.plan.objective}`,
    `Approach:\n${input.plan.approach.map((s, i) => `${i + 1}. ${s}`).join("\n")}`,
    `Output contract: ${input.plan.output_contract}`,
    `The result must pass these checks:\n${describeChecks(input.checks)}`,
    `Input files:\n${describeInputs(input.inputs)}`,
  ].join("\n\n");
  return { turn: "generate", index: 0, system: GENERATOR_INSTRUCTIONS, prompt, schema: generatedCode, schemaName: "GeneratedCode" };
}
