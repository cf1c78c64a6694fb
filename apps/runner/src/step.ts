// One step of one goal: load it, check the job is not stale, run the handler of its state, let the machine
// pick the next state, write the move (CAS + tape + evidence in one transaction), schedule the next step.
import { errorCodeOf } from "@loopsmith/core";
import { advanceGoal } from "@loopsmith/db";
import { isState, isTerminal, transition } from "@loopsmith/machine";
import type { LoopModel } from "@loopsmith/models";
import { modelSpec, type GoalJob } from "@loopsmith/schemas";
import { HANDLERS, type StepDeps } from "./states";

export type StepOutcome =
  | { done: false; skipped: "missing" | "stale" | "terminal"; state?: string }
  | { done: true; from: string; to: string; version: number };

export interface StepRunnerDeps extends StepDeps {
  /** Schedules the goal's next step. */
  enqueue: (job: GoalJob) => Promise<void>;
}

export async function runStep(deps: StepRunnerDeps, job: GoalJob): Promise<StepOutcome> {
  const goal = await deps.prisma.goal.findUnique({ where: { id: job.goalId } });
  if (!goal) return { done: false, skipped: "missing" };
  if (!isState(goal.state) || isTerminal(goal.state)) return { done: false, skipped: "terminal", state: goal.state };
  // A job scheduled from an older version already happened (or was superseded): doing it again would
  // duplicate a tape row. A job from a newer version than the goal cannot exist.
  if (goal.version !== job.version) {
    // One step ahead: this job's move was written but scheduling the next step may have failed (this is
    // a redelivery). Scheduling it again is harmless: job ids are per version, so BullMQ keeps one.
    if (goal.version === job.version + 1) await deps.enqueue({ goalId: goal.id, version: goal.version });
    return { done: false, skipped: "stale", state: goal.state };
  }

  const state = goal.state as keyof typeof HANDLERS;
  // Built on first use: EXECUTE needs no model, and a model that cannot be built is a model failure of
  // the step that asked for it (see modelTurn), not a crash of every step.
  let model: LoopModel | undefined;
  const ctx = {
    goal,
    get model() {
      return (model ??= deps.models(modelSpec.parse(goal.model)));
    },
  };
  const result = await HANDLERS[state](ctx, deps);
  const move = transition(state, result.event);

  const finished = isTerminal(move.to) ? deps.now() : undefined;
  const detail = move.reason ? { ...result.detail, reason: move.reason } : result.detail;
  try {
    const { version } = await advanceGoal(deps.prisma, {
      goalId: goal.id,
      fromVersion: goal.version,
      from: move.from,
      to: move.to,
      detail: detail as object,
      patch: {
        ...(result.attempts !== undefined ? { attempts: result.attempts } : {}),
        ...(move.to === "verified" ? { verified: true, report: result.report as object, finishedAt: finished } : {}),
        ...(move.to === "failed" ? { failureReason: move.reason ?? "unknown", finishedAt: finished } : {}),
      },
      effects: result.effects,
    });
    deps.log.info({ goalId: goal.id, from: move.from, to: move.to, version }, "goal moved");
    if (!isTerminal(move.to)) await deps.enqueue({ goalId: goal.id, version });
    return { done: true, from: move.from, to: move.to, version };
  } catch (e) {
    // Another runner took this step first: its move stands and ours is dropped, evidence and all.
    if (errorCodeOf(e) === "LS_ERR_STALE_VERSION") return { done: false, skipped: "stale", state: goal.state };
    throw e;
  }
}
