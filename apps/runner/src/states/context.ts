// What every state handler gets and returns. Handlers do the state's work (a model turn, a sandbox run,
// the checks) and describe the outcome as data: an event for the machine, the evidence for the tape, and
// the rows to write. They never write goal state themselves; step.ts does, through @loopsmith/db.
import type { Logger } from "@loopsmith/core";
import type { Goal, PrismaClient, Tx } from "@loopsmith/db";
import type { MachineEvent } from "@loopsmith/machine";
import type { LoopModel } from "@loopsmith/models";
import type { Sandbox } from "@loopsmith/sandbox";
import type { ModelSpec } from "@loopsmith/schemas";

export interface StepDeps {
  prisma: PrismaClient;
  sandbox: Sandbox;
  /** Builds the model a goal asked for (server config decides what is available). */
  models: (spec: ModelSpec) => LoopModel;
  log: Logger;
  /** Injected so tests can pin time. */
  now: () => Date;
}

export interface GoalContext {
  goal: Goal;
  model: LoopModel;
}

export interface StepResult {
  event: MachineEvent;
  /** Evidence stored on the tape row of the move this step causes. */
  detail: Record<string, unknown>;
  /** Goal columns this step changes (besides state and version). */
  attempts?: number;
  /** The verified report, when the step's evidence makes the goal verifiable. */
  report?: unknown;
  /** Rows written in the same transaction as the move. */
  effects?: (tx: Tx) => Promise<void>;
}

export type StateHandler = (ctx: GoalContext, deps: StepDeps) => Promise<StepResult>;
