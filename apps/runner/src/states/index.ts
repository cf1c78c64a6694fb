import type { State } from "@loopsmith/machine";
import { awaitingApproval } from "./awaiting-approval";
import type { StateHandler } from "./context";
import { execute } from "./execute";
import { generate } from "./generate";
import { inspect } from "./inspect";
import { plan } from "./plan";
import { refine } from "./refine";

/** One handler per state a step job can find a goal in (errored waits for an operator, not a job). */
export const HANDLERS: Record<Exclude<State, "verified" | "failed" | "cancelled" | "errored">, StateHandler> = {
  plan,
  generate,
  execute,
  inspect,
  refine,
  awaiting_approval: awaitingApproval,
};

export { StepStop } from "./context";
export type { GoalContext, StateHandler, StepConfig, StepDeps, StepResult } from "./context";
