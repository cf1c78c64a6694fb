import type { ModelTurn, ScriptedScript } from "@loopsmith/schemas";
import { ModelOutputError, summarizeIssues } from "./errors";
import type { LoopModel, ModelRequest, ModelResponse } from "./types";

/** Rough token estimate (~4 characters a token), deterministic so token budgets behave the same every run. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/**
 * The entry answering the index-th call of a turn; a list's last entry repeats once it runs out. A further
 * candidate (best-of-N) answers from generate_candidates / refine_candidates when the script has them.
 */
function scriptEntry(script: ScriptedScript, turn: ModelTurn, index: number, candidate = 0): unknown {
  const pick = (entries: readonly unknown[]) => entries[Math.min(index, entries.length - 1)];
  const nth = (entries: readonly unknown[] | undefined) => (entries && entries.length > 0 ? entries[Math.min(candidate - 1, entries.length - 1)] : undefined);
  if (candidate > 0 && turn === "generate") {
    const got = nth(script.generate_candidates);
    if (got !== undefined) return got;
  }
  if (candidate > 0 && turn === "refine" && script.refine_candidates && script.refine_candidates.length > 0) {
    const got = nth(pick(script.refine_candidates) as unknown[] | undefined);
    if (got !== undefined) return got;
  }
  switch (turn) {
    case "plan":
      return script.plan;
    case "generate":
      return script.generate;
    case "inspect":
      return pick(script.inspect);
    case "refine":
      return pick(script.refine);
  }
}

/** A real provider that answers from a goal's script instead of a model. */
export function createScriptedModel(script: ScriptedScript): LoopModel {
  return {
    provider: "scripted",
    modelName: "scripted",
    async complete<T>(req: ModelRequest<T>): Promise<ModelResponse<T>> {
      const started = performance.now();
      const entry = scriptEntry(script, req.turn, req.index, req.candidate);
      const inputTokens = estimateTokens(req.system + req.prompt);
      const elapsed = () => Math.round(performance.now() - started);
      // A retry cannot change a script, so every failure here is final after one try.
      if (entry === undefined) {
        const error = `the script has no ${req.turn} entry`;
        throw new ModelOutputError(`Scripted model: ${error}.`, {
          tries: 1,
          rejected: [{ text: null, error }],
          usage: { inputTokens, outputTokens: 0 },
          latencyMs: elapsed(),
        });
      }
      const text = JSON.stringify(entry);
      const parsed = req.schema.safeParse(entry);
      if (!parsed.success) {
        const error = summarizeIssues(parsed.error.issues);
        throw new ModelOutputError(`Scripted model: the script's ${req.turn} entry does not match ${req.schemaName}: ${error}`, {
          tries: 1,
          rejected: [{ text, error }],
          usage: { inputTokens, outputTokens: estimateTokens(text) },
          latencyMs: elapsed(),
        });
      }
      const usage = { inputTokens, outputTokens: estimateTokens(JSON.stringify(parsed.data)) };
      return { output: parsed.data, usage, latencyMs: elapsed(), tries: 1, rejected: [] };
    },
  };
}
