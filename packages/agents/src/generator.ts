import { generatedCode, type CheckSpec, type GeneratedCode, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { describeChecks } from "./checks";
import { describeInputs, scriptContract, type InputSummary } from "./contract";

export function generatorInstructions(deliverable: string | null): string {
  return `You are the generator of LoopSmith. Your one job: write one complete Python program that
carries out the plan. Return the whole file, never a fragment or a diff.
${scriptContract(deliverable)}
Handle the data as it really is (look at the input preview): messy numbers, blanks, mixed formats.
Some checks may be hidden: you are told what they read, not what they expect. Solve the task itself;
an answer copied from anywhere or a report that merely claims success passes nothing.`;
}

/** The instructions for the default deliverable (result.json). */
export const GENERATOR_INSTRUCTIONS = generatorInstructions("result.json");

export interface GeneratorInput {
  plan: PlanOutput;
  checks: CheckSpec[];
  inputs: InputSummary[];
  /** The goal's deliverable (default result.json); null: the program itself. */
  deliverable?: string | null;
}

export function generatorRequest(input: GeneratorInput): ModelRequest<GeneratedCode> {
  const prompt = [
    `Objective: ${input.plan.objective}`,
    `Approach:\n${input.plan.approach.map((s, i) => `${i + 1}. ${s}`).join("\n")}`,
    `Output contract: ${input.plan.output_contract}`,
    `The result must pass these checks:\n${describeChecks(input.checks)}`,
    `Input files:\n${describeInputs(input.inputs)}`,
  ].join("\n\n");
  return { turn: "generate", index: 0, system: generatorInstructions(input.deliverable === undefined ? "result.json" : input.deliverable), prompt, schema: generatedCode, schemaName: "GeneratedCode" };
}
