// Issue 27 (item 5): csv_repair judges a cleaning job by cells fixed and good cells broken. Each wrong
// output below must fail, each right (or right enough, by the client's bars) output pass, and hidden
// expected cells must never reach a field a model may see.
import { describe, expect, it } from "vitest";
import { csvRepair } from "../src/checks/csv-repair";
import { checkerFilesOf, publicCheck, runCheck } from "../src/run";
import type { CheckResult } from "../src/types";
import { check, emptyCtx, file } from "./support";

const CANARY = "CANARY-5d1e";

function table(rows: string[][], header = ["order_id", "region", "revenue", "note"]): string {
  const q = (c: string) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  return [header, ...rows].map((r) => r.map(q).join(",")).join("\n") + "\n";
}

// The mess: a lower-case region, a currency string, a blank region, a duplicated order, a padded region.
// The expected note of order 3 is the canary: only the expected file holds it.
const DIRTY_ROWS = [
  ["1", "North", "$1,299.00", "ok"],
  ["2", "south", "250.5", "late"],
  ["3", "", "99.99", "tbd"],
  ["2", "south", "250.5", "late"],
  ["4", "East", "1000", "ok"],
  ["5", " West ", "12.35", "ok"],
];
const CLEAN_ROWS = [
  ["1", "North", "1299.00", "ok"],
  ["2", "South", "250.50", "late"],
  ["3", "Unknown", "99.99", CANARY],
  ["4", "East", "1000.00", "ok"],
  ["5", "West", "12.35", "ok"],
];
const DIRTY = table(DIRTY_ROWS);
const EXPECTED = table(CLEAN_ROWS);
/** Cells that need fixing: 1.revenue, 2.region, 3.region, 3.note, 5.region (5 of 15 scored cells). */
const NEEDED = 5;

const withCell = (rows: string[][], row: number, col: number, value: string) => rows.map((r, i) => (i === row ? r.map((c, j) => (j === col ? value : c)) : r));

function repair(produced: string | null, params: Record<string, unknown> = {}, files: { expected?: string | null; input?: string | null } = {}): CheckResult {
  const parsed = csvRepair.params.parse({ artifact: "clean.csv", expected_file: "expected.csv", input_file: "orders.csv", key: ["order_id"], min_recall: 1, ...params });
  const expected = files.expected === undefined ? EXPECTED : files.expected;
  const input = files.input === undefined ? DIRTY : files.input;
  return csvRepair.run(
    parsed,
    emptyCtx({
      artifacts: produced === null ? [file("result.json", "{}")] : [file("clean.csv", produced)],
      checkerFiles: expected === null ? [] : [file("expected.csv", expected)],
      inputs: input === null ? [] : [file("orders.csv", input)],
    }),
  );
}

/** The canary sits only in the expected file: it may reach the client, never a model-visible field. */
function expectNoLeak(r: CheckResult): void {
  expect(r.publicMessage ?? "").not.toContain(CANARY);
  for (const f of r.findings ?? []) {
    expect(f.where).not.toContain(CANARY);
    expect(f.input ?? "").not.toContain(CANARY);
    expect(f.actual ?? "").not.toContain(CANARY);
  }
}

describe("csv_repair: params", () => {
  const parse = (p: Record<string, unknown>) => csvRepair.params.safeParse({ artifact: "a.csv", expected_file: "e.csv", input_file: "i.csv", ...p });

  it("requires min_recall, and no bar may be 0 (a copy of the input would pass) or above 1", () => {
    expect(parse({}).success).toBe(false);
    expect(parse({ min_recall: 0 }).success).toBe(false);
    expect(parse({ min_recall: 1.01 }).success).toBe(false);
    expect(parse({ min_recall: 0.9, min_precision: 0 }).success).toBe(false);
    expect(parse({ min_recall: 0.9, min_accuracy: 0 }).success).toBe(false);
    expect(parse({ min_recall: 0.9, key: ["id", "id"] }).success).toBe(false);
    expect(parse({ min_recall: 0.9, min_precision: 0.8, min_accuracy: 0.95, key: ["id"] }).success).toBe(true);
  });

  it("defaults min_precision to 1 and leaves min_accuracy unset", () => {
    const p = parse({ min_recall: 0.9 });
    expect(p.success && p.data).toMatchObject({ min_precision: 1, atol: 1e-12, rtol: 1e-9, null_values: [""], trim: false, case_sensitive: true, delimiter: ",", max_findings: 10 });
    expect(p.success && p.data.min_accuracy).toBeUndefined();
  });

  it("reads the expected file as hidden material: a checker file, never among the public params", () => {
    const spec = check("csv_repair", { artifact: "clean.csv", expected_file: "expected.csv", input_file: "orders.csv", min_recall: 0.9 });
    expect(checkerFilesOf(spec)).toEqual(["expected.csv"]);
    expect(publicCheck(spec)).toMatchObject({ hidden: true, params: { artifact: "clean.csv", input_file: "orders.csv", min_recall: 0.9, min_precision: 1 } });
    expect(publicCheck(spec).params).not.toHaveProperty("expected_file");
  });
});

