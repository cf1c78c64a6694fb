import { describe, expect, it } from "vitest";
import { findBodyProblem, findDuplicateKey } from "../src/json-body";

describe("findDuplicateKey", () => {
  it.each([
    ['{"a":1,"a":2}', "body.a"],
    ['{"x":[{"k":1},{"k":1,"k":2}]}', "body.x.1.k"],
    ['{"x":[[1,2],{"y":{"z":0,"z":0}}]}', "body.x.1.y.z"],
    ['{"s":"a \\" \\\\","s":1}', "body.s"],
    ['{"\\u0061":1,"a":2}', "body.a"],
    ['{"a\\\\":1,"a\\\\":2}', "body.a\\"],
  ])("finds the repeat in %s at %s", (text, path) => {
    JSON.parse(text); // every case is valid JSON
    expect(findDuplicateKey(text)?.path).toBe(path);
  });

  it.each([
    '{"a":1,"b":{"a":1},"c":[{"a":1},{"a":2}]}',
    '{"s":"{\\"a\\":1,\\"a\\":2}","t":"\\\\","a":1}',
    '[{"a":1},{"a":1}]',
    '"just a string with \\"a\\":1,\\"a\\":1"',
    '{"a":"\\\\\\"","b":"c"}',
  ])("finds none in %s", (text) => {
    JSON.parse(text);
    expect(findDuplicateKey(text)).toBeNull();
  });
});

describe("findBodyProblem", () => {
  it("finds lone surrogates in values and keys, not in pairs", () => {
    expect(findBodyProblem({ a: ["ok", "x\ud800"] })?.path).toBe("body.a.1");
    expect(findBodyProblem({ a: "\udfff" })?.message).toMatch(/lone UTF-16 surrogate/);
    expect(findBodyProblem({ ["k\udc00"]: 1 })?.message).toMatch(/key contains a lone/);
    expect(findBodyProblem({ a: "😀 \ud83d\ude00" })).toBeNull();
    // A high surrogate at the very end, and a low one at the very start.
    expect(findBodyProblem({ a: "ok\ud83d" })?.path).toBe("body.a");
    expect(findBodyProblem({ a: "\ude00ok" })?.path).toBe("body.a");
  });
});
