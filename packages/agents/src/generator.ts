import { generatedCode, type CheckSpec, type GeneratedCode, type Language, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { describeChecks } from "./checks";
import { describeInputs, describeWorkspace, scriptContract, type InputSummary } from "./contract";

const LANGUAGE_NAME: Record<Language, string> = { python: "Python", javascript: "JavaScript", typescript: "TypeScript" };

/** issue 14: a goal's language and workspace, as the generator and refiner are told about them. */
export interface WorkspacePrompt {
  files: { path: string; content: Buffer }[];
  locked: string[];
}

export function generatorInstructions(deliverable: string | null, language: Language = "python", workspace = false): string {
  return `You are the generator of LoopSmith. Your one job: write one complete ${LANGUAGE_NAME[language]} program that
carries out the plan. Return the whole file, never a fragment or a diff (language: "${language}").
${scriptContract(deliverable, language, workspace)}
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
  language?: Language;
  workspace?: WorkspacePrompt | null;
}

export function generatorRequest(input: GeneratorInput): ModelRequest<GeneratedCode> {
  const prompt = [
    `Objective: ${input.plan.objective}`,
    `Approach:\n${input.plan.approach.map((s, i) => `${i + 1}. ${s}`).join("\n")}`,
    `Output contract: ${input.plan.output_contract}`,
    `The result must pass these checks:\n${describeChecks(input.checks)}`,
    `Input files:\n${describeInputs(input.inputs)}`,
    ...(input.workspace ? [`The workspace:\n${describeWorkspace(input.workspace.files, input.workspace.locked)}`] : []),
  ].join("\n\n");
  const system = generatorInstructions(input.deliverable === undefined ? "result.json" : input.deliverable, input.language ?? "python", Boolean(input.workspace));
  return { turn: "generate", index: 0, system, prompt, schema: generatedCode, schemaName: "GeneratedCode" };
}
