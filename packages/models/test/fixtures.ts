import {
  generatedCode,
  inspection,
  planOutput,
  scriptedScript,
  type GeneratedCode,
  type Inspection,
  type PlanOutput,
  type ScriptedScript,
} from "@loopsmith/schemas";
import type { ModelRequest } from "../src/index";

export const plan: PlanOutput = {
  objective: "Sum the sales column",
  approach: ["read the CSV", "sum the column"],
  output_contract: "result.json with a total",
  checks: [{ id: "file_exists", params: { path: "result.json" }, kind: "deterministic", description: "" }],
};

export const code = (source: string): GeneratedCode => ({ filename: "analysis.py", language: "python", source, notes: "", files: [] });

export const verdict = (verified: boolean): Inspection => ({
  verified,
  failing_checks: verified ? [] : ["file_exists"],
  diagnosis: verified ? "ok" : "no output",
  fix_hint: verified ? "" : "write result.json",
});

export function script(overrides: Partial<ScriptedScript> = {}): ScriptedScript {
  return scriptedScript.parse({ plan, generate: code("print(1)"), inspect: [verdict(false)], ...overrides });
}

export const planRequest: ModelRequest<PlanOutput> = {
  turn: "plan",
  index: 0,
  system: "You plan.",
  prompt: "Goal: sum the sales column.",
  schema: planOutput,
  schemaName: "Plan",
};

export const inspectRequest = (index: number): ModelRequest<Inspection> => ({
  turn: "inspect",
  index,
  system: "You inspect.",
  prompt: `Inspection ${index}`,
  schema: inspection,
  schemaName: "Inspection",
});

export const refineRequest = (index: number): ModelRequest<GeneratedCode> => ({
  turn: "refine",
  index,
  system: "You refine.",
  prompt: `Refine ${index}`,
  schema: generatedCode,
  schemaName: "GeneratedCode",
});
