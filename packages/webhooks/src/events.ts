import { WEBHOOK_EVENTS, type WebhookEvent } from "@loopsmith/schemas";

export { WEBHOOK_EVENTS, type WebhookEvent };

const BY_STATE: Record<string, WebhookEvent> = {
  verified: "goal.verified",
  failed: "goal.failed",
  cancelled: "goal.cancelled",
  awaiting_approval: "goal.awaiting_approval",
};

/** The event a move into `state` announces, or null for states nobody is notified about. */
export function eventForState(state: string): WebhookEvent | null {
  return Object.hasOwn(BY_STATE, state) ? BY_STATE[state]! : null;
}
