// The `cases` check's typed values for real (issue 27): the arguments a client writes reach the function as
// the Python values they name (a JSON object is a dict with string keys, {"$tuple": [...]} a tuple ...), and
// what the function returns is compared with its exact type, so a tuple where a list is expected, or a set
// where a sorted list is expected, is refused unless sequence_types is any.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkedGoal } from "../../support/checked-goal";
import { startLoop, type Loop } from "../../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

const goal = (program: string, params: Record<string, unknown>) => checkedGoal({ deliverable: null, checks: [{ id: "cases", params: { timeout_seconds: 5, ...params } }], program });

const outcome = async (program: string, params: Record<string, unknown>) => {
  const g = await loop.run(goal(program, params));
  const cases = g.checks.find((c) => c.id === "cases")!.latest!;
  return { state: g.state, passed: cases.passed, message: cases.message };
};

describe("cases: typed arguments and results, in a real sandbox", () => {
  // issue 27: the server decodes the wire's strict notation, in which a dict is {"$dict": [...]}; a client's
  // plain object must reach the function as a dict, not as an error every program raises.
  it("passes a JSON object as a dict, nested in lists, tuples and kwargs", async () => {
    const program = "def total(prices, extra=None):\n    assert type(prices) is dict, type(prices)\n    return sum(prices.values()) + sum(v for t in (extra or ()) for v in t['n'])\n";
    const params = {
      function: "total",
      cases: [
        { id: "plain", args: [{ apple: 2, pear: 3 }], expected: 5 },
        { id: "nested", args: [{ a: 1 }], kwargs: { extra: { $tuple: [{ n: [1, 2] }, { n: [3] }] } }, expected: 7 },
        { id: "empty", args: [{}], expected: 0 },
      ],
    };
    expect(await outcome(program, params)).toEqual({ state: "verified", passed: true, message: "all 3 cases passed" });
  });

  it("passes tuples, sets, dicts with integer keys and bytes as themselves", async () => {
    const program = [
      "def probe(t, s, d, b):",
      "    return [type(t).__name__, type(s).__name__, sorted(d), type(b).__name__, t, sorted(s), d[1], b.decode()]",
      "",
    ].join("\n");
    const params = { function: "probe", cases: [{ args: [{ $tuple: [1, 2] }, { $set: [3, 1] }, { $dict: [[1, "one"], [2, "two"]] }, { $bytes: "aGk=" }], expected: ["tuple", "set", [1, 2], "bytes", { $tuple: [1, 2] }, [1, 3], "one", "hi"] }] };
    expect(await outcome(program, params)).toEqual({ state: "verified", passed: true, message: "all 1 case passed" });
  });

  it("compares an enum member the function returns by its type, name and value", async () => {
    const program = "import enum\nclass Color(enum.Enum):\n    RED = 1\n    GREEN = 2\ndef pick(n):\n    return Color.RED if n == 1 else Color.GREEN\n";
    const red = { $enum: { type: "Color", name: "RED", value: 1 } };
    expect(await outcome(program, { function: "pick", cases: [{ id: "one", args: [1], expected: red }] })).toEqual({ state: "verified", passed: true, message: "all 1 case passed" });
    expect(await outcome(program, { function: "pick", cases: [{ id: "two", args: [2], expected: red }] })).toMatchObject({ state: "failed", passed: false });
  });

  it("refuses a tuple where a list is expected and a set where a sorted list is expected; sequence_types any accepts both", async () => {
    const pairs = "def pairs(xs):\n    return tuple(sorted(xs))\n";
    const unique = "def unique(xs):\n    return set(xs)\n";
    const listCases = { function: "pairs", cases: [{ id: "c", args: [[3, 1, 2]], expected: [1, 2, 3] }] };
    const setCases = { function: "unique", cases: [{ id: "c", args: [[3, 1, 3, 2]], expected: [1, 2, 3] }] };
    expect(await outcome(pairs, listCases)).toMatchObject({ state: "failed", passed: false, message: '1 of 1 case failed: case "c": wrong answer (pairs([3, 1, 2]): expected [1, 2, 3], got (1, 2, 3))' });
    expect(await outcome(unique, setCases)).toMatchObject({ state: "failed", passed: false, message: '1 of 1 case failed: case "c": wrong answer (unique([3, 1, 3, 2]): expected [1, 2, 3], got {1, 2, 3})' });
    expect(await outcome(pairs, { ...listCases, sequence_types: "any" })).toMatchObject({ state: "verified", passed: true });
    expect(await outcome(unique, { ...setCases, sequence_types: "any" })).toMatchObject({ state: "verified", passed: true });
  });
});
