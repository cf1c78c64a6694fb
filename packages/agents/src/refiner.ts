import { generatedCode, type CheckOutcome, type GeneratedCode, type Inspection, type Language, type PlanOutput } from "@loopsmith/schemas";
import type { ModelRequest } from "@loopsmith/models";
import { describeOutcomes } from "./checks";
import { describeWorkspace, scriptContract } from "./contract";
import type { WorkspacePrompt } from "./generator";
import { describeRun, type RunSummary } from "./run-summary";

export function refinerInstructions(deliverable: string | null, language: Language = "python", workspace = false): string {
  return `You are the refiner of LoopSmith. Your one job: fix the program from the real failure below.
Read the actual error and the failed checks, change what caused them, and return the whole corrected file
(never a diff). Keep what already works. A hidden check shows you where it failed, not what it expected:
fix the cause, do not guess at answers.
${scriptContract(deliverable, language, workspace)}`;
}

/** The instructions for the default deliverable (result.json). */
export const REFINER_INSTRUCTIONS = refinerInstructions("result.json");

export interface RefinerInput {
  plan: PlanOutput;
  code: Omit<GeneratedCode, "files"> & { files?: GeneratedCode["files"] };
  run: RunSummary;
  failed: CheckOutcome[];
  inspection: Inspection;
  deliverable?: string | null;
  /** "retry_only": the control arm, told only that the attempt was wrong (see retryOnlyRequest). */
  feedback?: "full" | "retry_only";
  language?: Language;
  workspace?: WorkspacePrompt | null;
}

/** The control arm's refiner: the task and its own program, and only that the attempt was wrong. */
export function retryOnlyInstructions(deliverable: string | null, language: Language = "python", workspace = false): string {
  return `You are the refiner of LoopSmith. The program below did not achieve the objective. You are not told
why. Write a different, complete solution (the whole file, never a diff).
${scriptContract(deliverable, language, workspace)}`;
}

export const RETRY_ONLY_MESSAGE = "That attempt was wrong. Write a different solution.";

export function refinerRequest(input: RefinerInput): ModelRequest<GeneratedCode> {
  const deliverable = input.deliverable === undefined ? "result.json" : input.deliverable;
  const language = input.language ?? "python";
  const ws = Boolean(input.workspace);
  const fence = language === "python" ? "python" : language;
  // issue 14: the attempt's other files, and the workspace they were applied to.
  const extra = [
    ...(input.code.files ?? []).map((f) => `Also changed by that attempt, ${f.path}:\n\`\`\`\n${f.content}\n\`\`\``),
    ...(input.workspace ? [`The original workspace:\n${describeWorkspace(input.workspace.files, input.workspace.locked)}`] : []),
  ];
  if (input.feedback === "retry_only") {
    // Nothing of the run, the checks or the inspection: this arm measures what real feedback is worth.
    const prompt = [
      `Objective: ${input.plan.objective}`,
      `Output contract: ${input.plan.output_contract}`,
      `The program (${input.code.filename}):\n\`\`\`${fence}\n${input.code.source}\n\`\`\``,
      ...extra,
      RETRY_ONLY_MESSAGE,
    ].join("\n\n");
    return { turn: "refine", index: input.run.attempt - 1, system: retryOnlyInstructions(deliverable, language, ws), prompt, schema: generatedCode, schemaName: "GeneratedCode" };
  }
  const prompt = [
    `Objective: ${input.plan.objective}`,
    `Output contract: ${input.plan.output_contract}`,
    `The program (${input.code.filename}):\n\`\`\`${fence}\n${input.code.source}\n\`\`\``,
    ...extra,
    `What really happened:\n${describeRun(input.run)}`,
    `Failed checks:\n${describeOutcomes(input.failed)}`,
    `Diagnosis: ${input.inspection.diagnosis}`,
    `Fix hint: ${input.inspection.fix_hint}`,
  ].join("\n\n");
  return {
    turn: "refine",
    index: input.run.attempt - 1,
    system: refinerInstructions(deliverable, language, ws),
    prompt,
    schema: generatedCode,
    schemaName: "GeneratedCode",
  };
}
