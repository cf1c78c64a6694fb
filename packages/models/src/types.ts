import type { z } from "zod";
import type { ModelProvider, ModelTurn } from "@loopsmith/schemas";

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

/** One typed turn. Agents build the instructions; a provider only turns them into a validated object. */
export interface ModelRequest<T> {
  turn: ModelTurn;
  /** 0-based: how many earlier calls of this turn the goal made. The scripted model picks its entry by it. */
  index: number;
  /** Best-of-N: which of the turn's candidates this call samples (0, the first, when absent). */
  candidate?: number;
  system: string;
  prompt: string;
  schema: z.ZodType<T>;
  /** Name of the structured output (sent to providers that take one), e.g. "Plan". */
  schemaName: string;
}

/** A reply that failed the schema; its error was fed back to the model on the next try. */
export interface RejectedReply {
  text: string | null;
  error: string;
}

export interface ModelResponse<T> {
  output: T;
  /** Summed over every try, rejected ones included: that is what was billed. */
  usage: ModelUsage;
  /** Summed over every try. */
  latencyMs: number;
  /** 1 when the first reply was valid. */
  tries: number;
  rejected: RejectedReply[];
}

export interface LoopModel {
  readonly provider: ModelProvider;
  readonly modelName: string;
  complete<T>(req: ModelRequest<T>): Promise<ModelResponse<T>>;
}
