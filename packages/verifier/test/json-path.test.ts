import { describe, expect, it } from "vitest";
import { dotPath, resolvePath } from "../src/index";

const doc = { a: { b: [10, { c: null }] }, "": 1 };

describe("resolvePath", () => {
  it("resolves the root, keys and array indexes", () => {
    expect(resolvePath(doc, "")).toEqual({ ok: true, value: doc });
    expect(resolvePath(doc, "a.b.0")).toEqual({ ok: true, value: 10 });
    expect(resolvePath(doc, "a.b.1.c")).toEqual({ ok: true, value: null });
  });

  it("names the path and where it stopped", () => {
    expect(resolvePath(doc, "a.x")).toEqual({ ok: false, message: 'path "a.x" does not resolve: key "x" not found in the object at "a"' });
    expect(resolvePath(doc, "a.b.first")).toEqual({ ok: false, message: 'path "a.b.first" does not resolve: "first" is not an index into the array at "a.b"' });
    expect(resolvePath(doc, "a.b.0.c")).toEqual({ ok: false, message: 'path "a.b.0.c" does not resolve: the value at "a.b.0" is a number (10), not an object or array' });
    expect(resolvePath(doc, "a.b.01").ok).toBe(false);
  });

  it("uses own keys only", () => {
    expect(resolvePath({}, "constructor").ok).toBe(false);
    expect(resolvePath({}, "__proto__").ok).toBe(false);
    expect(resolvePath(JSON.parse('{"__proto__": 5}'), "__proto__")).toEqual({ ok: true, value: 5 });
  });
});

describe("dotPath", () => {
  it.each(["", "a", "a.b", "by_region.North", "rows.0.total"])("accepts %j", (p) => {
    expect(dotPath.safeParse(p).success).toBe(true);
  });

  it.each([".", "a.", ".a", "a..b"])("rejects %j", (p) => {
    expect(dotPath.safeParse(p).success).toBe(false);
  });
});
