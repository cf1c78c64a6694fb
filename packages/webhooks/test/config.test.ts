import { parseConfig } from "@loopsmith/core";
import { describe, expect, it } from "vitest";
import { eventForState, WEBHOOK_EVENTS, webhookConfigSchema } from "../src/index";

describe("webhookConfigSchema", () => {
  it("has the documented defaults", () => {
    expect(parseConfig(webhookConfigSchema, {})).toEqual({
      WEBHOOK_ALLOW_CIDRS: [],
      WEBHOOK_MAX_ATTEMPTS: 8,
      WEBHOOK_RETRY_SCHEDULE: [5000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      WEBHOOK_RETRY_JITTER: 0.2,
      WEBHOOK_RETRY_AFTER_MAX: 21_600_000,
      WEBHOOK_TIMEOUT_MS: 15_000,
      WEBHOOK_TENANT_IN_FLIGHT: 2,
      WEBHOOK_DEFER_MS: 1000,
      WEBHOOK_SECRET_OVERLAP_SECONDS: 86_400,
      WEBHOOK_DNS_TIMEOUT_MS: 3000,
    });
  });

  it("coerces env strings and splits the allow list", () => {
    const c = parseConfig(webhookConfigSchema, {
      WEBHOOK_ALLOW_CIDRS: " 127.0.0.1/32, 10.0.0.0/8 ,::1,",
      WEBHOOK_MAX_ATTEMPTS: "3",
      WEBHOOK_RETRY_SCHEDULE: "50ms",
      WEBHOOK_TIMEOUT_MS: "2000",
      WEBHOOK_SECRET_OVERLAP_SECONDS: "0",
    });
    expect(c).toEqual({
      WEBHOOK_ALLOW_CIDRS: ["127.0.0.1/32", "10.0.0.0/8", "::1"],
      WEBHOOK_MAX_ATTEMPTS: 3,
      WEBHOOK_RETRY_SCHEDULE: [50],
      WEBHOOK_RETRY_JITTER: 0.2,
      WEBHOOK_RETRY_AFTER_MAX: 21_600_000,
      WEBHOOK_TIMEOUT_MS: 2000,
      WEBHOOK_TENANT_IN_FLIGHT: 2,
      WEBHOOK_DEFER_MS: 1000,
      WEBHOOK_SECRET_OVERLAP_SECONDS: 0,
      WEBHOOK_DNS_TIMEOUT_MS: 3000,
    });
  });

  it("names a bad allow-list entry and a bad number", () => {
    expect(() => parseConfig(webhookConfigSchema, { WEBHOOK_ALLOW_CIDRS: "10.0.0.0/8,intranet" })).toThrow(/WEBHOOK_ALLOW_CIDRS: "intranet" is neither a CIDR nor an IP address/);
    expect(() => parseConfig(webhookConfigSchema, { WEBHOOK_MAX_ATTEMPTS: "0" })).toThrow(/WEBHOOK_MAX_ATTEMPTS/);
  });
});

describe("eventForState", () => {
  it("maps the notified states and nothing else", () => {
    expect(WEBHOOK_EVENTS.map((e) => e)).toEqual(["goal.verified", "goal.failed", "goal.cancelled", "goal.awaiting_approval", "schedule.tick.verified", "schedule.tick.failed"]);
    const states = ["verified", "failed", "cancelled", "awaiting_approval"];
    expect(states.map((s) => eventForState(s))).toEqual(["goal.verified", "goal.failed", "goal.cancelled", "goal.awaiting_approval"]);
    expect(states.map((s) => eventForState(s, { scheduleId: null }))).toEqual(["goal.verified", "goal.failed", "goal.cancelled", "goal.awaiting_approval"]);
    expect(["plan", "execute", "refine", "errored", "constructor", "__proto__"].map((s) => eventForState(s))).toEqual([null, null, null, null, null, null]);
  });

  it("announces a schedule tick's end as schedule.tick.*; its cancel and approval pause as a goal's", () => {
    const tick = { scheduleId: "0b9c8f3e-6a1d-4f0e-9a51-2f5a4c7d8e90" };
    expect(["verified", "failed", "cancelled", "awaiting_approval"].map((s) => eventForState(s, tick))).toEqual([
      "schedule.tick.verified",
      "schedule.tick.failed",
      "goal.cancelled",
      "goal.awaiting_approval",
    ]);
    expect(["plan", "errored", "__proto__"].map((s) => eventForState(s, tick))).toEqual([null, null, null]);
  });
});
