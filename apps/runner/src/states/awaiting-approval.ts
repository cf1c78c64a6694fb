// AWAITING_APPROVAL does no work: the only step job that can find a goal still waiting at the version it
// was scheduled from is the delayed one scheduled on entry, so running means the approval timed out. An
// approval or rejection moves the goal on first, and that job then finds a newer version and does nothing.
import { giveUpOf } from "@loopsmith/db";
import type { StateHandler } from "./context";

export const awaitingApproval: StateHandler = async (ctx, deps) => {
  // issue 27: a goal waiting after a give-up was asked whether to go on; no answer leaves the give-up standing.
  const entry = await deps.prisma.transition.findUnique({ where: { goalId_seq: { goalId: ctx.goal.id, seq: ctx.goal.version } } });
  const giveUp = entry?.toState === "awaiting_approval" ? giveUpOf(entry.detail) : null;
  if (giveUp) {
    return {
      event: { type: "GIVE_UP_UPHELD" },
      detail: { waited_since: ctx.goal.updatedAt.toISOString(), answer: "none" },
      failure: { message: `No answer came within the approval timeout, so the give-up stands. The ${giveUp.declared_by} declared the goal infeasible: ${giveUp.reason}` },
    };
  }
  return {
    event: { type: "APPROVAL_TIMED_OUT" },
    detail: { waited_since: ctx.goal.updatedAt.toISOString() },
    failure: { message: "No approval or rejection came within the approval timeout." },
  };
};
