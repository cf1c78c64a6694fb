// The retry schedule of a delivery, and what a receiver's Retry-After asks for. Pure: time and randomness
// come in as arguments, so the tests walk a day of retries without waiting one.

/**
 * Standard Webhooks' example schedule (the one Svix uses): after the first attempt fails, retry after 5 s,
 * 5 min, 30 min, 2 h, 5 h, 10 h and 10 h, 8 attempts spanning about 27.6 hours.
 */
export const DEFAULT_RETRY_SCHEDULE = "5s,5m,30m,2h,5h,10h,10h";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "250ms", "5s", "30m", "2h", "1d", or a bare number of seconds ("0.5"): milliseconds, or null when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] ?? "s"]!;
  return Number.isFinite(ms) ? Math.round(ms) : null;
}

/** A comma-separated list of durations, each the delay before the next retry. Throws naming a bad entry. */
export function parseSchedule(text: string): number[] {
  const entries = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error("the schedule is empty");
  return entries.map((e) => {
    const ms = parseDuration(e);
    if (ms === null) throw new Error(`"${e}" is not a duration (like 500ms, 5s, 30m, 2h or a number of seconds)`);
    return ms;
  });
}

/**
 * The delay before the retry that follows failed attempt `failed` (1 for the first), before jitter: the
 * schedule's entry, its last entry repeating when WEBHOOK_MAX_ATTEMPTS asks for more retries than it lists.
 */
export function scheduledDelayMs(schedule: readonly number[], failed: number): number {
  return schedule[Math.min(Math.max(failed, 1), schedule.length) - 1]!;
}

/**
 * ±jitter: the delay times a factor drawn uniformly from [1 - jitter, 1 + jitter] (`random()` in [0, 1)),
 * so that the retries of many deliveries that failed together (a receiver's outage) do not all come back at
 * the same instant.
 */
export function jittered(delayMs: number, jitter: number, random: () => number): number {
  if (jitter <= 0 || delayMs <= 0) return delayMs;
  return Math.max(0, Math.round(delayMs * (1 - jitter + 2 * jitter * random())));
}

/**
 * A Retry-After header (RFC 9110 §10.2.3): a number of seconds, or an HTTP date. Milliseconds from `now`
 * (0 for a date already past), or null when absent or malformed.
 */
export function parseRetryAfter(value: string | string[] | null | undefined, now: Date): number | null {
  const v = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!v) return null;
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  // Only the date forms: Date.parse would also take "tomorrow-ish" strings no server should send.
  if (!/^[A-Za-z]{3,9}, /.test(v) && !/^[A-Za-z]{3} [A-Za-z]{3} /.test(v)) return null;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now.getTime());
}

export interface RetryPlan {
  schedule: readonly number[];
  jitter: number;
  /** The most a Retry-After may ask for; longer requests are cut to this. */
  retryAfterMaxMs: number;
}

/**
 * The delay before the retry after failed attempt `failed`: the jittered schedule, or what the receiver
 * asked for in Retry-After when that is longer (never more than retryAfterMaxMs). A receiver can slow
 * retries down, never speed them up past the schedule.
 */
export function nextRetryDelayMs(plan: RetryPlan, failed: number, retryAfterMs: number | null, random: () => number): number {
  const scheduled = jittered(scheduledDelayMs(plan.schedule, failed), plan.jitter, random);
  if (retryAfterMs === null) return scheduled;
  return Math.max(scheduled, Math.min(retryAfterMs, plan.retryAfterMaxMs));
}