describe("csv_repair: right output passes", () => {
  it("passes the expected table, with every score in the message", () => {
    const r = repair(EXPECTED);
    expect(r.passed).toBe(true);
    expect(r.message).toBe(
      'artifact "clean.csv" repairs input file "orders.csv": recall 1 (5 of 5 cells that needed fixing fixed), precision 1 (5 of 5 changed cells right, 0 good cells broken), accuracy 1 (15 of 15 cells right); 5 rows matched by "order_id", produced 5 (min_recall 1, min_precision 1)',
    );
    expect(r.findings).toBeUndefined();
    expectNoLeak(r);
  });

  it("matches rows by key in any order, and reads numbers by value (1299 = 1299.00, 012.350 = 12.35)", () => {
    const rows = withCell(withCell(CLEAN_ROWS, 0, 2, "1299"), 4, 2, "012.350");
    expect(repair(table([...rows].reverse())).passed).toBe(true);
  });

  it("matches rows by position without a key", () => {
    const input = table(DIRTY_ROWS.filter((_, i) => i !== 3));
    const r = repair(EXPECTED, { key: undefined }, { input });
    expect(r.passed).toBe(true);
    // Every column is scored by position, order_id too: 20 cells.
    expect(r.message).toContain("accuracy 1 (20 of 20 cells right); 5 rows matched by position");
  });

  it("passes an imperfect repair that meets the client's bars, and still shows what it got wrong", () => {
    // Order 5's padded region left as it was: 4 of 5 fixed, nothing broken.
    const r = repair(table(withCell(CLEAN_ROWS, 4, 1, " West ")), { min_recall: 0.8 });
    expect(r.passed).toBe(true);
    expect(r.message).toContain("recall 0.8 (4 of 5 cells that needed fixing fixed), precision 1 (4 of 4 changed cells right, 0 good cells broken), accuracy 0.9333 (14 of 15 cells right)");
    expect(r.findings).toEqual([
      { where: 'row 5 (order_id=5), column "region"', input: " West ", actual: " West ", expected: "West", note: "left unfixed: the input's value was kept; text differs only in surrounding whitespace" },
    ]);
  });

  it("compares numbers within atol: a cent's rounding passes at atol 0.005", () => {
    expect(repair(table(withCell(CLEAN_ROWS, 0, 2, "1299.004")), { atol: 0.005 }).passed).toBe(true);
  });

  it("trim and case_sensitive loosen what counts as right (and as changed)", () => {
    const loose = table(withCell(withCell(CLEAN_ROWS, 1, 1, "south"), 4, 1, " West "));
    expect(repair(loose).passed).toBe(false);
    // With both, south = South and " West " = West: those cells never needed fixing; 3 remain, all fixed.
    const r = repair(loose, { trim: true, case_sensitive: false });
    expect(r.passed).toBe(true);
    expect(r.message).toContain("recall 1 (3 of 3 cells that needed fixing fixed)");
  });
});

