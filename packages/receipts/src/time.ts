import { z } from "zod";

const RFC3339 = z.iso.datetime({ offset: true });
const PARTS = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/;

/** A point in time to the precision it was written with: whole seconds, and the fraction's digits. */
export interface Instant {
  seconds: number;
  fraction: string;
}

/**
 * An RFC 3339 timestamp (with an offset; lower-case t and z allowed, as the RFC does), or null. Kept
 * exact rather than put through Date, which drops digits past the millisecond: the validity checks
 * compare two timestamps at their edges.
 */
export function instant(text: string): Instant | null {
  const upper = text.toUpperCase();
  if (!RFC3339.safeParse(upper).success) return null;
  const m = PARTS.exec(upper);
  if (!m) return null;
  return { seconds: Date.parse(`${m[1]}${m[3]}`) / 1000, fraction: (m[2] ?? "").replace(/0+$/, "") };
}

/** Negative when a is earlier than b, 0 when they are the same instant, positive when a is later. */
export function compareInstants(a: Instant, b: Instant): number {
  if (a.seconds !== b.seconds) return a.seconds - b.seconds;
  const width = Math.max(a.fraction.length, b.fraction.length);
  const [fa, fb] = [a.fraction.padEnd(width, "0"), b.fraction.padEnd(width, "0")];
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}
