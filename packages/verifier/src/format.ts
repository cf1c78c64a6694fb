import { stringifyJson } from "./lib/json";

// Messages are read by a model that has to fix the script, so values are shown the way JSON would show
// them, and floats without binary noise (35145.649999999994 reads as 35145.65).

/** A number with at most 12 significant digits. */
export function fmtNumber(n: number): string {
  // Integers as they are: 9007199254740993 must not read as 9007199254740990.
  if (Number.isInteger(n)) return String(n);
  return Number.isFinite(n) ? String(Number(n.toPrecision(12))) : String(n);
}

/** Bounded JSON-ish rendering of a value for messages. */
export function preview(value: unknown, max = 80): string {
  let text: string;
  if (typeof value === "number") text = fmtNumber(value);
  else if (value === undefined) text = "undefined";
  else {
    try {
      // stringifyJson: bigints (exact integers beyond 2^53) print as their digits.
      text = stringifyJson(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** "a string (\"10749.90\")", "null", "an array of 3 items": what a value is, for "expected X, found Y". */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? "" : "s"}`;
  switch (typeof value) {
    case "string":
      return `a string (${preview(value)})`;
    case "number":
      return Number.isFinite(value) ? `a number (${fmtNumber(value)})` : `a non-finite number (${value})`;
    case "bigint":
      return `a number (${value})`;
    case "boolean":
      return `a boolean (${value})`;
    case "object":
      return `an object with ${Object.keys(value).length} key${Object.keys(value).length === 1 ? "" : "s"}`;
    default:
      return typeof value;
  }
}

/** Quoted, comma-separated list, cut after `max` entries. */
export function listQuoted(items: readonly string[], max = 10): string {
  const shown = items.slice(0, max).map((s) => JSON.stringify(s));
  return items.length > max ? `${shown.join(", ")} and ${items.length - max} more` : shown.join(", ");
}

/** Plain text cut to `max` characters (no quoting, unlike preview). */
export function clipText(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
