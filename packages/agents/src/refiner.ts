import { refineOutput, type CheckOutcome, type GeneratedCode, type Inspection, type Language, type PlanOutput, type RefineOutput } from "@loopsmith/schemas";
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
${GIVE_UP_OPTION}
${scriptContract(deliverable, language, workspace)}`;
}

/** issue 27: the honest exit, offered to both arms alike. */
export const GIVE_UP_OPTION = `Leave infeasible null unless the goal cannot be done as asked (its checks or tests contradict the
objective or each other): then set infeasible.reason with the evidence and return the program unchanged.
That gives up honestly; it never verifies the goal. Never write a program that only fools the checks.`;

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
  /** issue 27: a model declared the goal infeasible and the client asked to go on (with a note, perhaps). */
  overruledGiveUp?: { reason: string; note: string | null } | null;
}

/** The control arm's refiner: the task and its own program, and only that the attempt was wrong. */
export function retryOnlyInstructions(deliverable: string | null, language: Language = "python", workspace = false): string {
  return `You are the refiner of LoopSmith. The program below did not achieve the objective. You are not told
why. Write a different, complete solution (the whole file, never a diff).
${GIVE_UP_OPTION}
${scriptContract(deliverable, language, workspace)}`;
}

export const RETRY_ONLY_MESSAGE = "That attempt was wrong. Write a different solution.";

export function refinerRequest(input: RefinerInput): ModelRequest<RefineOutput> {
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
      // The client's own words only: the give-up's reason may quote the run, which this arm is not shown.
      ...(input.overruledGiveUp ? [overruledText(null, input.overruledGiveUp.note)] : []),
    ].join("\n\n");
    return { turn: "refine", index: input.run.attempt - 1, system: retryOnlyInstructions(deliverable, language, ws), prompt, schema: refineOutput, schemaName: "GeneratedCode" };
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
    ...(input.overruledGiveUp ? [overruledText(input.overruledGiveUp.reason, input.overruledGiveUp.note)] : []),
  ].join("\n\n");
  return {
    turn: "refine",
    index: input.run.attempt - 1,
    system: refinerInstructions(deliverable, language, ws),
    prompt,
    schema: refineOutput,
    schemaName: "GeneratedCode",
  };
}

function overruledText(reason: string | null, note: string | null): string {
  return [
    reason === null ? null : `Earlier this goal was declared infeasible: ${reason}`,
    "The client read the give-up and asked to keep trying: write the next program.",
    note === null ? null : `The client's note: ${note}`,
  ]
    .filter(Boolean)
    .join("\n");
}
