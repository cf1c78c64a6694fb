// Python values as the cases check compares them (issue 27): with their exact types. The harness sends a
// function's result in the wire's tagged notation ({"$tuple": [...]}, {"$set": [...]}, {"$dict": [[k, v]...]},
// {"$bytes": "<base64>"} ...; see bridge-py.ts), and a client writes expected values and arguments in the
// same notation, plain JSON meaning what it means in Python (an array is a list, an object a dict with string
// keys). Equality is Python's ==, but for what a test suite would also reject: a tuple is not a list, a set
// is not a sorted list. `sequence_types: "any"` loosens that (tuples, sets and lists all compare as lists).
// Comparison itself is compareJson's (tolerances, ignore_order) over a canonical tree in which each Python
// type is an object with one "(type)" key, and types are compared first, so a difference of type says so.
import { preview } from "../format";
import { compareJson, kindOf, type CompareOptions, type Comparison, type Difference } from "./values";

export type SequenceTypes = "exact" | "any";

const TAGS = new Set(["$float", "$tuple", "$namedtuple", "$set", "$frozenset", "$dict", "$bytes", "$bytearray", "$complex", "$decimal", "$fraction", "$datetime", "$date", "$time", "$timedelta", "$range", "$ndarray", "$npscalar", "$enum"]);
const MAX_DEPTH = 100;

export class TypedValueError extends Error {}

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** The tag of a tagged value (a one-key object whose key is a known tag), or undefined for anything else. */
function tagOf(v: unknown): string | undefined {
  if (!isObj(v)) return undefined;
  const keys = Object.keys(v);
  return keys.length === 1 && TAGS.has(keys[0]!) ? keys[0] : undefined;
}

/** A sort key for set members and dict keys: their canonical tree as text. */
function sortKey(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === "bigint" ? `n${x}` : typeof x === "number" && !Number.isFinite(x) ? `f${x}` : x));
}

function list(x: unknown, what: string, n?: number): unknown[] {
  if (!Array.isArray(x) || (n !== undefined && x.length !== n)) throw new TypedValueError(`${what} needs ${n === undefined ? "a list" : `a list of ${n}`}`);
  return x;
}

function str(x: unknown, what: string): string {
  if (typeof x !== "string") throw new TypedValueError(`${what} needs a string`);
  return x;
}

/**
 * The canonical tree of a value written in the wire's notation. Throws TypedValueError on a malformed tag
 * (a client's value: validation reports it; a result's: the harness never writes one).
 */
export function typedValue(v: unknown, seq: SequenceTypes, depth = 0): unknown {
  if (depth > MAX_DEPTH) throw new TypedValueError(`nested deeper than ${MAX_DEPTH} levels`);
  const d = depth + 1;
  if (Array.isArray(v)) return v.map((x) => typedValue(x, seq, d));
  const tag = tagOf(v);
  if (tag === undefined) {
    if (!isObj(v)) return v;
    return { "(dict)": Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typedValue(x, seq, d)])) };
  }
  const x = (v as Record<string, unknown>)[tag];
  const seqOf = (name: string, items: unknown[], ordered: boolean) => {
    const canon = items.map((i) => typedValue(i, seq, d));
    if (!ordered) canon.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
    return seq === "any" ? canon : { [`(${name})`]: canon };
  };
  switch (tag) {
    case "$float": {
      const f = { nan: NaN, inf: Infinity, "-inf": -Infinity }[str(x, tag)];
      if (f === undefined) throw new TypedValueError(`${tag} is "nan", "inf" or "-inf"`);
      return f;
    }
    case "$tuple":
      return seqOf("tuple", list(x, tag), true);
    case "$namedtuple": {
      // A named tuple equals the plain tuple of its values, as in Python.
      if (!isObj(x)) throw new TypedValueError(`${tag} needs {type, fields, values}`);
      return seqOf("tuple", list(x.values, `${tag}.values`), true);
    }
    case "$set":
    case "$frozenset":
      // A set equals a frozenset with the same members, as in Python.
      return seqOf("set", list(x, tag), false);
    case "$dict": {
      const entries = list(x, tag).map((e) => list(e, `${tag} entry`, 2)).map(([k, val]) => [typedValue(k, seq, d), typedValue(val, seq, d)] as const);
      if (entries.every(([k]) => typeof k === "string")) return { "(dict)": Object.fromEntries(entries) };
      entries.sort((a, b) => (sortKey(a[0]) < sortKey(b[0]) ? -1 : sortKey(a[0]) > sortKey(b[0]) ? 1 : 0));
      return { "(dict)": { "(entries)": entries.map(([k, val]) => [k, val]) } };
    }
    case "$bytes":
    case "$bytearray":
      // bytes == bytearray in Python.
      return { "(bytes)": str(x, tag) };
    case "$complex": {
      const [re, im] = list(x, tag, 2);
      return { "(complex)": [typedValue(re, seq, d), typedValue(im, seq, d)] };
    }
    case "$decimal": {
      const n = Number(str(x, tag));
      if (Number.isNaN(n) && !/nan/i.test(x as string)) throw new TypedValueError(`${tag} needs a decimal number`);
      return n;
    }
    case "$fraction": {
      const [num, den] = list(x, tag, 2);
      if (!(typeof num === "number" || typeof num === "bigint") || !(typeof den === "number" || typeof den === "bigint")) throw new TypedValueError(`${tag} needs two integers`);
      return Number(num) / Number(den);
    }
    case "$datetime":
    case "$date":
    case "$time":
      return { [`(${tag.slice(1)})`]: str(x, tag) };
    case "$timedelta":
    case "$range":
      return { [`(${tag.slice(1)})`]: list(x, tag, 3) };
    case "$ndarray":
      // An array compares by its values (nested lists), as numpy's own comparisons in tests do.
      if (!isObj(x)) throw new TypedValueError(`${tag} needs {dtype, shape, data}`);
      return typedValue(x.data, seq, d);
    case "$npscalar":
      if (!isObj(x)) throw new TypedValueError(`${tag} needs {dtype, value}`);
      return typedValue(x.value, seq, d);
    case "$enum":
      if (!isObj(x)) throw new TypedValueError(`${tag} needs {type, name, value}`);
      return { "(enum)": `${str(x.type, `${tag}.type`)}.${str(x.name, `${tag}.name`)}` };
  }
  return v;
}

