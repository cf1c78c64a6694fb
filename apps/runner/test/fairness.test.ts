// issue 17.3: how long a deferred step waits before it asks again.
import { describe, expect, it } from "vitest";
import { deferDelay, MAX_DEFER_FACTOR } from "../src/fairness";

describe("deferDelay", () => {
  const cap = { maxActive: 4, deferMs: 1000 };
  it("is one deferMs for the goal next in line and one more per goal that must end first", () => {
    expect(deferDelay(4, cap)).toBe(1000);
    expect(deferDelay(5, cap)).toBe(2000);
    expect(deferDelay(7, cap)).toBe(4000);
  });
  it("stops growing at MAX_DEFER_FACTOR deferMs, so that no goal waits long after its turn has come", () => {
    expect(deferDelay(4 + MAX_DEFER_FACTOR - 1, cap)).toBe(MAX_DEFER_FACTOR * 1000);
    expect(deferDelay(10_000, cap)).toBe(MAX_DEFER_FACTOR * 1000);
  });
});
