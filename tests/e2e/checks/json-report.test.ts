// The JSON family through the public API: a report goal with a hidden expected value (json_matches) and
// assertions (json_assert); and stdout judged by text_matches. Plus issue 16.3: a deeply nested result
// ends the goal in a real state (failed, with a check saying why), never in errored.
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

const SALES = "region,units,price\nNorth,3,2.50\nSouth,10,1.25\nNorth,1,2.50\nEast,2,9007199254740993\n";
// East's revenue is 2 × 9007199254740993: an exact integer past 2^53, so the answer key is a checker file.
const EXPECTED = '{"by_region": {"North": 10.0, "South": 12.5, "East": 18014398509481986}, "rows": 4}';

const CORRECT = `import csv, json, os
from decimal import Decimal
by = {}
rows = 0
for r in csv.DictReader(open(os.environ["INPUT_PATH"])):
    rows += 1
    price = Decimal(r["price"])
    v = int(r["units"]) * price
    by[r["region"]] = by.get(r["region"], 0) + v
out = {k: (int(v) if v == v.to_integral_value() and v > 10**15 else float(v)) for k, v in by.items()}
json.dump({"by_region": out, "rows": rows}, open(os.path.join(os.environ["OUTPUT_DIR"], "report.json"), "w"))
`;

const goal = (program: string) =>
  checkedGoal({
    objective: "Revenue per region (units × price) into report.json, exactly, and the row count.",
    inputs: [{ name: "sales.csv", text: SALES }],
    checker_files: [{ name: "expected.json", text: EXPECTED }],
    deliverable: "report.json",
    checks: [
      { id: "json_matches", params: { artifact: "report.json", expected_file: "expected.json", atol: 0.001 } },
      { id: "json_assert", params: { artifact: "report.json", pointer: "/rows", op: "eq", value: 4 } },
      { id: "json_assert", params: { artifact: "report.json", pointer: "/by_region", op: "len", value: 3 } },
    ],
    program,
  });

describe("a JSON report goal with a hidden expected value", () => {
  it("verifies the right program; the report is the deliverable", async () => {
    const g = await loop.run(goal(CORRECT));
    expect(g.state, JSON.stringify(g.checks.map((c) => c.latest?.message))).toBe("verified");
    expect(g.deliverable.artifact).toMatchObject({ name: "report.json" });
    expect(g.report).toMatchObject({ rows: 4, by_region: { North: 10, South: 12.5 } });
    expect(g.checks.filter((c) => c.source === "baseline").map((c) => c.id)).toEqual(["exits_clean", "artifact_exists", "json_parses"]);
  });

  const wrong: [string, string, RegExp][] = [
    ["loses the big integer to a float", CORRECT.replace("price = Decimal(r[\"price\"])", "price = float(r[\"price\"])").replace("v == v.to_integral_value() and v > 10**15", "False"), /East/],
    ["is off by one row", CORRECT.replace('"rows": rows', '"rows": rows - 1'), /rows/],
    ["drops a region", CORRECT.replace("out = {", "by.pop('South')\nout = {"), /lacks an expected key|len/],
    ["writes numbers as strings", CORRECT.replace("json.dump({\"by_region\": out", "json.dump({\"by_region\": {k: str(v) for k, v in out.items()}"), /not the expected type/],
    ["writes NaN", CORRECT.replace('"rows": rows', '"rows": float("nan")'), /NaN/],
  ];
  for (const [name, program, why] of wrong) {
    it(`never verifies a program that ${name}`, async () => {
      const g = await loop.run(goal(program));
      expect(g.state).toBe("failed");
      expect(g.checks.filter((c) => c.latest && !c.latest.passed).map((c) => c.latest!.message).join(" | ")).toMatch(why);
    });
  }

  it("issue 16.3: a result nested 100,000 deep ends failed on its merits, with a check saying why, not errored", async () => {
    const deep = `import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "report.json"), "w").write("[" * 100000 + "]" * 100000)\n`;
    const g = await loop.run(goal(deep));
    expect(g.state).toBe("failed");
    expect(g.failure_reason).toBe("budget_attempts");
    expect(g.checks.find((c) => c.id === "json_parses")!.latest!.message).toMatch(/nested deeper than 256 levels/);
    expect(g.executions).toHaveLength(1);
  });
});

describe("stdout judged by text_matches", () => {
  const textGoal = (program: string) =>
    checkedGoal({
      objective: "Print the first five squares, one per line, then their mean to 3 decimals.",
      deliverable: null,
      checks: [{ id: "text_matches", hidden: true, params: { expected: "1\n4\n9\n16\n25\n11.000\n", mode: "floats", atol: 0.0005 } }, { id: "cases", params: { mode: "stdin", cases: [{ stdin: "", expected_stdout: "1\n4\n9\n16\n25\n11.000\n" }] } }],
      program,
    });
  it("verifies the right output, and never a wrong one", async () => {
    expect((await loop.run(textGoal("for i in range(1, 6):\n    print(i * i)\nprint('%.3f' % 11)\n"))).state).toBe("verified");
    for (const program of ["for i in range(1, 6):\n    print(i * i)\n", "for i in range(0, 5):\n    print(i * i)\nprint('11.000')\n", "print('1 4 9 16 25 11.002')\n"]) {
      expect((await loop.run(textGoal(program))).state).toBe("failed");
    }
  });
});
