// The numeric rule every comparator shares (issue 18: mutation testing found it tested only through the
// checks): what is a number, integers exactly past 2^53 on either side, the safe-integer boundary on both
// sides, tolerance in both directions, non-finite values never close, and the note's arithmetic.
import { describe, expect, it } from "vitest";
import { differenceNote, exactInteger, floatsClose, numbersClose, parseNumber, type Num } from "../src/lib/numbers";

const int = (v: bigint | number): Num => ({ kind: "int", value: BigInt(v) });
const float = (v: number): Num => ({ kind: "float", value: v });
const exact = { atol: 0, rtol: 0 };
const MAX = BigInt(Number.MAX_SAFE_INTEGER);
const MIN = BigInt(Number.MIN_SAFE_INTEGER);

describe("parseNumber", () => {
  it("reads integers exactly and decimals as floats", () => {
    expect(parseNumber("42")).toEqual(int(42));
    expect(parseNumber("-7")).toEqual(int(-7));
    expect(parseNumber("+7")).toEqual(int(7));
    expect(parseNumber("007")).toEqual(int(7));
    expect(parseNumber("123456789012345678901")).toEqual(int(123456789012345678901n));
    expect(parseNumber("3.50")).toEqual(float(3.5));
    expect(parseNumber("1e-3")).toEqual(float(0.001));
    expect(parseNumber(".5")).toEqual(float(0.5));
    expect(parseNumber("5.")).toEqual(float(5));
  });

  it("refuses what only JavaScript's Number() would read", () => {
    for (const text of ["", " 5", "5 ", "0x10", "0b1", "1_000", "1,000", "$5", "NaN", "inf", "Infinity", "1e400", "-", "."]) {
      expect(parseNumber(text), JSON.stringify(text)).toBeNull();
    }
  });
});

describe("numbersClose", () => {
  it("compares integers past 2^53 exactly, whatever the other side is written as", () => {
    const big = 10n ** 18n;
    expect(numbersClose(int(big + 3n), float(1e18), { atol: 1e6, rtol: 1e-3 })).toBe(false);
    expect(numbersClose(float(1e18), int(big + 3n), { atol: 1e6, rtol: 1e-3 })).toBe(false);
    expect(numbersClose(int(big), float(1e18), exact)).toBe(true);
    expect(numbersClose(float(1e18), int(big), exact)).toBe(true);
    expect(numbersClose(int(big), int(big), exact)).toBe(true);
    expect(numbersClose(int(big), int(big + 1n), { atol: 10, rtol: 0.1 })).toBe(false);
    expect(numbersClose(int(big), float(1.5), { atol: 1e30, rtol: 1 })).toBe(false);
    expect(numbersClose(float(1.5), int(big), { atol: 1e30, rtol: 1 })).toBe(false);
  });

  it("compares floats past 2^53 with tolerance: only an integer written as digits is exact", () => {
    // 1e16 and 1.5e16 are floats (written with an exponent): within rtol 0.6 of each other, either way round.
    const loose = { atol: 0, rtol: 0.6 };
    expect(numbersClose(float(1e16), float(1.5e16), loose)).toBe(true);
    expect(numbersClose(float(1.5e16), float(1e16), loose)).toBe(true);
    expect(numbersClose(float(1e16), int(9_007_199_254_740_991n), loose)).toBe(true);
    expect(numbersClose(int(9_007_199_254_740_991n), float(1e16), loose)).toBe(true);
  });

  it("compares safe integers and floats within tolerance, both sides of it", () => {
    expect(numbersClose(int(1), float(1.004), { atol: 0.005, rtol: 0 })).toBe(true);
    expect(numbersClose(int(1), float(1.006), { atol: 0.005, rtol: 0 })).toBe(false);
    expect(numbersClose(float(1.004), int(1), { atol: 0.005, rtol: 0 })).toBe(true);
    expect(numbersClose(int(5), int(5), exact)).toBe(true);
    expect(numbersClose(int(5), int(6), exact)).toBe(false);
    expect(numbersClose(int(5), int(6), { atol: 1, rtol: 0 })).toBe(true);
  });

  it("treats ±(2^53 - 1) as safe and one beyond as exact-only", () => {
    const near = { atol: 2, rtol: 0 };
    expect(numbersClose(int(MAX), float(Number.MAX_SAFE_INTEGER - 1), near)).toBe(true);
    expect(numbersClose(int(MIN), float(Number.MIN_SAFE_INTEGER + 1), near)).toBe(true);
    expect(numbersClose(int(MAX + 1n), float(Number.MAX_SAFE_INTEGER - 1), { atol: 5, rtol: 0 })).toBe(false);
    expect(numbersClose(int(MIN - 1n), float(Number.MIN_SAFE_INTEGER + 1), { atol: 5, rtol: 0 })).toBe(false);
  });
});

describe("exactInteger", () => {
  it("is the integer a number is, or null", () => {
    expect(exactInteger(int(10n ** 20n))).toBe(10n ** 20n);
    expect(exactInteger(float(3))).toBe(3n);
    expect(exactInteger(float(-0))).toBe(0n);
    expect(exactInteger(float(1.5))).toBeNull();
  });
});

describe("floatsClose", () => {
  it("is numpy's isclose: |a - e| <= atol + rtol × |e|, both directions", () => {
    expect(floatsClose(0.1 + 0.2, 0.3, { atol: 1e-12, rtol: 1e-9 })).toBe(true);
    expect(floatsClose(102, 100, { atol: 0, rtol: 0.02 })).toBe(true);
    expect(floatsClose(102.01, 100, { atol: 0, rtol: 0.02 })).toBe(false);
    expect(floatsClose(97.99, 100, { atol: 0, rtol: 0.02 })).toBe(false);
    // rtol scales with the expected value, not the produced one.
    expect(floatsClose(100, 102, { atol: 0, rtol: 0.0197 })).toBe(true);
    expect(floatsClose(102, 100, { atol: 0, rtol: 0.0197 })).toBe(false);
  });

  it("never calls a non-finite value close, even against an infinite allowance", () => {
    expect(floatsClose(5, Infinity, { atol: 0, rtol: 1e-9 })).toBe(false);
    expect(floatsClose(Infinity, 5, { atol: 1e300, rtol: 1 })).toBe(false);
    expect(floatsClose(Infinity, Infinity, { atol: 1, rtol: 1 })).toBe(false);
    expect(floatsClose(Number.NaN, Number.NaN, { atol: 1, rtol: 1 })).toBe(false);
  });
});

describe("differenceNote", () => {
  it("states the difference and the allowance from atol and rtol × |expected|", () => {
    expect(differenceNote(float(2.04), float(2), { atol: 0.005, rtol: 0.01 })).toBe("differs by 0.04, more than the allowed 0.025 (atol 0.005 + rtol 0.01 × |expected|)");
    expect(differenceNote(float(-1), float(-4), { atol: 0.5, rtol: 0.25 })).toBe("differs by 3, more than the allowed 1.5 (atol 0.5 + rtol 0.25 × |expected|)");
    expect(differenceNote(int(7), int(5), exact)).toBe("differs by 2, more than the allowed 0 (atol 0 + rtol 0 × |expected|)");
  });
});