describe("csv_repair: wrong output fails", () => {
  it("fails one wrong repair: precision below 1, with the row key, column, input, output and expected value", () => {
    const r = repair(table(withCell(CLEAN_ROWS, 1, 1, "Sout")));
    expect(r.passed).toBe(false);
    expect(r.message).toContain("precision 0.8 is below 1");
    expect(r.message).toContain("recall 0.8 is below 1");
    expect(r.findings).toEqual([
      { where: 'row 2 (order_id=2), column "region"', input: "south", actual: "Sout", expected: "South", note: "a wrong repair: changed, but not to the expected value; text differs" },
    ]);
    expect(r.message).toContain('row 2 (order_id=2), column "region" (input "south"): expected "South", found "Sout"');
    expect(r.publicMessage).toContain('First problems at: row 2 (order_id=2), column "region"');
    expect(r.publicMessage).not.toContain('"South"');
    expectNoLeak(r);
  });

  it("fails a good cell broken, even when every needed fix was made", () => {
    const r = repair(table(withCell(CLEAN_ROWS, 3, 1, "EAST")));
    expect(r.passed).toBe(false);
    expect(r.message).toContain("precision 0.8333 is below 1");
    expect(r.message).toContain("recall 1 (5 of 5 cells that needed fixing fixed), precision 0.8333 (5 of 6 changed cells right, 1 good cell broken)");
    expect(r.findings?.[0]).toMatchObject({ where: 'row 4 (order_id=4), column "region"', input: "East", actual: "EAST", note: expect.stringMatching(/^a good cell broken/) });
  });

  it("fails a number just past atol, and says by how much (note only)", () => {
    const r = repair(table(withCell(CLEAN_ROWS, 0, 2, "1299.0051")), { atol: 0.005 });
    expect(r.passed).toBe(false);
    expect(r.findings?.[0]).toMatchObject({ where: 'row 1 (order_id=1), column "revenue"', input: "$1,299.00", actual: "1299.0051", expected: "1299.00" });
    expect(r.findings?.[0]?.note).toMatch(/^a wrong repair: .*differs by 0\.0051, more than the allowed 0\.005/);
  });

  it("fails a bar just missed, and passes it just met", () => {
    const left = table(withCell(CLEAN_ROWS, 4, 1, " West "));
    expect(repair(left, { min_recall: 0.8 }).passed).toBe(true);
    const r = repair(left, { min_recall: 0.81 });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("recall 0.8 is below 0.81");
    expect(repair(left, { min_recall: 0.8, min_accuracy: 0.9333 }).passed).toBe(true);
    const a = repair(left, { min_recall: 0.8, min_accuracy: 0.934 });
    expect(a.passed).toBe(false);
    expect(a.message).toContain("accuracy 0.9333 is below 0.934");
  });

  it("never prints a missed ratio as its bar: more digits until they differ", () => {
    const input = table([["1", "x"], ["2", "x"], ["3", "x"]], ["id", "v"]);
    const expected = table([["1", "y"], ["2", "y"], ["3", "y"]], ["id", "v"]);
    const produced = table([["1", "y"], ["2", "y"], ["3", "x"]], ["id", "v"]);
    // 2/3 reads 0.6667 in 4 digits, which is the bar it misses.
    const r = repair(produced, { key: ["id"], min_recall: 0.6667 }, { expected, input });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("recall 0.66667 is below 0.6667");
    expect(r.message).toContain("recall 0.66667 (2 of 3 cells");
    expect(repair(produced, { key: ["id"], min_recall: 0.667 }, { expected, input }).message).toContain("recall 0.6667 is below 0.667");
    expect(repair(produced, { key: ["id"], min_recall: 0.6666 }, { expected, input }).message).toContain("recall 0.6667 (2 of 3 cells");
  });

  it("fails a copy of the dirty input: recall 0 and precision 0 (nothing repaired), and the duplicate row", () => {
    const r = repair(DIRTY, { min_recall: 0.1, min_precision: 0.1 });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("recall 0 is below 0.1; precision 0 is below 0.1; 1 duplicate key");
    expect(r.message).toContain("recall 0 (0 of 5 cells that needed fixing fixed), precision 0 (no cell changed), accuracy 0.6667 (10 of 15 cells right)");
    expectNoLeak(r);
    // Deduplicated but otherwise copied: the scores alone fail it.
    const deduped = repair(table(DIRTY_ROWS.filter((_, i) => i !== 3)), { min_recall: 0.1, min_precision: 0.1 });
    expect(deduped.passed).toBe(false);
    expect(deduped.message).toContain("recall 0 is below 0.1; precision 0 is below 0.1.");
    expect(deduped.findings?.map((f) => f.note?.split(":")[0])).toEqual(Array(NEEDED).fill("left unfixed"));
  });

  it("fails dropped rows whatever the bars, and counts their cells as wrong", () => {
    const r = repair(table(CLEAN_ROWS.filter((_, i) => i !== 2)), { min_recall: 0.1, min_precision: 0.1 });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("falls short of checker file \"expected.csv\": 1 expected row missing.");
    expect(r.message).toContain("recall 0.6 (3 of 5 cells that needed fixing fixed)");
    expect(r.message).toContain("accuracy 0.8 (12 of 15 cells right)");
    expect(r.findings).toEqual([
      { where: "input row 3 (order_id=3)", expected: `region=Unknown, revenue=99.99, note=${CANARY}`, note: "no produced row has this key" },
    ]);
    expectNoLeak(r);
  });

  it("fails dropped rows by position too", () => {
    const input = table(DIRTY_ROWS.filter((_, i) => i !== 3));
    const r = repair(table(CLEAN_ROWS.slice(0, 4)), { key: undefined, min_recall: 0.1 }, { input });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("1 expected row missing");
    expect(r.findings?.[0]).toMatchObject({ where: "input row 5", note: "the produced table ends before this row" });
  });

  it("fails an extra row and a duplicate key, whatever the bars", () => {
    const extra = repair(table([...CLEAN_ROWS, ["9", "North", "1", "ok"]]), { min_recall: 0.1 });
    expect(extra.passed).toBe(false);
    expect(extra.message).toContain("1 extra row");
    expect(extra.findings).toEqual([{ where: "row 6 (order_id=9)", actual: "region=North, revenue=1, note=ok", note: "no expected row has this key, nor has the input" }]);
    const dup = repair(table([...CLEAN_ROWS, CLEAN_ROWS[1]!]), { min_recall: 0.1 });
    expect(dup.passed).toBe(false);
    expect(dup.findings).toEqual([{ where: "row 6 (order_id=2)", note: "duplicate key (first at row 2)" }]);
    const byPosition = repair(table([...CLEAN_ROWS, ["9", "North", "1", "ok"]]), { key: undefined, min_recall: 0.1 }, { input: table(DIRTY_ROWS.filter((_, i) => i !== 3)) });
    expect(byPosition.passed).toBe(false);
    expect(byPosition.findings?.[0]).toMatchObject({ where: "row 6", actual: "order_id=9, region=North, revenue=1, note=ok", note: "a row beyond the expected table's end" });
  });

  it("fails a header that is not the expected one: a missing, an extra or a reordered column", () => {
    const without = table(CLEAN_ROWS.map((r) => r.slice(0, 3)), ["order_id", "region", "revenue"]);
    expect(repair(without).message).toBe('artifact "clean.csv" does not have the expected header: missing 1 column "note"');
    const extra = table(CLEAN_ROWS.map((r) => [...r, "x"]), ["order_id", "region", "revenue", "note", "flag"]);
    expect(repair(extra).message).toBe('artifact "clean.csv" does not have the expected header: unexpected 1 column "flag"');
    const swapped = table(CLEAN_ROWS.map((r) => [r[0]!, r[2]!, r[1]!, r[3]!]), ["order_id", "revenue", "region", "note"]);
    const r = repair(swapped);
    expect(r.passed).toBe(false);
    expect(r.message).toMatch(/columns in a different order/);
    expect(r.findings?.[0]).toMatchObject({ where: "header", actual: "order_id,revenue,region,note" });
    const twice = "order_id,region,Region,note\n1,a,b,c\n";
    expect(repair(twice, { case_sensitive: false }).message).toMatch(/names column "Region" twice/);
  });

  it("fails a missing or unreadable artifact", () => {
    expect(repair(null).message).toMatch(/"clean\.csv" was not returned/);
    expect(repair('order_id,region,revenue,note\n1,"North,1,ok\n').passed).toBe(false);
  });

  it("never takes NaN, a unit or a thousands separator for a number", () => {
    for (const bad of ["NaN", "nan", "1,299.00", "1299.00 USD"]) {
      const r = repair(table(withCell(CLEAN_ROWS, 0, 2, bad)), { min_recall: 0.1, min_precision: 0.1 });
      expect(r.message, bad).toContain("recall 0.8 (4 of 5");
    }
  });

  it("shows a bounded sample, every kind of problem in turn", () => {
    const rows = withCell(withCell(withCell(CLEAN_ROWS, 3, 1, "EAST"), 1, 1, "Sout"), 4, 1, " West ");
    const r = repair(table([...rows, ["9", "x", "1", "ok"]]), { max_findings: 4 });
    expect(r.findings?.map((f) => f.note?.split(/[:;]/)[0])).toEqual(["a good cell broken", "a wrong repair", "left unfixed", "no expected row has this key, nor has the input"]);
    const many = Array.from({ length: 200 }, (_, i) => [String(i), "x"]);
    const big = repair(table(many.map(([id]) => [id!, "z"]), ["id", "v"]), { key: ["id"], max_findings: 3 }, { input: table(many, ["id", "v"]), expected: table(many.map(([id]) => [id!, "y"]), ["id", "v"]) });
    expect(big.findings).toHaveLength(3);
    expect(big.message).toContain("recall 0 (0 of 200 cells that needed fixing fixed), precision 0 (0 of 200 changed cells right, 0 good cells broken)");
  });
});

