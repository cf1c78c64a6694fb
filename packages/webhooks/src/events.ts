import { WEBHOOK_EVENTS, type WebhookEvent } from "@loopsmith/schemas";

export { WEBHOOK_EVENTS, type WebhookEvent };

const BY_STATE: Record<string, WebhookEvent> = {
  verified: "goal.verified",
  failed: "goal.failed",
  cancelled: "goal.cancelled",
  awaiting_approval: "goal.awaiting_approval",
};

const BY_STATE_OF_TICK: Record<string, WebhookEvent> = {
  ...BY_STATE,
  verified: "schedule.tick.verified",
  failed: "schedule.tick.failed",
};

/**
 * The event a move into `state` announces, or null for states nobody is notified about. A goal a
 * schedule's tick created ends with schedule.tick.verified or schedule.tick.failed.
 */
export function eventForState(state: string, goal?: { scheduleId?: string | null }): WebhookEvent | null {
  const events = goal?.scheduleId ? BY_STATE_OF_TICK : BY_STATE;
  return Object.hasOwn(events, state) ? events[state]! : null;
}
