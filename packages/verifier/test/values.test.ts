// Deep comparison of JSON values (json_matches, cases), on its own (issue 18): kinds, numbers exactly and
// within tolerance on both sides, NaN only equal to NaN, every kind of difference with its pointer, arrays
// in order and as multisets, and the bounds that keep it linear.
import { describe, expect, it } from "vitest";
import { compareJson, jsonNumbersClose, kindOf, pointerToken } from "../src/lib/values";

const tol = { atol: 0.005, rtol: 0 };
const strict = { tol, ignoreOrder: false };
const unordered = { tol, ignoreOrder: true };

describe("kindOf", () => {
  it("names each JSON kind", () => {
    expect(kindOf(null)).toBe("null");
    expect(kindOf([])).toBe("array");
    expect(kindOf(1)).toBe("number");
    expect(kindOf(10n)).toBe("number");
    expect(kindOf(true)).toBe("boolean");
    expect(kindOf("s")).toBe("string");
    expect(kindOf({})).toBe("object");
  });
});

describe("pointerToken", () => {
  it("escapes ~ and / as RFC 6901 says, ~ first", () => {
    expect(pointerToken("a/b~c")).toBe("a~1b~0c");
    expect(pointerToken("~1")).toBe("~01");
    expect(pointerToken(3)).toBe("3");
  });
});

describe("jsonNumbersClose", () => {
  it("compares integers beyond 2^53 exactly, against either side", () => {
    expect(jsonNumbersClose(9007199254740993n, 9007199254740992, { atol: 10, rtol: 1 })).toBe(false);
    expect(jsonNumbersClose(9007199254740992, 9007199254740993n, { atol: 10, rtol: 1 })).toBe(false);
    expect(jsonNumbersClose(9007199254740992n, 9007199254740992, tol)).toBe(true);
    expect(jsonNumbersClose(2n ** 60n, 2n ** 60n, tol)).toBe(true);
    expect(jsonNumbersClose(2n ** 60n, 1.5, { atol: 1e30, rtol: 1 })).toBe(false);
    expect(jsonNumbersClose(1.5, 2n ** 60n, { atol: 1e30, rtol: 1 })).toBe(false);
  });

  it("is within tolerance for doubles, both sides, and NaN equals only NaN", () => {
    expect(jsonNumbersClose(1.004, 1, tol)).toBe(true);
    expect(jsonNumbersClose(0.996, 1, tol)).toBe(true);
    expect(jsonNumbersClose(1.006, 1, tol)).toBe(false);
    expect(jsonNumbersClose(0.994, 1, tol)).toBe(false);
    expect(jsonNumbersClose(Number.NaN, Number.NaN, tol)).toBe(true);
    expect(jsonNumbersClose(Number.NaN, 1, { atol: 1e300, rtol: 1 })).toBe(false);
    expect(jsonNumbersClose(1, Number.NaN, { atol: 1e300, rtol: 1 })).toBe(false);
    expect(jsonNumbersClose(Infinity, Infinity, tol)).toBe(true);
    expect(jsonNumbersClose(Infinity, -Infinity, { atol: 1e300, rtol: 1 })).toBe(false);
    expect(jsonNumbersClose(5, Infinity, { atol: 0, rtol: 1 })).toBe(false);
  });
});

