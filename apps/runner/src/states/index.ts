import type { State } from "@loopsmith/machine";
import type { StateHandler } from "./context";
import { execute } from "./execute";
import { generate } from "./generate";
import { inspect } from "./inspect";
import { plan } from "./plan";
import { refine } from "./refine";

/** One handler per non-terminal state. */
export const HANDLERS: Record<Exclude<State, "verified" | "failed">, StateHandler> = {
  plan,
  generate,
  execute,
  inspect,
  refine,
};

export type { GoalContext, StateHandler, StepDeps, StepResult } from "./context";
