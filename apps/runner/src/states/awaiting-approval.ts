// AWAITING_APPROVAL does no work: the only step job that can find a goal still waiting at the version it
// was scheduled from is the delayed one scheduled on entry, so running means the approval timed out. An
// approval or rejection moves the goal on first, and that job then finds a newer version and does nothing.
import type { StateHandler } from "./context";

export const awaitingApproval: StateHandler = async (ctx) => ({
  event: { type: "APPROVAL_TIMED_OUT" },
  detail: { waited_since: ctx.goal.updatedAt.toISOString() },
  failure: { message: "No approval or rejection came within the approval timeout." },
});