describe("csv_repair: edge cases", () => {
  it("when no cell needed fixing, recall counts as 1 and a changed cell fails on precision", () => {
    // Only a duplicate row to drop: the cells were already right.
    const input = table([...CLEAN_ROWS, CLEAN_ROWS[0]!]);
    const right = repair(EXPECTED, {}, { input });
    expect(right.passed).toBe(true);
    expect(right.message).toContain("recall 1 (no cell needed fixing), precision 1 (no cell changed), accuracy 1 (15 of 15 cells right)");
    const broken = repair(table(withCell(CLEAN_ROWS, 0, 1, "north")), {}, { input });
    expect(broken.passed).toBe(false);
    expect(broken.message).toContain("precision 0 is below 1");
    expect(broken.message).toContain("recall 1 (no cell needed fixing), precision 0 (0 of 1 changed cell right, 1 good cell broken)");
    // The duplicate kept: a row problem, not a score.
    expect(repair(input, {}, { input }).message).toContain("1 duplicate key");
  });

  it("an input key seen twice is judged against its first row", () => {
    const input = table([...DIRTY_ROWS.slice(0, 3), ["2", "SOUTH", "250.5", "late"], ...DIRTY_ROWS.slice(4)]);
    expect(repair(EXPECTED, {}, { input }).message).toContain("recall 1 (5 of 5");
  });

  it("a column the input lacks counts as nulls there: each non-null expected cell needed filling", () => {
    const input = table(DIRTY_ROWS.map((r) => r.slice(0, 3)), ["order_id", "region", "revenue"]);
    const r = repair(EXPECTED, {}, { input });
    expect(r.passed).toBe(true);
    expect(r.message).toContain("recall 1 (9 of 9 cells that needed fixing fixed)");
    const blank = repair(table(withCell(CLEAN_ROWS, 0, 3, "")), {}, { input });
    expect(blank.passed).toBe(false);
    expect(blank.findings?.[0]).toMatchObject({ where: 'row 1 (order_id=1), column "note"', input: "(the input has no such column)", actual: "", note: expect.stringMatching(/^left unfixed/) });
    // An expected null there needed nothing; a value written there is a change, and a wrong one.
    const expected = table(withCell(CLEAN_ROWS, 3, 3, ""));
    expect(repair(table(withCell(CLEAN_ROWS, 3, 3, "")), {}, { input, expected }).message).toContain("recall 1 (8 of 8 cells that needed fixing fixed), precision 1 (8 of 8 changed cells right");
    const filled = repair(EXPECTED, {}, { input, expected });
    expect(filled.message).toContain("precision 0.8889 (8 of 9 changed cells right, 1 good cell broken)");
    expect(filled.findings?.[0]?.note).toMatch(/^a value where the expected cell is empty \(the input has no such column\); expected a null/);
  });

  it("reads the input's cells by column name, wherever its columns sit (a row's text alone proves nothing)", () => {
    const expected = "id,v,w\n1,x,y\n2,x,y\n";
    // Row 1's text is the expected row's, but its columns are swapped: both its cells needed fixing.
    const input = "id,w,v\n1,x,y\n2,y,x\n";
    const r = repair(expected, { key: ["id"] }, { expected, input });
    expect(r.message).toContain("recall 1 (2 of 2 cells that needed fixing fixed), precision 1 (2 of 2 changed cells right");
    const semicolons = repair(expected, { key: ["id"], input_delimiter: ";" }, { expected, input: "id;v;w\n1;x;y\n2;x;y\n" });
    expect(semicolons.message).toContain("recall 1 (no cell needed fixing)");
    // The same text under another delimiter is other cells: "1,x" read with ";" is one field.
    const other = repair("id,v\n1,x\n", { key: undefined, input_delimiter: ";" }, { expected: "id,v\n1,x\n", input: "id;v\n1,x\n" });
    expect(other.message).toContain("recall 1 (2 of 2 cells that needed fixing fixed)");
  });

  it("reads a ragged, quote-broken input leniently (it is the mess being cleaned)", () => {
    const input = `${DIRTY.trimEnd()}\n6,North,"1"2,x,extra\n`;
    const expected = table([...CLEAN_ROWS, ["6", "North", "12", "x"]]);
    expect(repair(table([...CLEAN_ROWS, ["6", "North", "12", "x"]]), {}, { input, expected }).passed).toBe(true);
  });

  it("judges through runCheck: a hidden check whose feedback at reveal input shows where, input and output, never the expected cell", () => {
    const spec = check("csv_repair", { artifact: "clean.csv", expected_file: "expected.csv", input_file: "orders.csv", key: ["order_id"], min_recall: 1 });
    const produced = table(withCell(CLEAN_ROWS, 2, 3, "done"));
    const o = runCheck(spec, emptyCtx({ artifacts: [file("clean.csv", produced)], checkerFiles: [file("expected.csv", EXPECTED)], inputs: [file("orders.csv", DIRTY)] }));
    expect(o).toMatchObject({ passed: false, hidden: true });
    expect(o.message).toContain(CANARY);
    expect(o.feedback).toContain('row 3 (order_id=3), column "note" | input: tbd | got: done');
    expect(o.feedback).not.toContain(CANARY);
  });
});

