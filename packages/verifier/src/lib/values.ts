// Deep comparison of JSON values (json_matches, cases): numbers with tolerance (integers exactly, bigints
// included), everything else exactly, arrays in order or as multisets. The result lists differences with
// RFC 6901 JSON Pointers into the produced value, so a model (or a person) can find each one.
import { preview } from "../format";
import { floatsClose, type Tolerance } from "./numbers";

export interface CompareOptions {
  tol: Tolerance;
  /** Arrays compare as multisets (at every depth). */
  ignoreOrder: boolean;
}

export interface Difference {
  /** JSON Pointer of the place in the produced value ("" = the whole value). */
  pointer: string;
  /** What differs, in words that do not quote the expected value ("a key is missing", "differs"). */
  what: string;
  actual?: unknown;
  expected?: unknown;
  /** Why, possibly implying the expected value (shown only where the expected value may be). */
  note?: string;
}

export interface Comparison {
  equal: boolean;
  /** Every difference found, up to `limit`. */
  differences: Difference[];
  /** How many differences there are in all (counting stops at a large bound). */
  count: number;
}

const COUNT_CAP = 100_000;
/** Beyond this many unmatched elements, unordered matching with tolerance would be quadratic. */
const UNORDERED_FUZZY_MAX = 2000;

export function pointerToken(key: string | number): string {
  return String(key).replace(/~/g, "~0").replace(/\//g, "~1");
}

type Kind = "null" | "boolean" | "number" | "string" | "array" | "object";

export function kindOf(v: unknown): Kind {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "bigint" || typeof v === "number") return "number";
  if (typeof v === "boolean") return "boolean";
  if (typeof v === "string") return "string";
  return "object";
}

const article = (k: Kind) => (k === "array" || k === "object" ? "an " : k === "null" ? "" : "a ");

/** Whether two numbers agree: integers exactly (no 2^53 rounding), otherwise within tolerance. */
export function jsonNumbersClose(a: number | bigint, e: number | bigint, tol: Tolerance): boolean {
  if (typeof a === "bigint" || typeof e === "bigint") {
    // One side is beyond 2^53: only an exact integer match counts.
    const ai = typeof a === "bigint" ? a : Number.isInteger(a) ? BigInt(a) : null;
    const ei = typeof e === "bigint" ? e : Number.isInteger(e) ? BigInt(e) : null;
    // One of them is a bigint, so null (a non-integer) never equals it.
    return ai === ei;
  }
  if (a === e) return true;
  // NaN and infinities only arrive tagged from a case run ({"$float": "nan"}); each equals only itself
  // (floatsClose calls no non-finite value close).
  if (Number.isNaN(a) && Number.isNaN(e)) return true;
  return floatsClose(a, e, tol);
}

