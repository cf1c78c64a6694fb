import { z } from "zod";

// Numeric comparison shared by every comparator. numpy.isclose's rule (what pandas and polars frame
// comparisons use): |actual - expected| <= atol + rtol * |expected|. The defaults only absorb binary
// floating-point noise (0.1 + 0.2 against 0.3); a client who means "to the cent" says atol 0.005.

export interface Tolerance {
  atol: number;
  rtol: number;
}

export const DEFAULT_ATOL = 1e-12;
export const DEFAULT_RTOL = 1e-9;

/** The `atol` / `rtol` params, with the defaults above. Negative or non-finite tolerances are refused. */
export const toleranceParams = {
  atol: z.number().nonnegative().max(1e300).default(DEFAULT_ATOL).describe("Absolute tolerance for numbers."),
  rtol: z.number().nonnegative().max(1).default(DEFAULT_RTOL).describe("Relative tolerance for numbers, times |expected|."),
};

/** A number as written: an exact integer (bigint) or a float. */
export type Num = { kind: "int"; value: bigint } | { kind: "float"; value: number };

const INT = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Parses a number the way a person reads one written in a file: "42" and "-7" as exact integers (any
 * size), "3.50", "1e-3" as floats. Anything else (including "NaN", "inf", "1,000", "$5", " 5") is not a
 * number: the caller compares it as text, never with tolerance.
 */
export function parseNumber(text: string): Num | null {
  if (INT.test(text)) return { kind: "int", value: BigInt(text) };
  if (DECIMAL.test(text)) {
    const value = Number(text);
    return Number.isFinite(value) ? { kind: "float", value } : null;
  }
  return null;
}

/** Whether two numbers agree: integers exactly (bigint, no 2^53 rounding), otherwise within tolerance. */
export function numbersClose(actual: Num, expected: Num, tol: Tolerance): boolean {
  // An integer beyond 2^53 is only equal exactly (a double cannot tell 10^18 from 10^18 + 3), whatever
  // the other side is written as: 1e+18 is the integer 10^18, and 1.5 equals no integer.
  if ((actual.kind === "int" && !isSafe(actual.value)) || (expected.kind === "int" && !isSafe(expected.value))) {
    // One side is an integer here, so two nulls (two non-integers) cannot meet.
    return exactInteger(actual) === exactInteger(expected);
  }
  // Both sides are doubles exactly here (safe integers or floats).
  return floatsClose(Number(actual.value), Number(expected.value), tol);
}

/** The integer a number is, exactly, or null when it is not an integer. */
export function exactInteger(n: Num): bigint | null {
  if (n.kind === "int") return n.value;
  return Number.isInteger(n.value) ? BigInt(n.value) : null;
}

/** isclose for finite floats; NaN and infinities are never close to anything here (callers handle them first). */
export function floatsClose(actual: number, expected: number, tol: Tolerance): boolean {
  if (!Number.isFinite(actual) || !Number.isFinite(expected)) return false;
  return Math.abs(actual - expected) <= tol.atol + tol.rtol * Math.abs(expected);
}

function isSafe(n: bigint): boolean {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= BigInt(Number.MIN_SAFE_INTEGER);
}

/** "differs by 0.02 (more than 0.005 = atol 0.005 + rtol 0 × |expected|)", for notes at reveal "full". */
export function differenceNote(actual: Num, expected: Num, tol: Tolerance): string {
  const a = Number(actual.value);
  const e = Number(expected.value);
  const allowed = tol.atol + tol.rtol * Math.abs(e);
  return `differs by ${short(Math.abs(a - e))}, more than the allowed ${short(allowed)} (atol ${short(tol.atol)} + rtol ${short(tol.rtol)} × |expected|)`;
}

function short(n: number): string {
  return Number.isFinite(n) ? String(Number(n.toPrecision(6))) : String(n);
}
