// Issue 27 (item 5): a cleaning goal judged by csv_repair through the public API: the program really
// runs, the check scores its output against the dirty input and the hidden expected file, and the
// (scripted) inspector's "verified" cannot carry a repair below the client's bars.
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

const DIRTY = `order_id,region,revenue
1,North,"$1,299.00"
2,south,250.5
3,,99.99
2,south,250.5
4,East,1000
5, West ,12.35
`;
// Cells that need fixing: 1.revenue, 2.region, 3.region, 5.region. The expected file is hidden.
const EXPECTED = `order_id,region,revenue
1,North,1299.00
2,South,250.50
3,Unknown,99.99
4,East,1000.00
5,West,12.35
`;

const CLEAN = `import csv, os
rows, seen = [], set()
with open(os.environ["INPUT_PATH"], newline="") as f:
    for r in csv.DictReader(f):
        if r["order_id"] in seen:
            continue
        seen.add(r["order_id"])
        region = r["region"].strip().title() or "Unknown"
        revenue = float(r["revenue"].replace("$", "").replace(",", ""))
        rows.append([r["order_id"], region, "%.2f" % revenue])
with open(os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "region", "revenue"])
    w.writerows(rows)
`;

const check = { id: "csv_repair", params: { artifact: "clean.csv", expected_file: "expected.csv", input_file: "orders.csv", key: ["order_id"], min_recall: 0.75, atol: 0.005 } };
const goal = (program: string) =>
  checkedGoal({
    objective: "Clean orders.csv into clean.csv: one row per order, title-case regions (blank: Unknown), revenue as a number.",
    inputs: [{ name: "orders.csv", text: DIRTY }],
    checker_files: [{ name: "expected.csv", text: EXPECTED }],
    deliverable: "clean.csv",
    checks: [check],
    program,
  });
const repairOf = (g: Awaited<ReturnType<Loop["run"]>>) => g.checks.find((c) => c.id === "csv_repair")!;

describe("a cleaning goal judged by csv_repair", () => {
  it("verifies the right repair, with its scores in the client's view", async () => {
    const g = await loop.run(goal(CLEAN));
    const c = repairOf(g);
    expect(g.state, c.latest?.message).toBe("verified");
    expect(c).toMatchObject({ hidden: true, reveal: "input", source: "client" });
    expect(c.latest!.message).toContain("recall 1 (4 of 4 cells that needed fixing fixed), precision 1 (4 of 4 changed cells right, 0 good cells broken), accuracy 1 (10 of 10 cells right)");
  });

  it("verifies a repair that misses one fix but meets min_recall 0.75 and breaks nothing", async () => {
    const g = await loop.run(goal(CLEAN.replace('r["region"].strip().title() or "Unknown"', '(r["region"].title() if r["region"] != " West " else r["region"]) or "Unknown"')));
    expect(g.state, repairOf(g).latest?.message).toBe("verified");
    expect(repairOf(g).latest!.message).toContain("recall 0.75 (3 of 4 cells that needed fixing fixed)");
  });

  const wrong: [string, string, RegExp][] = [
    ["copies the dirty input through", `import os, shutil\nshutil.copy(os.environ["INPUT_PATH"], os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"))\n`, /recall 0 is below 0\.75; precision 0 is below 1; 1 duplicate key/],
    ["breaks a good cell (every region upper-cased)", CLEAN.replace(".title()", ".upper()"), /precision 0.3333 is below 1/],
    ["drops the row it could not clean", CLEAN.replace('region = r["region"].strip().title() or "Unknown"', 'region = r["region"].strip().title()\n        if not region: continue'), /1 expected row missing/],
  ];
  for (const [name, program, why] of wrong) {
    it(`never verifies a program that ${name}`, async () => {
      const g = await loop.run(goal(program));
      expect(g.state).toBe("failed");
      const latest = repairOf(g).latest!;
      expect(latest.passed).toBe(false);
      expect(latest.message).toMatch(why);
      // The inspector said verified; the check vetoed it.
      expect(g.transitions.find((t) => t.from === "inspect")!.detail).toMatchObject({ inspector_overruled: true });
    });
  }

  it("tells the client the expected value of a wrong repair, and the models only where, the input and the output", async () => {
    const g = await loop.run(goal(CLEAN.replace('or "Unknown"', 'or "N/A"')));
    const latest = repairOf(g).latest!;
    expect(latest.findings[0]).toMatchObject({ where: 'row 3 (order_id=3), column "region"', input: "", actual: "N/A", expected: "Unknown" });
    expect(latest.message).toContain('expected "Unknown"');
    expect(latest.feedback).toContain('row 3 (order_id=3), column "region" | input:  | got: N/A');
    expect(latest.feedback).not.toContain("Unknown");
  });
});