/** A canonical text of a value for exact multiset matching (object keys sorted; numbers by value). */
function canonical(v: unknown): string {
  if (typeof v === "bigint") return `n${v}`;
  if (typeof v === "number") return Number.isInteger(v) ? `n${BigInt(v)}` : `f${v}`;
  // Stryker disable next-line StringLiteral: equivalent, element texts decode uniquely without it (n or f then a number, null, true, false, a JSON string, brackets), so the comma is only for reading
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const fields = Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`);
    // Stryker disable next-line StringLiteral: equivalent, as for arrays: each field starts with its key's JSON string
    return `{${fields.join(",")}}`;
  }
  return JSON.stringify(v);
}

export function compareJson(actual: unknown, expected: unknown, opts: CompareOptions, limit = 10): Comparison {
  const differences: Difference[] = [];
  let count = 0;
  const add = (d: Difference) => {
    count++;
    if (differences.length < limit) differences.push(d);
  };
  // Explicit stack: values nest up to MAX_JSON_DEPTH, and the comparison must not be what overflows.
  const stack: [unknown, unknown, string][] = [[actual, expected, ""]];
  while (stack.length > 0 && count < COUNT_CAP) {
    const [a, e, at] = stack.pop()!;
    const ka = kindOf(a);
    const ke = kindOf(e);
    if (ka !== ke) {
      add({ pointer: at, what: `is ${article(ka)}${ka}, not the expected type`, actual: a, expected: e, note: `expected ${article(ke)}${ke}` });
      continue;
    }
    switch (ka) {
      case "number":
        if (!jsonNumbersClose(a as number | bigint, e as number | bigint, opts.tol)) {
          add({ pointer: at, what: "differs", actual: a, expected: e, note: numberNote(a as number | bigint, e as number | bigint, opts.tol) });
        }
        break;
      // Two nulls are always equal.
      case "string":
      case "boolean":
        if (a !== e) add({ pointer: at, what: "differs", actual: a, expected: e });
        break;
      case "object": {
        const ao = a as Record<string, unknown>;
        const eo = e as Record<string, unknown>;
        const missing = Object.keys(eo).filter((k) => !Object.hasOwn(ao, k));
        for (const k of missing) add({ pointer: at, what: "lacks an expected key", expected: { [k]: eo[k] } });
        for (const k of Object.keys(ao)) {
          if (!Object.hasOwn(eo, k)) add({ pointer: `${at}/${pointerToken(k)}`, what: "is an unexpected key", actual: ao[k] });
        }
        // Pushed in reverse so that differences come out in key order.
        const shared = Object.keys(eo).filter((k) => Object.hasOwn(ao, k));
        for (const k of shared.reverse()) stack.push([ao[k], eo[k], `${at}/${pointerToken(k)}`]);
        break;
      }
      case "array": {
        const aa = a as unknown[];
        const ea = e as unknown[];
        if (opts.ignoreOrder) {
          compareUnordered(aa, ea, at, opts, add);
          break;
        }
        if (aa.length !== ea.length) {
          add({ pointer: at, what: `has ${aa.length} item${aa.length === 1 ? "" : "s"}, not the expected number`, actual: aa.length, expected: ea.length, note: `expected ${ea.length} items` });
        }
        for (let idx = Math.min(aa.length, ea.length) - 1; idx >= 0; idx--) stack.push([aa[idx], ea[idx], `${at}/${idx}`]);
        break;
      }
    }
  }
  return { equal: count === 0, differences, count };
}

function numberNote(a: number | bigint, e: number | bigint, tol: Tolerance): string {
  if (typeof a === "bigint" || typeof e === "bigint") return "integers beyond 2^53 must match exactly";
  const diff = Math.abs(a - e);
  const allowed = tol.atol + tol.rtol * Math.abs(e);
  return `differs by ${preview(diff)}, more than the allowed ${preview(allowed)} (atol ${tol.atol} + rtol ${tol.rtol} × |expected|)`;
}

function compareUnordered(aa: unknown[], ea: unknown[], at: string, opts: CompareOptions, add: (d: Difference) => void) {
  // Exact matches first, by canonical text (linear); what remains is matched within tolerance.
  const pool = new Map<string, number[]>();
  aa.forEach((v, idx) => {
    const k = canonical(v);
    const list = pool.get(k);
    if (list) list.push(idx);
    else pool.set(k, [idx]);
  });
  const usedActual = new Set<number>();
  const unmatchedExpected: number[] = [];
  ea.forEach((v, idx) => {
    const list = pool.get(canonical(v));
    const hit = list?.shift();
    if (hit === undefined) unmatchedExpected.push(idx);
    else usedActual.add(hit);
  });
  const unmatchedActual = aa.map((_, idx) => idx).filter((idx) => !usedActual.has(idx));
  if (unmatchedExpected.length * unmatchedActual.length <= UNORDERED_FUZZY_MAX * UNORDERED_FUZZY_MAX) {
    // Stryker disable next-line ArithmeticOperator: equivalent, a start past the end reads no expected item and matches nothing
    for (let j = unmatchedExpected.length - 1; j >= 0; j--) {
      const e = ea[unmatchedExpected[j]!];
      const hit = unmatchedActual.findIndex((idx) => compareJson(aa[idx], e, opts, 0).equal);
      if (hit >= 0) {
        unmatchedActual.splice(hit, 1);
        unmatchedExpected.splice(j, 1);
      }
    }
  }
  for (const idx of unmatchedExpected) add({ pointer: at, what: "lacks an expected item (in any order)", expected: ea[idx] });
  for (const idx of unmatchedActual) add({ pointer: `${at}/${idx}`, what: "is an item no expected item matches", actual: aa[idx] });
}
