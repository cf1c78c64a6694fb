// lib/typed.ts (issue 27): Python values in the wire's tagged notation, compared with their exact types, and
// shown as Python prints them.
import { describe, expect, it } from "vitest";
import { compareTyped, showTyped, toWire, typedValue, typedValueProblem, typeName, TypedValueError, type SequenceTypes } from "../src/lib/typed";

const TOL = { atol: 1e-12, rtol: 1e-9 };
const cmp = (actual: unknown, expected: unknown, over: { ignoreOrder?: boolean; sequenceTypes?: SequenceTypes; tol?: { atol: number; rtol: number } } = {}) =>
  compareTyped(actual, expected, { tol: over.tol ?? TOL, ignoreOrder: over.ignoreOrder ?? false, sequenceTypes: over.sequenceTypes ?? "exact" });
const equal = (actual: unknown, expected: unknown, over: Parameters<typeof cmp>[2] = {}) => cmp(actual, expected, over).equal;
/** Each difference as the cases check writes it in a note. */
const notes = (actual: unknown, expected: unknown, over: Parameters<typeof cmp>[2] = {}) =>
  cmp(actual, expected, over).differences.map((d) => `${d.pointer || "(value)"} ${d.what}${d.note ? ` (${d.note})` : ""}`);

describe("typedValue: every tag", () => {
  it("plain JSON is what it is in Python: an array a list, an object a dict with string keys", () => {
    expect(typedValue([1, "a", null, true], "exact")).toEqual([1, "a", null, true]);
    expect(typedValue({ a: [1] }, "exact")).toEqual({ "(dict)": { a: [1] } });
    expect(typedValue({}, "exact")).toEqual({ "(dict)": {} });
  });

  it("reads each tag, and keeps sequences typed unless sequence_types is any", () => {
    expect(typedValue({ $float: "nan" }, "exact")).toBeNaN();
    expect(typedValue({ $float: "inf" }, "exact")).toBe(Infinity);
    expect(typedValue({ $float: "-inf" }, "exact")).toBe(-Infinity);
    expect(typedValue({ $tuple: [1, [2]] }, "exact")).toEqual({ "(tuple)": [1, [2]] });
    expect(typedValue({ $tuple: [1, { $tuple: [2] }] }, "any")).toEqual([1, [2]]);
    expect(typedValue({ $namedtuple: { type: "P", fields: ["x", "y"], values: [1, 2] } }, "exact")).toEqual({ "(tuple)": [1, 2] });
    // A set's members in a canonical order; a frozenset is a set.
    expect(typedValue({ $set: [3, 1, 2] }, "exact")).toEqual({ "(set)": [1, 2, 3] });
    expect(typedValue({ $frozenset: [3, 1, 2] }, "exact")).toEqual({ "(set)": [1, 2, 3] });
    expect(typedValue({ $set: [3, 1, 2] }, "any")).toEqual([1, 2, 3]);
    expect(typedValue({ $dict: [["b", 1], ["a", { $tuple: [] }]] }, "exact")).toEqual({ "(dict)": { b: 1, a: { "(tuple)": [] } } });
    expect(typedValue({ $dict: [[2, "b"], [1, "a"]] }, "exact")).toEqual({ "(dict)": { "(entries)": [[1, "a"], [2, "b"]] } });
    expect(typedValue({ $bytes: "AAE=" }, "exact")).toEqual({ "(bytes)": "AAE=" });
    expect(typedValue({ $bytearray: "AAE=" }, "exact")).toEqual({ "(bytes)": "AAE=" });
    expect(typedValue({ $complex: [1, { $float: "inf" }] }, "exact")).toEqual({ "(complex)": [1, Infinity] });
    expect(typedValue({ $decimal: "1.25" }, "exact")).toBe(1.25);
    expect(typedValue({ $decimal: "NaN" }, "exact")).toBeNaN();
    expect(typedValue({ $fraction: [1, 4] }, "exact")).toBe(0.25);
    expect(typedValue({ $datetime: "2026-01-02T03:04:05" }, "exact")).toEqual({ "(datetime)": "2026-01-02T03:04:05" });
    expect(typedValue({ $date: "2026-01-02" }, "exact")).toEqual({ "(date)": "2026-01-02" });
    expect(typedValue({ $time: "03:04:05" }, "exact")).toEqual({ "(time)": "03:04:05" });
    expect(typedValue({ $timedelta: [1, 2, 3] }, "exact")).toEqual({ "(timedelta)": [1, 2, 3] });
    expect(typedValue({ $range: [0, 10, 2] }, "exact")).toEqual({ "(range)": [0, 10, 2] });
    expect(typedValue({ $ndarray: { dtype: "int64", shape: [2, 1], data: [[1], [2]] } }, "exact")).toEqual([[1], [2]]);
    expect(typedValue({ $npscalar: { dtype: "float64", value: 0.5 } }, "exact")).toBe(0.5);
    expect(typedValue({ $enum: { type: "Color", name: "RED", value: 1 } }, "exact")).toEqual({ "(enum)": "Color.RED" });
  });

  it("an object with one key that is no tag, or a tag beside other keys, is a dict", () => {
    expect(typedValue({ $tuple: [1], x: 1 }, "exact")).toEqual({ "(dict)": { $tuple: [1], x: 1 } });
    expect(typedValue({ $handle: 1 }, "exact")).toEqual({ "(dict)": { $handle: 1 } });
  });

  it.each([
    [{ $float: "zero" }, '$float is "nan", "inf" or "-inf"'],
    [{ $float: 1 }, "$float needs a string"],
    [{ $tuple: 5 }, "$tuple needs a list"],
    [{ $set: "abc" }, "$set needs a list"],
    [{ $frozenset: {} }, "$frozenset needs a list"],
    [{ $namedtuple: [1, 2] }, "$namedtuple needs {type, fields, values}"],
    [{ $namedtuple: { type: "P", fields: [], values: 1 } }, "$namedtuple.values needs a list"],
    [{ $dict: 3 }, "$dict needs a list"],
    [{ $dict: [[1]] }, "$dict entry needs a list of 2"],
    [{ $dict: [[1, 2, 3]] }, "$dict entry needs a list of 2"],
    [{ $bytes: 1 }, "$bytes needs a string"],
    [{ $bytearray: null }, "$bytearray needs a string"],
    [{ $complex: [1] }, "$complex needs a list of 2"],
    [{ $decimal: "abc" }, "$decimal needs a decimal number"],
    [{ $decimal: 1 }, "$decimal needs a string"],
    [{ $fraction: ["1", 2] }, "$fraction needs two integers"],
    [{ $date: 20260102 }, "$date needs a string"],
    [{ $timedelta: [1, 2] }, "$timedelta needs a list of 3"],
    [{ $range: "0:3" }, "$range needs a list of 3"],
    [{ $ndarray: [1, 2] }, "$ndarray needs {dtype, shape, data}"],
    [{ $npscalar: 1 }, "$npscalar needs {dtype, value}"],
    [{ $enum: "Color.RED" }, "$enum needs {type, name, value}"],
    [{ $enum: { type: 1, name: "RED", value: 1 } }, "$enum.type needs a string"],
    // Deep inside plain values too.
    [[1, { a: [{ $tuple: 1 }] }], "$tuple needs a list"],
    [{ $dict: [[{ $set: 1 }, 2]] }, "$set needs a list"],
  ])("refuses a malformed %j with TypedValueError", (v, message) => {
    expect(() => typedValue(v, "exact")).toThrow(TypedValueError);
    expect(() => typedValue(v, "exact")).toThrow(message);
    expect(typedValueProblem(v)).toBe(message);
    // compareTyped refuses it on either side.
    expect(() => cmp(v, 1)).toThrow(TypedValueError);
    expect(() => cmp(1, v)).toThrow(TypedValueError);
  });

  it("refuses a value nested deeper than 100 levels, and takes one of 100", () => {
    const nest = (n: number) => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = [v];
      return v;
    };
    expect(typedValueProblem(nest(100))).toBeUndefined();
    expect(typedValueProblem(nest(102))).toBe("nested deeper than 100 levels");
    expect(typedValueProblem({ $tuple: [1] })).toBeUndefined();
  });
});

