// Issue 13: retries span about a day with jitter; Retry-After (seconds or an HTTP date) slows them, capped.
import { describe, expect, it } from "vitest";
import { parseConfig } from "@loopsmith/core";
import {
  DEFAULT_RETRY_SCHEDULE,
  DELIVERY_BACKOFF,
  jittered,
  nextRetryDelayMs,
  parseDuration,
  parseRetryAfter,
  parseSchedule,
  retryDelayMs,
  scheduledDelayMs,
  DeliveryFailed,
  webhookConfigSchema,
} from "../src/index";

const S = 1000;
const M = 60 * S;
const H = 60 * M;

describe("the retry schedule", () => {
  it("defaults to 8 attempts over about a day (Standard Webhooks' example schedule)", () => {
    const c = parseConfig(webhookConfigSchema, {});
    expect(c.WEBHOOK_RETRY_SCHEDULE).toEqual([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
    expect(c.WEBHOOK_MAX_ATTEMPTS).toBe(c.WEBHOOK_RETRY_SCHEDULE.length + 1);
    const total = c.WEBHOOK_RETRY_SCHEDULE.reduce((a, b) => a + b, 0);
    expect(total / H).toBeGreaterThan(24);
    expect(total / H).toBeLessThan(30);
    expect(c.WEBHOOK_RETRY_JITTER).toBe(0.2);
    expect(c.WEBHOOK_RETRY_AFTER_MAX).toBe(6 * H);
    expect(c.WEBHOOK_TIMEOUT_MS).toBe(15_000);
    expect(parseSchedule(DEFAULT_RETRY_SCHEDULE)).toEqual(c.WEBHOOK_RETRY_SCHEDULE);
  });

  it("parses durations with units or as seconds, and names a bad entry", () => {
    expect(["250ms", "5s", "2m", "3h", "1d", "0.5", "7", " 10s "].map(parseDuration)).toEqual([250, 5 * S, 2 * M, 3 * H, 24 * H, 500, 7 * S, 10 * S]);
    expect(["", "5 s", "-1s", "1w", "abc", "1e3", "5sec"].map(parseDuration)).toEqual([null, null, null, null, null, null, null]);
    expect(parseSchedule("100ms, 1s,,2m")).toEqual([100, S, 2 * M]);
    expect(() => parseSchedule(" , ")).toThrow(/empty/);
    expect(() => parseConfig(webhookConfigSchema, { WEBHOOK_RETRY_SCHEDULE: "5s,soon" })).toThrow(/WEBHOOK_RETRY_SCHEDULE: "soon" is not a duration/);
    expect(() => parseConfig(webhookConfigSchema, { WEBHOOK_RETRY_AFTER_MAX: "forever" })).toThrow(/WEBHOOK_RETRY_AFTER_MAX/);
    expect(() => parseConfig(webhookConfigSchema, { WEBHOOK_RETRY_JITTER: "1.5" })).toThrow(/WEBHOOK_RETRY_JITTER/);
  });

  it("takes the failed attempt's entry, the last one repeating past the list", () => {
    const schedule = [1 * S, 2 * S, 3 * S];
    expect([1, 2, 3, 4, 9].map((n) => scheduledDelayMs(schedule, n))).toEqual([S, 2 * S, 3 * S, 3 * S, 3 * S]);
  });

  it("jitters within ±jitter, uniformly from the random draw", () => {
    expect(jittered(10_000, 0.2, () => 0)).toBe(8000);
    expect(jittered(10_000, 0.2, () => 0.5)).toBe(10_000);
    expect(jittered(10_000, 0.2, () => 0.999999)).toBe(12_000);
    expect(jittered(10_000, 0, () => 0)).toBe(10_000);
    expect(jittered(10_000, 1, () => 0)).toBe(0);
    const draws = Array.from({ length: 200 }, () => jittered(H, 0.2, Math.random));
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0.8 * H);
    expect(Math.max(...draws)).toBeLessThanOrEqual(1.2 * H);
    expect(new Set(draws).size).toBeGreaterThan(100);
  });
});

describe("Retry-After", () => {
  const now = new Date("2026-12-01T12:00:00Z");
  it("reads seconds and HTTP dates, and nothing else", () => {
    expect(parseRetryAfter("120", now)).toBe(120 * S);
    expect(parseRetryAfter(" 0 ", now)).toBe(0);
    expect(parseRetryAfter("Tue, 01 Dec 2026 12:30:00 GMT", now)).toBe(30 * M);
    // The obsolete forms RFC 9110 still asks recipients to accept.
    expect(parseRetryAfter("Tuesday, 01-Dec-26 13:00:00 GMT", now)).toBe(H);
    expect(parseRetryAfter("Tue Dec  1 12:00:10 2026", now)).not.toBeNull();
    // A date already past: retry now (the schedule still applies).
    expect(parseRetryAfter("Mon, 30 Nov 2026 12:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(["60", "5"], now)).toBe(60 * S);
    for (const bad of [undefined, null, "", "-5", "1.5", "soon", "2026-12-02", "Tue, 99 Foo 2026 GMT"]) expect(parseRetryAfter(bad, now), String(bad)).toBeNull();
  });

  it("slows a retry down to what the receiver asked for, capped, and never speeds one up", () => {
    const plan = { schedule: [5 * S, 5 * M], jitter: 0, retryAfterMaxMs: H };
    expect(nextRetryDelayMs(plan, 1, null, Math.random)).toBe(5 * S);
    expect(nextRetryDelayMs(plan, 1, 90 * S, Math.random)).toBe(90 * S);
    expect(nextRetryDelayMs(plan, 2, 90 * S, Math.random)).toBe(5 * M);
    expect(nextRetryDelayMs(plan, 1, 24 * H, Math.random)).toBe(H);
    expect(nextRetryDelayMs(plan, 1, 0, Math.random)).toBe(5 * S);
  });

  it("is what the delivery worker's backoff strategy returns for the error a failed attempt throws", () => {
    const config = parseConfig(webhookConfigSchema, { WEBHOOK_RETRY_JITTER: "0" });
    const deps = { config, random: () => 0.5 };
    expect(retryDelayMs(deps, 1, DELIVERY_BACKOFF, new DeliveryFailed("HTTP 500"))).toBe(5 * S);
    expect(retryDelayMs(deps, 3, DELIVERY_BACKOFF, new DeliveryFailed("HTTP 503", 45 * M))).toBe(45 * M);
    expect(retryDelayMs(deps, 7, DELIVERY_BACKOFF, new Error("database down"))).toBe(10 * H);
    expect(retryDelayMs(deps, 1, "exponential", new DeliveryFailed("HTTP 500"))).toBe(0);
  });
});
