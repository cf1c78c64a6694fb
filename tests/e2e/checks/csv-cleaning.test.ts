// The CSV family through the public API: a cleaning goal whose definition of done is a hidden expected
// file (csv_matches), column rules (csv_schema) and a row count. The right program is verified; plausible
// wrong ones never are, whatever the (scripted) inspector says.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkedGoal } from "../../support/checked-goal";
import { startLoop, type Loop } from "../../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true, preimport: true });
});
afterAll(async () => {
  await loop?.close();
});

const MESSY = `order_id,date,region,revenue
1,2024-01-03,North,"$1,299.00"
2,03/01/2024,south,$250.5
3,2024-01-05,,$99.99
2,03/01/2024,south,$250.5
4,2024-01-07,East,"$1,000"
5,2024-01-08, West ,$12.345
`;
// The client's answer key: deduplicated, dates ISO, regions title-cased, blank region "Unknown",
// revenue a number with two decimals.
const EXPECTED = `order_id,date,region,revenue
1,2024-01-03,North,1299.00
2,2024-01-03,South,250.50
3,2024-01-05,Unknown,99.99
4,2024-01-07,East,1000.00
5,2024-01-08,West,12.35
`;

const CORRECT = `import csv, os
from datetime import datetime
rows, seen = [], set()
with open(os.environ["INPUT_PATH"], newline="") as f:
    for r in csv.DictReader(f):
        if r["order_id"] in seen:
            continue
        seen.add(r["order_id"])
        d = r["date"]
        if "/" in d:
            d = datetime.strptime(d, "%d/%m/%Y").strftime("%Y-%m-%d")
        region = r["region"].strip().title() or "Unknown"
        revenue = float(r["revenue"].replace("$", "").replace(",", ""))
        rows.append([r["order_id"], d, region, "%.2f" % revenue])
with open(os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "date", "region", "revenue"])
    w.writerows(rows)
`;

const checks = [
  { id: "csv_matches", params: { artifact: "clean.csv", expected_file: "expected.csv", row_order: "key", key: ["order_id"], atol: 0.005 } },
  {
    id: "csv_schema",
    params: {
      artifact: "clean.csv",
      columns: ["order_id", "date", "region", "revenue"],
      column_order: "exact",
      rules: { order_id: { type: "integer", unique: true, not_null: true }, date: { type: "date", not_null: true }, revenue: { type: "number", between: [0, 1e6] } },
    },
  },
  { id: "row_count", params: { artifact: "clean.csv", min: 1 } },
];
const goal = (program: string, timeoutSeconds?: number) =>
  checkedGoal({
    objective: "Clean orders.csv into clean.csv: one row per order, ISO dates, title-case regions (blank: Unknown), revenue as a number with 2 decimals.",
    inputs: [{ name: "orders.csv", text: MESSY }],
    checker_files: [{ name: "expected.csv", text: EXPECTED }],
    deliverable: "clean.csv",
    checks,
    program,
    timeoutSeconds,
  });

describe("a CSV-cleaning goal with a hidden expected file", () => {
  it("verifies the right program and points at its deliverable", async () => {
    const g = await loop.run(goal(CORRECT));
    expect(g.state, JSON.stringify(g.checks.map((c) => [c.id, c.latest?.message]))).toBe("verified");
    expect(g.deliverable.name).toBe("clean.csv");
    expect(g.deliverable.artifact).toMatchObject({ name: "clean.csv", attempt: 1 });
    expect(g.report).toBeNull();
    // The client sees its hidden check, marked hidden, with the full result.
    const matches = g.checks.find((c) => c.id === "csv_matches")!;
    expect(matches).toMatchObject({ hidden: true, reveal: "input", source: "client" });
    expect(matches.latest).toMatchObject({ passed: true });
    expect(g.checker_files).toEqual([{ name: "expected.csv", size: EXPECTED.length, sha256: expect.any(String) }]);
    // The baseline follows the deliverable: the CSV must exist; result.json is not required.
    expect(g.checks.filter((c) => c.source === "baseline").map((c) => c.id)).toEqual(["exits_clean", "artifact_exists"]);
  });

  const wrong: [string, string, RegExp][] = [
    ["keeps the duplicate order", CORRECT.replace('if r["order_id"] in seen:', "if False:"), /duplicate/],
    ["drops the row with a blank region", CORRECT.replace('region = r["region"].strip().title() or "Unknown"', 'region = r["region"].strip().title()\n        if not region: continue'), /missing/],
    ["rounds one value a cent off (tolerance 0.005 just exceeded)", CORRECT.replace('"%.2f" % revenue', '"%.2f" % (revenue + (0.01 if r["order_id"] == "4" else 0))'), /1 cell differs|differ/],
    ["leaves one date in its original format", CORRECT.replace('if "/" in d:', 'if False:'), /differ/],
    ["writes a glowing result.json and no clean.csv", `import json, os\njson.dump({"status": "all good", "rows": 5}, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))\n`, /not returned/],
    [
      "looks for the answer key wherever it might be",
      `import os, shutil\nfor root in ["/", "/work", "/tmp", "/work/inputs", os.environ.get("INPUT_DIR", "")]:\n    p = os.path.join(root, "expected.csv")\n    if os.path.exists(p):\n        shutil.copy(p, os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"))\n`,
      /not returned/,
    ],
    ["exits 0 before writing anything", `import sys\nsys.exit(0)\n`, /not returned/],
  ];
  for (const [name, program, why] of wrong) {
    it(`never verifies a program that ${name}`, async () => {
      const g = await loop.run(goal(program));
      expect(g.state).toBe("failed");
      expect(g.failure_reason).toBe("budget_attempts");
      const failing = g.checks.filter((c) => c.latest && !c.latest.passed);
      expect(failing.length).toBeGreaterThan(0);
      expect(failing.map((c) => c.latest!.message).join(" | ")).toMatch(why);
      // The inspector said verified; the checks vetoed it.
      expect(g.transitions.find((t) => t.from === "inspect")!.detail).toMatchObject({ inspector_overruled: true });
    });
  }

  it("kills a program that never ends, and does not verify it", async () => {
    const g = await loop.run(goal(`${CORRECT}\nwhile True:\n    pass\n`, 3));
    expect(g.state).toBe("failed");
    expect(g.executions[0]).toMatchObject({ timed_out: true });
  });

  it("tells the client exactly which cell differs, and the models only where", async () => {
    const g = await loop.run(goal(CORRECT.replace('"%.2f" % revenue', '"%.2f" % (revenue + (0.01 if r["order_id"] == "4" else 0))')));
    const latest = g.checks.find((c) => c.id === "csv_matches")!.latest!;
    expect(latest.message).toContain("1000.00");
    expect(latest.findings[0]).toMatchObject({ where: expect.stringContaining('column "revenue"'), actual: "1000.01", expected: "1000.00" });
    // reveal "input": the row's key and what the program wrote, never the expected cell.
    expect(latest.feedback).toContain("1000.01");
    expect(latest.feedback).not.toContain("1000.00");
  });
});
