// What every state handler gets and returns. Handlers do the state's work (a model turn, a sandbox run,
// the checks) and describe the outcome as data: an event for the machine, the evidence for the tape, and
// the rows to write. They never write goal state themselves; step.ts does, through @loopsmith/db.
import type { Logger, Metrics } from "@loopsmith/core";
import type { Goal, PrismaClient, RowInsert } from "@loopsmith/db";
import type { MachineEvent } from "@loopsmith/machine";
import type { LoopModel, PricingConfig } from "@loopsmith/models";
import type { FailureReport } from "@loopsmith/schemas";
import type { Sandbox } from "@loopsmith/sandbox";
import type { CheckPool } from "@loopsmith/verifier";
import type { GoalMaterial } from "./material";
import type { ModelSpec } from "@loopsmith/schemas";

export interface StepDeps {
  prisma: PrismaClient;
  sandbox: Sandbox;
  /** Runs the deterministic checks off the event loop, each under a time limit. */
  checks: CheckPool;
  /** Builds the model a goal asked for (server config decides what is available). */
  models: (spec: ModelSpec) => LoopModel;
  log: Logger;
  /** Injected so tests can pin time. */
  now: () => Date;
  config: StepConfig;
  /** A goal's inputs, checker files, workspace and plan: read once per runner, not once per step. */
  material: GoalMaterial;
  /** Model calls and goal moves are reported here (default: nowhere). */
  metrics?: Metrics;
}

/** The runner settings steps read (see config.ts for what each means). */
export interface StepConfig extends PricingConfig {
  STUCK_REPEATS: number;
  STUCK_WINDOW: number;
  MODEL_OUTPUT_TOKENS_ESTIMATE: number;
}

export interface GoalContext {
  goal: Goal;
  model: LoopModel;
  /** Aborted when the goal moves on without this step (cancelled): long work (a sandbox run) stops. */
  signal: AbortSignal;
}

export interface StepResult {
  event: MachineEvent;
  /** Evidence stored on the tape row of the move this step causes. */
  detail: Record<string, unknown>;
  /** Goal columns this step changes (besides state and version). */
  attempts?: number;
  /** The verified report, when the step's evidence makes the goal verifiable. */
  report?: unknown;
  /** Rows written with the move, in its one statement (the plan, the execution, check results...). */
  rows?: RowInsert[];
  /** For moves to failed: the report's message and extra fields. */
  failure?: { message: string; extra?: Partial<FailureReport> };
  /**
   * What to commit instead when the database refuses this result's evidence as data (see step.ts): the same
   * move with the offending evidence replaced by a note saying why. Without it such a refusal is retried.
   */
  degraded?: (why: string) => Omit<StepResult, "event" | "degraded">;
}

/**
 * Thrown by a handler when a guard stops the step before its work (a budget, the approval threshold):
 * the step moves on `event` with `detail` and none of the handler's evidence.
 */
export class StepStop extends Error {
  constructor(
    readonly event: MachineEvent,
    readonly detail: Record<string, unknown>,
    readonly failureMessage?: string,
  ) {
    super(`step stopped: ${event.type}`);
    this.name = "StepStop";
  }
}

export type StateHandler = (ctx: GoalContext, deps: StepDeps) => Promise<StepResult>;