describe("compareJson", () => {
  it("finds equal values equal, numbers within tolerance included", () => {
    expect(compareJson({ a: [1, "x", null, true, { b: 2.001 }] }, { a: [1, "x", null, true, { b: 2 }] }, strict)).toEqual({ equal: true, differences: [], count: 0 });
  });

  it("names a type mismatch with the right article", () => {
    const d = (a: unknown, e: unknown) => compareJson(a, e, strict).differences[0];
    expect(d([], 1)).toEqual({ pointer: "", what: "is an array, not the expected type", actual: [], expected: 1, note: "expected a number" });
    expect(d({}, null)).toEqual({ pointer: "", what: "is an object, not the expected type", actual: {}, expected: null, note: "expected null" });
    expect(d(null, "s")).toEqual({ pointer: "", what: "is null, not the expected type", actual: null, expected: "s", note: "expected a string" });
    expect(d(true, [])).toMatchObject({ what: "is a boolean, not the expected type", note: "expected an array" });
  });

  it("reports differing scalars with a note for numbers only", () => {
    expect(compareJson(1.01, 1, strict).differences).toStrictEqual([
      { pointer: "", what: "differs", actual: 1.01, expected: 1, note: "differs by 0.01, more than the allowed 0.005 (atol 0.005 + rtol 0 × |expected|)" },
    ]);
    expect(compareJson(9007199254740993n, 9007199254740992, strict).differences[0]?.note).toBe("integers beyond 2^53 must match exactly");
    expect(compareJson("a", "b", strict).differences).toStrictEqual([{ pointer: "", what: "differs", actual: "a", expected: "b" }]);
    expect(compareJson(true, false, strict).differences).toStrictEqual([{ pointer: "", what: "differs", actual: true, expected: false }]);
  });

  it("reports missing and unexpected keys, and differences in key order, with escaped pointers", () => {
    const r = compareJson({ "a/b": 1, z: 1, m: { q: 2 } }, { "a/b": 2, y: 3, m: { q: 3 } }, strict);
    expect(r.count).toBe(4);
    expect(r.differences).toEqual([
      { pointer: "", what: "lacks an expected key", expected: { y: 3 } },
      { pointer: "/z", what: "is an unexpected key", actual: 1 },
      { pointer: "/a~1b", what: "differs", actual: 1, expected: 2, note: expect.any(String) },
      { pointer: "/m/q", what: "differs", actual: 2, expected: 3, note: expect.any(String) },
    ]);
  });

  it("compares arrays in order, counting items and saying so in the singular too", () => {
    expect(compareJson([2, 1], [1, 2], strict).count).toBe(2);
    expect(compareJson([1], [1, 2], strict).differences[0]).toEqual({ pointer: "", what: "has 1 item, not the expected number", actual: 1, expected: 2, note: "expected 2 items" });
    expect(compareJson([1, 2, 3], [1, 2], strict).differences[0]).toMatchObject({ what: "has 3 items, not the expected number" });
    expect(compareJson([1, 9], [1, 2, 3], strict).differences.map((x) => x.pointer)).toEqual(["", "/1"]);
  });

  it("limits the differences listed but counts them all", () => {
    const r = compareJson([1, 2, 3, 4], [5, 6, 7, 8], strict, 2);
    expect(r.count).toBe(4);
    expect(r.differences.map((x) => x.pointer)).toEqual(["/0", "/1"]);
    expect(compareJson([1], [2], strict, 0)).toEqual({ equal: false, differences: [], count: 1 });
  });

  it("stops counting at 100,000 differences", () => {
    const many = Array.from({ length: 100_010 }, (_, i) => i);
    const r = compareJson(many, many.map((i) => i + 1), strict, 1);
    expect(r.count).toBe(100_000);
    expect(r.equal).toBe(false);
  });

  it("as multisets: any order, exact matches by value (1 and 1.0, keys in any order), the rest within tolerance", () => {
    expect(compareJson([2, 1, { b: 1, a: [3] }], [{ a: [3], b: 1 }, 1, 2], unordered).equal).toBe(true);
    expect(compareJson([1.0, 2n ** 60n], [2n ** 60n, 1], unordered).equal).toBe(true);
    expect(compareJson([1.004, 2], [2, 1], unordered).equal).toBe(true);
    expect(compareJson([1, 1, 2], [1, 2, 2], unordered).differences).toEqual([
      { pointer: "", what: "lacks an expected item (in any order)", expected: 2 },
      { pointer: "/1", what: "is an item no expected item matches", actual: 1 },
    ]);
    expect(compareJson([[2, 1]], [[1, 2]], unordered).equal).toBe(true);
    expect(compareJson(["1"], [1], unordered).equal).toBe(false);
    expect(compareJson([true], [1], unordered).equal).toBe(false);
    expect(compareJson([null], ["null"], unordered).equal).toBe(false);
  });

  it("matches leftovers within tolerance up to 2,000 × 2,000 pairs, and reports them beyond", () => {
    const near = (n: number) => {
      const expected = Array.from({ length: n }, (_, i) => i + 0.5);
      // Produced in reverse and off by less than atol: no exact match, every one a match within tolerance.
      const actual = expected.map((v) => v + 0.001).reverse();
      return compareJson(actual, expected, unordered, 1);
    };
    expect(near(2000).equal).toBe(true);
    expect(near(2001)).toMatchObject({ equal: false, count: 4002 });
  });

  it("past the tolerance bound, matches exactly by value: keys in any order, bigints against integer doubles, arrays not objects", () => {
    const n = 2001;
    type Row = { id: number; tags: unknown; big: bigint | number; v: number; none: null; extra?: number };
    const expected: Row[] = Array.from({ length: n }, (_, i) => ({ id: i, tags: [`t${i}`, i % 2 === 0], big: 2n ** 60n * BigInt(i + 1), v: i + 0.5, none: null }));
    // The same rows, keys in another order, the big integers written as (exact) doubles, in reverse.
    const same = (): Row[] => expected.map((o) => ({ none: null, v: o.v, big: Number(o.big), tags: [...(o.tags as unknown[])], id: o.id })).reverse();
    expect(compareJson(same(), expected, unordered, 1).equal).toBe(true);
    const changes: [string, (o: Row) => void][] = [
      ["id", (o) => (o.id = -1)],
      ["a tag", (o) => ((o.tags as unknown[])[0] = "x")],
      ["a flag", (o) => ((o.tags as unknown[])[1] = !(o.tags as unknown[])[1])],
      ["an array as an object", (o) => (o.tags = { ...(o.tags as unknown[]) })],
      ["a big integer", (o) => (o.big = 2n ** 60n * 5000n + 1n)],
      ["a value past tolerance", (o) => (o.v += 1)],
      ["a null", (o) => ((o as { none: unknown }).none = 0)],
      ["an extra key", (o) => (o.extra = 1)],
    ];
    for (const [what, change] of changes) {
      const wrong = same();
      change(wrong[7]!);
      expect(compareJson(wrong, expected, unordered, 1).equal, what).toBe(false);
    }
  });

  it("notes a big integer against a double, and the allowance with rtol", () => {
    expect(jsonNumbersClose(2 ** 60, 2n ** 60n, { atol: 0, rtol: 0 })).toBe(true);
    expect(jsonNumbersClose(2n ** 60n, 2 ** 60, { atol: 0, rtol: 0 })).toBe(true);
    expect(compareJson(9007199254740992, 9007199254740993n, strict).differences[0]?.note).toBe("integers beyond 2^53 must match exactly");
    expect(compareJson(2.1, 2, { tol: { atol: 0.005, rtol: 0.01 }, ignoreOrder: false }).differences[0]?.note).toBe("differs by 0.1, more than the allowed 0.025 (atol 0.005 + rtol 0.01 × |expected|)");
  });

  it("finds two nulls equal and a null unequal to anything else", () => {
    expect(compareJson(null, null, strict).equal).toBe(true);
    expect(compareJson([null], [0], strict).equal).toBe(false);
    expect(compareJson({ a: null }, { a: "" }, strict).equal).toBe(false);
  });
});
