// The exact JSON reader every JSON check reads artifacts through and receipts are verified with (issue 18:
// mutation testing found it had no test of its own; issue 25 moved it here from the verifier). Each value
// kind, each escape, each refusal with its exact message and position, the depth limit on both sides,
// integers beyond 2^53, and the writer and depth helpers beside it.
import { describe, expect, it } from "vitest";
import { jsonDepth, parseJsonExact, stringifyJson } from "../src/json";

const ok = (text: string, maxDepth?: number) => {
  const r = parseJsonExact(text, maxDepth);
  if (!r.ok) throw new Error(`expected ${JSON.stringify(text)} to parse: ${r.message}`);
  return r.value;
};
const refused = (text: string, maxDepth?: number) => {
  const r = parseJsonExact(text, maxDepth);
  if (r.ok) throw new Error(`expected ${JSON.stringify(text)} to be refused, got ${stringifyJson(r.value)}`);
  return r.message;
};

describe("parseJsonExact", () => {
  it("reads every kind of value", () => {
    expect(ok('{"a":[1,-2.5,300,true,false,null,"s"],"b":{}}')).toEqual({ a: [1, -2.5, 300, true, false, null, "s"], b: {} });
    expect(ok("[]")).toEqual([]);
    expect(ok("{}")).toEqual({});
    expect(ok("true")).toBe(true);
    expect(ok("false")).toBe(false);
    expect(ok("null")).toBe(null);
    expect(ok("0")).toBe(0);
    expect(ok("9")).toBe(9);
    expect(ok("-1")).toBe(-1);
    expect(ok('""')).toBe("");
  });

  it("skips each kind of JSON whitespace, and a leading byte order mark", () => {
    expect(ok(" [ 1 , 2 ] ")).toEqual([1, 2]);
    expect(ok("[1,\n2]")).toEqual([1, 2]);
    expect(ok("[1,\r2]")).toEqual([1, 2]);
    expect(ok("[1,\t2]")).toEqual([1, 2]);
    expect(ok('{ "a" : 1 ,\n "b" :\t2 }')).toEqual({ a: 1, b: 2 });
    expect(ok("[ ]")).toEqual([]);
    expect(ok("{ }")).toEqual({});
    expect(ok("\ufeff[1]")).toEqual([1]);
    expect(refused("[1,\u000b2]")).toBe('unexpected character "\\u000b" at line 1, column 4');
  });

  it("reads numbers: exponents of every form, integers beyond 2^53 as bigints, out-of-range refused", () => {
    expect(ok("1e5")).toBe(100000);
    expect(ok("1E+2")).toBe(100);
    expect(ok("1e-2")).toBe(0.01);
    expect(ok("1e10")).toBe(1e10);
    expect(ok("2.5e3")).toBe(2500);
    expect(ok("1e20")).toBe(1e20);
    expect(ok("9007199254740991")).toBe(9007199254740991);
    expect(ok("9007199254740993")).toBe(9007199254740993n);
    expect(ok("-9007199254740993")).toBe(-9007199254740993n);
    expect(refused("1e400")).toBe("number 1e400 is out of range at line 1, column 1");
    expect(refused("[-1e400]")).toBe("number -1e400 is out of range at line 1, column 2");
    expect(refused(`1.${"0".repeat(50)}e400`)).toBe(`number 1.${"0".repeat(38)} is out of range at line 1, column 1`);
    expect(refused("-")).toBe("invalid number at line 1, column 1");
    expect(refused("[-x]")).toBe("invalid number at line 1, column 2");
    expect(refused("01")).toBe("unexpected data after the JSON value at line 1, column 2");
    expect(refused("1.")).toBe("unexpected data after the JSON value at line 1, column 2");
    expect(refused("+1")).toBe('unexpected character "+" at line 1, column 1');
    expect(refused(".5")).toBe('unexpected character "." at line 1, column 1');
    expect(refused("x")).toBe('unexpected character "x" at line 1, column 1');
  });

  it("refuses NaN and Infinity, naming why", () => {
    const why = "NaN or Infinity is not JSON (Python's json.dump writes them unless allow_nan=False)";
    expect(refused("NaN")).toBe(`${why} at line 1, column 1`);
    expect(refused("[1, Infinity]")).toBe(`${why} at line 1, column 5`);
    expect(refused('{"a": -Infinity}')).toBe(`${why} at line 1, column 7`);
  });

  it("reads every escape, and the text between escapes", () => {
    expect(ok('"a\\"b\\\\c\\/d\\be\\ff\\ng\\rh\\ti\\u00e9j\\u00E9k"')).toBe('a"b\\c/d\be\ff\ng\rh\ti\u00e9j\u00e9k');
    expect(ok('"\\u0041\\u00410"')).toBe("AA0");
    expect(ok('" "')).toBe(" ");
    expect(ok('"é€😀"')).toBe("é€😀");
  });

  it("refuses broken strings, saying where", () => {
    expect(refused('"abc')).toBe("unterminated string at line 1, column 5");
    expect(refused('"a\u0001"')).toBe("control character in string at line 1, column 3");
    expect(refused('"a\u001f"')).toBe("control character in string at line 1, column 3");
    expect(refused('"a\nb"')).toBe("control character in string at line 1, column 3");
    expect(refused('"a\\x"')).toBe("bad escape at line 1, column 3");
    expect(refused('"a\\u12G4"')).toBe("bad \\u escape at line 1, column 3");
    expect(refused('"a\\u123"')).toBe("bad \\u escape at line 1, column 3");
    expect(refused('"\\')).toBe("bad escape at line 1, column 2");
  });

  it("reports positions as line and column", () => {
    expect(refused("[1,\n  x]")).toBe('unexpected character "x" at line 2, column 3');
    expect(refused("[\n1,\n\n2 3]")).toBe("expected , or ] in array at line 4, column 3");
    expect(refused("")).toBe("unexpected end of input at line 1, column 1");
    expect(refused("[1,")).toBe("unexpected end of input at line 1, column 4");
    expect(refused("[1")).toBe("expected , or ] in array at line 1, column 3");
    expect(refused(" ")).toBe("unexpected end of input at line 1, column 2");
  });

  it("refuses malformed arrays and objects", () => {
    expect(refused("[1 2]")).toBe("expected , or ] in array at line 1, column 4");
    expect(refused("[1,]")).toBe('unexpected character "]" at line 1, column 4');
    expect(refused("[,1]")).toBe('unexpected character "," at line 1, column 2');
    expect(refused('{"a" 1}')).toBe("expected : after key at line 1, column 6");
    expect(refused('{"a":1 "b":2}')).toBe("expected , or } in object at line 1, column 8");
    expect(refused("{1:2}")).toBe("expected a string key at line 1, column 2");
    expect(refused('{"a":1,}')).toBe("expected a string key at line 1, column 8");
    expect(refused("tru")).toBe('unexpected character "t" at line 1, column 1');
    expect(refused("fals")).toBe('unexpected character "f" at line 1, column 1');
    expect(refused("nul")).toBe('unexpected character "n" at line 1, column 1');
    expect(refused("[1] x")).toBe("unexpected data after the JSON value at line 1, column 5");
    expect(ok("[1] \n")).toEqual([1]);
  });

  it("refuses duplicate keys (JSON.parse keeps the last one silently), naming the key", () => {
    expect(refused('{"a":1,"a":2}')).toBe('duplicate key "a" at line 1, column 8');
    const long = "k".repeat(100);
    expect(refused(`{"${long}":1,"${long}":2}`)).toBe(`duplicate key "${"k".repeat(60)}" at line 1, column 107`);
    expect(ok('{"a":1,"b":{"a":2}}')).toEqual({ a: 1, b: { a: 2 } });
    // "__proto__" is an ordinary key, not the object's prototype.
    const proto = ok('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(Object.keys(proto)).toEqual(["__proto__"]);
    expect((proto as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("limits nesting at maxDepth, exactly", () => {
    expect(ok("[[1]]", 2)).toEqual([[1]]);
    expect(refused("[[[1]]]", 2)).toBe("nested deeper than 2 levels at line 1, column 3");
    expect(refused('{"a":{"b":{}}}', 2)).toBe("nested deeper than 2 levels at line 1, column 11");
    expect(ok("[".repeat(256) + "]".repeat(256))).toHaveLength(1);
    expect(refused("[".repeat(257) + "]".repeat(257))).toBe("nested deeper than 256 levels at line 1, column 257");
    // Without a limit, nesting past the stack is still an answer, never a crash.
    expect(refused("[".repeat(1_000_000), Infinity)).toMatch(/^too deeply nested to read \(.+\)$/);
  });
});

describe("stringifyJson", () => {
  it("writes JSON, bigints as their exact digits", () => {
    expect(stringifyJson({ a: [1, 9007199254740993n, "x"], b: null, c: { d: true } })).toBe('{"a":[1,9007199254740993,"x"],"b":null,"c":{"d":true}}');
    expect(stringifyJson([])).toBe("[]");
    expect(stringifyJson({})).toBe("{}");
    expect(stringifyJson('a"b')).toBe('"a\\"b"');
  });

  it("writes what JSON cannot hold as itself, never as null", () => {
    expect(stringifyJson(Number.NaN)).toBe("NaN");
    expect(stringifyJson(-Infinity)).toBe("-Infinity");
    expect(stringifyJson(undefined)).toBe("undefined");
    expect(stringifyJson(1.5)).toBe("1.5");
  });
});

describe("jsonDepth", () => {
  it("counts how deep a value nests", () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth(null)).toBe(0);
    expect(jsonDepth("[[]]")).toBe(0);
    expect(jsonDepth([])).toBe(1);
    expect(jsonDepth({ a: [{}] })).toBe(3);
    // The deepest branch last and a shallower one after it: the maximum is kept.
    expect(jsonDepth([[1], [[2]]])).toBe(3);
    expect(jsonDepth([[[2]], [1]])).toBe(3);
  });

  it("stops past the limit, returning a depth above it", () => {
    let deep: unknown = 1;
    for (let k = 0; k < 10; k++) deep = [deep];
    expect(jsonDepth(deep)).toBe(10);
    expect(jsonDepth(deep, 3)).toBe(4);
    expect(jsonDepth(deep, 10)).toBe(10);
  });
});