/**
 * A client's value in the wire's strict notation, which the program's side decodes (bridge-py.ts): there a
 * dict is always {"$dict": [[key, value], ...]}, and a plain JSON object is refused. So each plain object
 * (a dict with string keys, here) becomes a $dict, inside tags too. Call it on a value typedValue accepts.
 */
export function toWire(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toWire);
  if (!isObj(v)) return v;
  const tag = tagOf(v);
  if (tag === undefined) return { $dict: Object.entries(v).map(([k, x]) => [k, toWire(x)]) };
  const x = v[tag];
  switch (tag) {
    case "$tuple":
    case "$set":
    case "$frozenset":
    case "$complex":
      return { [tag]: toWire(x) };
    case "$dict":
      return { $dict: (x as unknown[][]).map(([k, val]) => [toWire(k), toWire(val)]) };
    case "$namedtuple": {
      const o = x as Record<string, unknown>;
      return { $namedtuple: { ...o, values: toWire(o.values) } };
    }
    case "$ndarray": {
      const o = x as Record<string, unknown>;
      return { $ndarray: { ...o, data: toWire(o.data) } };
    }
    case "$npscalar":
    case "$enum": {
      const o = x as Record<string, unknown>;
      return { [tag]: { ...o, value: toWire(o.value) } };
    }
  }
  // $float, $bytes, $bytearray, $decimal, $fraction, dates and times, $timedelta, $range: no value inside.
  return v;
}

/** Why a client's value is not valid in the notation, or undefined. */
export function typedValueProblem(v: unknown): string | undefined {
  try {
    typedValue(v, "exact");
    return undefined;
  } catch (e) {
    if (e instanceof TypedValueError) return e.message;
    throw e;
  }
}

/** The Python type of a canonical node, with its article. */
export function typeName(node: unknown): string {
  const k = kindOf(node);
  if (k === "array") return "a list";
  if (k === "null") return "None";
  if (k === "boolean") return "a bool";
  if (k === "number") return "a number";
  if (k === "string") return "a string";
  const key = Object.keys(node as object)[0] ?? "";
  return (
    { "(tuple)": "a tuple", "(set)": "a set", "(dict)": "a dict", "(bytes)": "bytes", "(complex)": "a complex number", "(enum)": "an enum member", "(datetime)": "a datetime", "(date)": "a date", "(time)": "a time", "(timedelta)": "a timedelta", "(range)": "a range" } as Record<string, string>
  )[key] ?? "a value";
}