describe("csv_repair: an invalid check fails closed", () => {
  const invalid = (r: CheckResult, detail: RegExp) => {
    expect(r.passed).toBe(false);
    expect(r.message).toMatch(/^invalid check: /);
    expect(r.message).toMatch(detail);
    expect(r.publicMessage).toMatch(/^the check is misconfigured/);
    expectNoLeak(r);
  };

  it("a missing or empty expected file, a missing or empty input file", () => {
    invalid(repair(EXPECTED, {}, { expected: null }), /checker file "expected\.csv" is not among/);
    invalid(repair(EXPECTED, {}, { expected: "order_id,region,revenue,note\n" }), /no data rows/);
    invalid(repair(EXPECTED, {}, { input: null }), /input file "orders\.csv" is not among/);
    invalid(repair(EXPECTED, {}, { input: "" }), /input file "orders\.csv" is empty/);
  });

  it("a key the files lack, an expected key the input lacks, duplicate expected keys, only key columns", () => {
    invalid(repair(EXPECTED, { key: ["id"] }), /key column "id" is not in checker file/);
    invalid(repair(EXPECTED, {}, { input: table(DIRTY_ROWS.map((r) => r.slice(1)), ["region", "revenue", "note"]) }), /key column "order_id" is not in input file/);
    invalid(repair(EXPECTED, {}, { input: table(DIRTY_ROWS.filter((r) => r[0] !== "4")) }), /expected row 4 \(order_id=4\) has a key no row of input file/);
    invalid(repair(EXPECTED, {}, { expected: table([...CLEAN_ROWS, CLEAN_ROWS[0]!]) }), /duplicate key at expected row 6 \(first at row 1\)/);
    const oneColumn = "order_id\n1\n";
    invalid(repair(oneColumn, {}, { expected: oneColumn, input: oneColumn }), /no cell is scored/);
    invalid(repair(EXPECTED, { case_sensitive: false }, { expected: "a,A\n1,2\n" }), /names column "A" twice/);
  });

  it("by position, an input whose row count differs from the expected file's", () => {
    invalid(repair(EXPECTED, { key: undefined }), /input file "orders\.csv" has 6 data rows and checker file "expected\.csv" 5: rows are matched by position/);
  });
});
