// What a goal's webhook JSON holds, and the thin payload: for receivers that fetch the goal themselves
// (with their API key), a small event instead of the whole goal, which grows with every attempt.
import type { Goal } from "@loopsmith/db";

export interface GoalWebhook {
  url: string;
  /** "full" (the default): the goal as GET /goals/:id shows it; "thin": ids, state and links. */
  payload?: "full" | "thin";
  /** Set when a receiver answered 410 Gone: no further event of the goal is delivered. */
  disabled_at?: string;
  disabled_reason?: string;
}

/** The goal's webhook column, or null when it has none (or an unusable one). */
export function goalWebhook(webhook: unknown): GoalWebhook | null {
  const w = webhook as Partial<GoalWebhook> | null | undefined;
  if (!w || typeof w !== "object" || typeof w.url !== "string" || w.url === "") return null;
  return w as GoalWebhook;
}

export interface ThinGoal {
  id: string;
  state: string;
  verified: boolean;
  failure_reason: string | null;
  version: number;
  links: { goal: string; deliveries: string; events: string; artifacts: string; receipt: string | null };
}

/** Links are absolute under `baseUrl` (PUBLIC_BASE_URL) when it is set, else paths on the API. */
export function thinPayload(goal: Pick<Goal, "id" | "state" | "verified" | "failureReason" | "version">, baseUrl?: string): ThinGoal {
  const self = `${baseUrl ?? ""}/goals/${goal.id}`;
  return {
    id: goal.id,
    state: goal.state,
    verified: goal.verified,
    failure_reason: goal.failureReason,
    version: goal.version,
    links: {
      goal: self,
      deliveries: `${self}/deliveries`,
      events: `${self}/events`,
      artifacts: `${self}/artifacts`,
      receipt: goal.verified ? `${self}/receipt` : null,
    },
  };
}