/** The first places where the two canonical trees hold values of different types (paired by position and key). */
function typeDifferences(a: unknown, e: unknown, at: string, out: Difference[], limit: number, ignoreOrder: boolean): void {
  if (out.length >= limit) return;
  const ta = typeName(a);
  const te = typeName(e);
  if (ta !== te) {
    out.push({ pointer: at, what: `is ${ta}, not the expected type`, actual: a, note: `expected ${te}` });
    return;
  }
  // Members of a set, or of a list compared in any order, are not paired by position: their types are
  // compared with their values.
  if (Array.isArray(a) && Array.isArray(e)) {
    if (ignoreOrder || a.length !== e.length) return;
    a.forEach((x, i) => typeDifferences(x, e[i], `${at}/${i}`, out, limit, ignoreOrder));
    return;
  }
  if (isObj(a) && isObj(e)) {
    const key = Object.keys(a)[0]!;
    if (key === "(set)") return;
    const inner = (o: Record<string, unknown>) => o[key];
    const ia = inner(a);
    const ie = inner(e);
    if (Array.isArray(ia) && Array.isArray(ie)) {
      if (ia.length === ie.length && !(key === "(tuple)" && ignoreOrder)) ia.forEach((x, i) => typeDifferences(x, ie[i], `${at}/${i}`, out, limit, ignoreOrder));
    } else if (isObj(ia) && isObj(ie) && key === "(dict)") {
      for (const k of Object.keys(ia)) if (Object.hasOwn(ie, k)) typeDifferences(ia[k], ie[k], `${at}/${k.replace(/~/g, "~0").replace(/\//g, "~1")}`, out, limit, ignoreOrder);
    }
  }
}

// The canonical tree's own wrapper keys in a pointer: a reader wants /0/key, not /(tuple)/0/(dict)/key.
const cleanPointer = (p: string) => p.replace(/\/\((tuple|set|dict|entries|bytes|complex|enum|datetime|date|time|timedelta|range)\)/g, "");

/** Python's == on two values of the notation (types first, then values with compareJson's tolerances). */
export function compareTyped(actual: unknown, expected: unknown, opts: CompareOptions & { sequenceTypes: SequenceTypes }, limit = 10): Comparison {
  const a = typedValue(actual, opts.sequenceTypes);
  const e = typedValue(expected, opts.sequenceTypes);
  const types: Difference[] = [];
  typeDifferences(a, e, "", types, limit, opts.ignoreOrder);
  if (types.length > 0) return { equal: false, differences: types, count: types.length };
  const cmp = compareJson(a, e, opts, limit);
  return { ...cmp, differences: cmp.differences.map((d) => ({ ...d, pointer: cleanPointer(d.pointer) })) };
}

/** A value of the notation as Python would print it, bounded. */
export function showTyped(v: unknown, max = 200): string {
  const show = (x: unknown, depth: number): string => {
    if (depth > 20) return "...";
    if (Array.isArray(x)) return `[${x.map((i) => show(i, depth + 1)).join(", ")}]`;
    const tag = tagOf(x);
    if (tag === undefined) {
      if (isObj(x)) return `{${Object.entries(x).map(([k, i]) => `${JSON.stringify(k)}: ${show(i, depth + 1)}`).join(", ")}}`;
      if (x === null) return "None";
      if (x === true) return "True";
      if (x === false) return "False";
      if (typeof x === "string") return JSON.stringify(x);
      return String(x);
    }
    const inner = (x as Record<string, unknown>)[tag];
    const items = (arr: unknown) => (Array.isArray(arr) ? arr.map((i) => show(i, depth + 1)) : []);
    switch (tag) {
      case "$tuple": {
        const it = items(inner);
        return `(${it.join(", ")}${it.length === 1 ? "," : ""})`;
      }
      case "$set":
        return Array.isArray(inner) && inner.length === 0 ? "set()" : `{${items(inner).join(", ")}}`;
      case "$frozenset":
        return `frozenset({${items(inner).join(", ")}})`;
      case "$dict":
        return `{${(Array.isArray(inner) ? inner : []).map((p) => (Array.isArray(p) ? `${show(p[0], depth + 1)}: ${show(p[1], depth + 1)}` : "?")).join(", ")}}`;
      case "$float":
        return { nan: "nan", inf: "inf", "-inf": "-inf" }[String(inner)] ?? "?";
      case "$bytes":
        return `b64'${String(inner)}'`;
      default:
        return preview(x, max);
    }
  };
  const text = show(v, 0);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