describe("compareTyped: exact types", () => {
  it("a tuple is not a list, a set is not a sorted list, and says so as a type", () => {
    expect(notes({ $tuple: [1, 2] }, [1, 2])).toEqual(["(value) is a tuple, not the expected type (expected a list)"]);
    expect(notes([1, 2], { $tuple: [1, 2] })).toEqual(["(value) is a list, not the expected type (expected a tuple)"]);
    expect(notes({ $set: [3, 1, 2] }, [1, 2, 3])).toEqual(["(value) is a set, not the expected type (expected a list)"]);
    expect(notes({ $tuple: [1] }, { $set: [1] })).toEqual(["(value) is a tuple, not the expected type (expected a set)"]);
    expect(notes({ $range: [0, 3, 1] }, [0, 1, 2])).toEqual(["(value) is a range, not the expected type (expected a list)"]);
    expect(notes({ $datetime: "2026-01-02T00:00:00" }, { $date: "2026-01-02" })).toEqual(["(value) is a datetime, not the expected type (expected a date)"]);
    expect(notes({ $enum: { type: "C", name: "R", value: 1 } }, 1)).toEqual(["(value) is an enum member, not the expected type (expected a number)"]);
    expect(notes(true, 1)).toEqual(["(value) is a bool, not the expected type (expected a number)"]);
    expect(notes("1", 1)).toEqual(["(value) is a string, not the expected type (expected a number)"]);
    expect(notes(null, [])).toEqual(["(value) is None, not the expected type (expected a list)"]);
    expect(notes({ $bytes: "MQ==" }, "1")).toEqual(["(value) is bytes, not the expected type (expected a string)"]);
    expect(notes({ $complex: [1, 0] }, 1)).toEqual(["(value) is a complex number, not the expected type (expected a number)"]);
    expect(notes({ $dict: [[1, 2]] }, [[1, 2]])).toEqual(["(value) is a dict, not the expected type (expected a list)"]);
  });

  it("reports a type difference before any value difference", () => {
    // Different lengths and values too: the type is what is said.
    expect(notes({ $tuple: [9, 9, 9] }, [1, 2])).toEqual(["(value) is a tuple, not the expected type (expected a list)"]);
    const c = cmp([{ $tuple: [1] }, 5, [7]], [[1], 6, { $tuple: [7] }]);
    expect(c.equal).toBe(false);
    expect(c.differences.map((d) => d.pointer)).toEqual(["/0", "/2"]);
    expect(c.differences.every((d) => d.what === "is a tuple, not the expected type" || d.what === "is a list, not the expected type")).toBe(true);
  });

  it("points into nested values by position and key, without the notation's wrappers", () => {
    expect(notes({ $dict: [["a", { $tuple: [1, 2] }]] }, { a: [1, 2] })).toEqual(["/a is a tuple, not the expected type (expected a list)"]);
    expect(notes({ a: { $tuple: [1, 3] } }, { a: { $tuple: [1, 2] } })).toEqual([expect.stringMatching(/^\/a\/1 differs \(differs by 1, /)]);
    expect(notes({ $tuple: [{ $tuple: ["x", "y"] }] }, { $tuple: [{ $tuple: ["x", "z"] }] })).toEqual(["/0/1 differs"]);
    expect(notes({ "a/b": { $tuple: [1] } }, { "a/b": [1] })).toEqual(["/a~1b is a tuple, not the expected type (expected a list)"]);
    for (const d of cmp({ $dict: [["k", { $set: [1, 2] }]] }, { k: { $set: [1, 3] } }).differences) expect(d.pointer).not.toMatch(/\(/);
  });

  it("sequence_types any: tuples, sets and lists compare as lists (a set in its sorted order)", () => {
    const any = { sequenceTypes: "any" as const };
    expect(equal({ $tuple: [1, 2] }, [1, 2], any)).toBe(true);
    expect(equal([1, 2], { $tuple: [1, 2] }, any)).toBe(true);
    expect(equal({ $set: [3, 1, 2] }, [1, 2, 3], any)).toBe(true);
    expect(equal({ $set: [] }, [], any)).toBe(true);
    expect(equal({ $frozenset: [2, 1] }, { $tuple: [1, 2] }, any)).toBe(true);
    expect(equal({ $dict: [["a", { $tuple: [1] }]] }, { a: [1] }, any)).toBe(true);
    expect(equal({ $set: [1, 2, 3] }, [3, 2, 1], any)).toBe(false);
    expect(equal({ $tuple: [1, 2] }, [1, 2, 3], any)).toBe(false);
    // Only sequences loosen: a dict, bytes, a range keep their types.
    expect(equal({ $dict: [[1, 2]] }, [[1, 2]], any)).toBe(false);
    expect(equal({ $bytes: "AAE=" }, [0, 1], any)).toBe(false);
    expect(equal({ $range: [0, 2, 1] }, [0, 1], any)).toBe(false);
  });

  it("ignore_order compares lists (and tuples) as multisets, never changing a type", () => {
    expect(equal([3, 1, 2], [1, 2, 3])).toBe(false);
    expect(equal([3, 1, 2], [1, 2, 3], { ignoreOrder: true })).toBe(true);
    expect(equal({ $tuple: [3, 1] }, { $tuple: [1, 3] }, { ignoreOrder: true })).toBe(true);
    expect(equal([3, { $tuple: [1] }], [{ $tuple: [1] }, 3], { ignoreOrder: true })).toBe(true);
    expect(equal({ $tuple: [3, 1] }, [1, 3], { ignoreOrder: true })).toBe(false);
    expect(equal([1, 1, 2], [1, 2, 2], { ignoreOrder: true })).toBe(false);
  });
});

describe("compareTyped: what Python's == equals", () => {
  it("a set and a frozenset with the same members, in any order", () => {
    expect(equal({ $frozenset: [2, 1] }, { $set: [1, 2] })).toBe(true);
    expect(equal({ $set: ["b", "a"] }, { $set: ["a", "b"] })).toBe(true);
    expect(equal({ $set: [{ $tuple: [2, 1] }, { $tuple: [1, 2] }] }, { $set: [{ $tuple: [1, 2] }, { $tuple: [2, 1] }] })).toBe(true);
    expect(equal({ $set: [1, 2] }, { $set: [1, 3] })).toBe(false);
    expect(equal({ $set: [1, 2] }, { $set: [1] })).toBe(false);
  });

  it("bytes and a bytearray with the same content", () => {
    expect(equal({ $bytearray: "aGk=" }, { $bytes: "aGk=" })).toBe(true);
    expect(equal({ $bytes: "aGk=" }, { $bytes: "aGo=" })).toBe(false);
  });

  it("an int and a float within the tolerance; integers beyond 2^53 exactly", () => {
    expect(equal(1.0000000001, 1)).toBe(true);
    expect(equal(1, 1.0)).toBe(true);
    expect(equal(1.1, 1)).toBe(false);
    expect(equal(1.1, 1, { tol: { atol: 0.2, rtol: 0 } })).toBe(true);
    expect(equal(9007199254740993n, 9007199254740993n)).toBe(true);
    expect(equal(9007199254740992n, 9007199254740993n)).toBe(false);
    expect(notes(1.1, 1)).toEqual([expect.stringMatching(/^\(value\) differs \(differs by 0\.1/)]);
  });

  it("NaN equals NaN and an infinity itself, nothing else", () => {
    expect(equal({ $float: "nan" }, { $float: "nan" })).toBe(true);
    expect(equal([{ $float: "inf" }], [{ $float: "inf" }])).toBe(true);
    expect(equal({ $float: "inf" }, { $float: "-inf" })).toBe(false);
    expect(equal({ $float: "nan" }, 0)).toBe(false);
    expect(equal(1e308, { $float: "inf" })).toBe(false);
  });

  it("dicts with keys of any type, in any order; a string key is not an integer key", () => {
    expect(equal({ $dict: [[2, "b"], [1, "a"]] }, { $dict: [[1, "a"], [2, "b"]] })).toBe(true);
    expect(equal({ $dict: [[{ $tuple: [1, 2] }, "x"]] }, { $dict: [[{ $tuple: [1, 2] }, "x"]] })).toBe(true);
    expect(equal({ $dict: [[1, "a"]] }, { $dict: [["1", "a"]] })).toBe(false);
    expect(equal({ $dict: [[1, "a"], [2, "b"]] }, { $dict: [[1, "a"], [2, "c"]] })).toBe(false);
    expect(equal({ $dict: [[1, "a"]] }, { $dict: [[1, "a"], [2, "b"]] })).toBe(false);
    // String keys: a plain object and a $dict are the same dict, in any order.
    expect(equal({ $dict: [["b", 2], ["a", 1]] }, { a: 1, b: 2 })).toBe(true);
    expect(equal({ a: 1 }, { a: 1, b: 2 })).toBe(false);
  });

  it("a named tuple is the tuple of its values; an array its nested lists; a numpy scalar its value", () => {
    expect(equal({ $namedtuple: { type: "Point", fields: ["x", "y"], values: [1, 2] } }, { $tuple: [1, 2] })).toBe(true);
    expect(equal({ $namedtuple: { type: "Point", fields: ["x", "y"], values: [1, 2] } }, [1, 2])).toBe(false);
    expect(equal({ $ndarray: { dtype: "float64", shape: [2], data: [0.5, 1] } }, [0.5, 1])).toBe(true);
    expect(equal({ $npscalar: { dtype: "int64", value: 3 } }, 3)).toBe(true);
    expect(equal({ $npscalar: { dtype: "bool", value: true } }, 1)).toBe(false);
  });

  it("an enum member by its type and name; decimals, fractions, complex numbers, dates by value", () => {
    expect(equal({ $enum: { type: "Color", name: "RED", value: 1 } }, { $enum: { type: "Color", name: "RED", value: 1 } })).toBe(true);
    expect(equal({ $enum: { type: "Color", name: "RED", value: 1 } }, { $enum: { type: "Color", name: "BLUE", value: 1 } })).toBe(false);
    expect(equal({ $enum: { type: "Color", name: "RED", value: 1 } }, { $enum: { type: "Shade", name: "RED", value: 1 } })).toBe(false);
    expect(equal({ $decimal: "1.5" }, 1.5)).toBe(true);
    expect(equal({ $fraction: [1, 3] }, { $fraction: [2, 6] })).toBe(true);
    expect(equal({ $complex: [1, 2] }, { $complex: [1, 2] })).toBe(true);
    expect(equal({ $complex: [1, 2] }, { $complex: [1, -2] })).toBe(false);
    expect(equal({ $date: "2026-01-02" }, { $date: "2026-01-03" })).toBe(false);
    expect(equal({ $timedelta: [1, 0, 0] }, { $timedelta: [1, 0, 0] })).toBe(true);
  });
});

describe("typeName", () => {
  it("names a canonical node's Python type with its article", () => {
    expect([[], null, true, 1, "s", {}].map(typeName)).toEqual(["a list", "None", "a bool", "a number", "a string", "a value"]);
    expect(typeName(typedValue({ $tuple: [] }, "exact"))).toBe("a tuple");
    expect(typeName(typedValue({ $time: "01:00" }, "exact"))).toBe("a time");
    expect(typeName(typedValue({ $timedelta: [0, 0, 0] }, "exact"))).toBe("a timedelta");
    expect(typeName(typedValue({ a: 1 }, "exact"))).toBe("a dict");
  });
});

describe("showTyped: as Python prints it", () => {
  it.each([
    [{ $tuple: [1] }, "(1,)"],
    [{ $tuple: [] }, "()"],
    [{ $tuple: [1, "a"] }, '(1, "a")'],
    [{ $set: [] }, "set()"],
    [{ $set: [1, 2] }, "{1, 2}"],
    [{ $frozenset: [1] }, "frozenset({1})"],
    [{ $dict: [[1, 2]] }, "{1: 2}"],
    [{ $dict: [[{ $tuple: [1, 2] }, { $set: [] }]] }, "{(1, 2): set()}"],
    [{ a: null, b: true, c: false }, '{"a": None, "b": True, "c": False}'],
    [[1, [2, { $tuple: ["x"] }]], '[1, [2, ("x",)]]'],
    [{ $float: "nan" }, "nan"],
    [{ $float: "-inf" }, "-inf"],
    [{ $bytes: "AAE=" }, "b64'AAE='"],
    [1.5, "1.5"],
    ["a\"b", '"a\\"b"'],
    [null, "None"],
  ])("%j as %s", (v, shown) => {
    expect(showTyped(v)).toBe(shown);
  });

  it("clips to its bound, with an ellipsis", () => {
    expect(showTyped("x".repeat(100), 10)).toBe(`"xxxxxxxxx…`);
    expect(showTyped({ $tuple: Array.from({ length: 100 }, (_, i) => i) }, 20)).toBe("(0, 1, 2, 3, 4, 5, 6…");
  });

  it("shows a malformed tag without throwing", () => {
    expect(showTyped({ $tuple: 5 })).toBe("()");
    expect(showTyped({ $dict: [1] })).toBe("{?}");
    expect(showTyped({ $float: "zero" })).toBe("?");
  });
});

// issue 27: the program's side decodes only the wire's strict notation, in which a dict is a $dict.
describe("toWire", () => {
  it("turns each plain object into a $dict, inside every tag that holds values", () => {
    expect(toWire({ a: 1, b: { c: [] } })).toEqual({ $dict: [["a", 1], ["b", { $dict: [["c", []]] }]] });
    expect(toWire([{}, 1, "s", null, true])).toEqual([{ $dict: [] }, 1, "s", null, true]);
    for (const tag of ["$tuple", "$set", "$frozenset"]) expect(toWire({ [tag]: [{ a: 1 }] })).toEqual({ [tag]: [{ $dict: [["a", 1]] }] });
    expect(toWire({ $dict: [[{ $tuple: [{ k: 1 }] }, { v: 2 }]] })).toEqual({ $dict: [[{ $tuple: [{ $dict: [["k", 1]] }] }, { $dict: [["v", 2]] }]] });
    expect(toWire({ $namedtuple: { type: "P", fields: ["x"], values: [{ a: 1 }] } })).toEqual({ $namedtuple: { type: "P", fields: ["x"], values: [{ $dict: [["a", 1]] }] } });
    expect(toWire({ $ndarray: { dtype: "int64", shape: [1], data: [1] } })).toEqual({ $ndarray: { dtype: "int64", shape: [1], data: [1] } });
    expect(toWire({ $npscalar: { dtype: "int64", value: 3 } })).toEqual({ $npscalar: { dtype: "int64", value: 3 } });
    expect(toWire({ $complex: [1, { $float: "nan" }] })).toEqual({ $complex: [1, { $float: "nan" }] });
    // A tag beside other keys, or a key that is no tag, is a dict's key.
    expect(toWire({ $tuple: [1], x: 1 })).toEqual({ $dict: [["$tuple", [1]], ["x", 1]] });
    expect(toWire({ $handle: 1 })).toEqual({ $dict: [["$handle", 1]] });
  });

  it("leaves tags without values inside, and exact integers, as they are", () => {
    for (const v of [{ $float: "nan" }, { $bytes: "AAE=" }, { $bytearray: "" }, { $decimal: "1.5" }, { $fraction: [1, 2] }, { $date: "2026-01-02" }, { $timedelta: [1, 0, 0] }, { $range: [0, 3, 1] }, 9007199254740993n]) expect(toWire(v)).toEqual(v);
  });

  it("keeps what it translates equal to what the client wrote", () => {
    for (const v of [{ a: [1, { b: { $tuple: [] } }] }, { $dict: [[1, { a: 1 }]] }, [{ $set: [{ $tuple: [{ a: 1 }] }] }]]) expect(cmp(toWire(v), v).equal, JSON.stringify(v)).toBe(true);
  });
});
