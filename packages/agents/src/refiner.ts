import { generatedCode, type CheckOutcome, type GeneratedCode, type Inspection, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { describeOutcomes } from "./checks";
import { scriptContract } from "./contract";
import { describeRun, type RunSummary } from "./run-summary";

export function refinerInstructions(deliverable: string | null): string {
  return `You are the refiner of LoopSmith. Your one job: fix the program from the real failure below.
Read the actual error and the failed checks, change what caused them, and return the whole corrected file
(never a diff). Keep what already works. A hidden check shows you where it failed, not what it expected:
fix the cause, do not guess at answers.
${scriptContract(deliverable)}`;
}

/** The instructions for the default deliverable (result.json). */
export const REFINER_INSTRUCTIONS = refinerInstructions("result.json");

export interface RefinerInput {
  plan: PlanOutput;
  code: GeneratedCode;
  run: RunSummary;
  failed: CheckOutcome[];
  inspection: Inspection;
  deliverable?: string | null;
}

export function refinerRequest(input: RefinerInput): ModelRequest<GeneratedCode> {
  const prompt = [
    `Objective: ${input.plan.objective}`,
    `Output contract: ${input.plan.output_contract}`,
    `The program (${input.code.filename}):\n\`\`\`python\n${input.code.source}\n\`\`\``,
    `What really happened:\n${describeRun(input.run)}`,
    `Failed checks:\n${describeOutcomes(input.failed)}`,
    `Diagnosis: ${input.inspection.diagnosis}`,
    `Fix hint: ${input.inspection.fix_hint}`,
  ].join("\n\n");
  return {
    turn: "refine",
    index: input.run.attempt - 1,
    system: refinerInstructions(input.deliverable === undefined ? "result.json" : input.deliverable),
    prompt,
    schema: generatedCode,
    schemaName: "GeneratedCode",
  };
}
