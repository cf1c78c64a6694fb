// Goal moves the API makes on a client's (or operator's) behalf: cancel, approve, reject, retry. They go
// through the same transition table and the same compare-and-set writer as the runner's moves.
import { errorCodeOf, LoopSmithError } from "@loopsmith/core";
import { advanceGoal, asJson, goalsOf, type Goal, UUID } from "@loopsmith/db";
import { IllegalTransition, isState, isTerminal, transition, type MachineEvent, WORKING_STATES } from "@loopsmith/machine";
import { announceMove, enqueuePendingDeliveries } from "@loopsmith/webhooks";
import type { Services } from "./services";

export interface ApiMove {
  event: MachineEvent;
  detail: Record<string, unknown>;
  budgets?: unknown;
  failureMessage?: string;
}

const CAS_RETRIES = 5;

/**
 * Loads the goal (tenant-scoped unless `tenantId` is null: operators), lets `decide` pick the event, and
 * writes the move. A runner moving the goal at the same moment makes the compare-and-set fail: reload and
 * decide again. Illegal moves (cancel a verified goal...) are a 409 naming the state.
 */
export async function moveGoal(
  s: Services,
  scope: { tenantId: string | null; id: string },
  decide: (goal: Goal) => ApiMove | Promise<ApiMove>,
  log?: { warn: (obj: object, msg: string) => void },
): Promise<{ from: string; to: string; version: number }> {
  for (let i = 0; ; i++) {
    // Operators (tenantId null) act on any tenant's goal; clients only through their tenant.
    const goal =
      scope.tenantId !== null
        ? await goalsOf(s.prisma, scope.tenantId).find(scope.id)
        : UUID.test(scope.id)
          ? await s.prisma.goal.findUnique({ where: { id: scope.id } })
          : null;
    if (!goal) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${scope.id}.`);
    if (!isState(goal.state) || isTerminal(goal.state))
      throw new LoopSmithError("LS_ERR_GOAL_STATE", `The goal already ended in ${goal.state}.`, { state: goal.state });
    const m = await decide(goal);
    let move;
    try {
      move = transition(goal.state, m.event);
    } catch (e) {
      if (e instanceof IllegalTransition)
        throw new LoopSmithError("LS_ERR_GOAL_STATE", `Not possible while the goal is in ${goal.state}.`, { state: goal.state });
      throw e;
    }
    try {
      const { version } = await advanceGoal(s.prisma, {
        goalId: goal.id,
        fromVersion: goal.version,
        from: move.from,
        to: move.to,
        detail: asJson(m.detail),
        reason: move.reason,
        patch: m.budgets !== undefined ? { budgets: asJson(m.budgets) } : undefined,
        failure: m.failureMessage ? { message: m.failureMessage } : undefined,
        effects: (tx) => announceMove(tx, goal, move.to).then(() => undefined),
      });
      try {
        await enqueuePendingDeliveries(s.prisma, s.webhookQueue, s.webhooks, goal.id);
        if ((WORKING_STATES as readonly string[]).includes(move.to)) await s.enqueue({ goalId: goal.id, version });
      } catch (err) {
        // The move is committed and stands. What it schedules is found again by a runner's sweep (a goal in
        // a working state without a job, a delivery never attempted), so the client is told the truth: done.
        log?.warn({ err, goalId: goal.id }, "scheduling after an API move failed; the runner sweep will reschedule");
      }
      return { from: move.from, to: move.to, version };
    } catch (e) {
      if (errorCodeOf(e) === "LS_ERR_STALE_VERSION" && i < CAS_RETRIES) continue;
      throw e;
    }
  }
}

/** The state a goal waiting in awaiting_approval or errored left: the `from` of its latest tape row. */
export async function stateBefore(s: Services, goal: Goal): Promise<string> {
  const row = await s.prisma.transition.findFirst({ where: { goalId: goal.id, toState: goal.state }, orderBy: { seq: "desc" } });
  return row?.fromState ?? "plan";
}
