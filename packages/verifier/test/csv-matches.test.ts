// Issue 10: csv_matches is judged by what it lets through: each wrong-output case below must fail, and
// hidden expected cells must never reach a field a model may see.
import { describe, expect, it } from "vitest";
import { csvMatches } from "../src/checks/csv-matches";
import type { CheckResult } from "../src/types";
import { emptyCtx, file } from "./support";

const CANARY = "CANARY-7f3a";

const ctx = emptyCtx;

const EXPECTED = [
  "order_id,region,total,note",
  "1,North,10.5,ok",
  '2,South,20.25,"late, again"',
  `3,East,7,${CANARY}`,
  "4,West,0,",
  "",
].join("\n");
const CORRECT = EXPECTED.replace(CANARY, CANARY);

/** Parses params through the check's own schema (the registry is not involved) and runs it. */
function match(produced: string | null, params: Record<string, unknown> = {}, expected: string | null = EXPECTED): CheckResult {
  const parsed = csvMatches.params.parse({ artifact: "out.csv", expected_file: "expected.csv", ...params });
  return csvMatches.run(
    parsed,
    ctx({
      artifacts: produced === null ? [file("result.json", "{}")] : [file("out.csv", produced)],
      checkerFiles: expected === null ? [] : [file("expected.csv", expected)],
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

function table(rows: string[][], header = ["order_id", "region", "total", "note"]): string {
  const q = (c: string) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c);
  return [header, ...rows].map((r) => r.map(q).join(",")).join("\n") + "\n";
}
const ROWS = [
  ["1", "North", "10.5", "ok"],
  ["2", "South", "20.25", "late, again"],
  ["3", "East", "7", CANARY],
  ["4", "West", "0", ""],
];
const withCell = (row: number, col: number, value: string) => ROWS.map((r, i) => (i === row ? r.map((c, j) => (j === col ? value : c)) : r));

describe("csv_matches: correct output passes", () => {
  it("passes an identical table and says what was compared", () => {
    const r = match(CORRECT);
    expect(r).toMatchObject({ passed: true });
    expect(r.message).toBe('artifact "out.csv" matches checker file "expected.csv": 4 rows, 4 columns compared (row order strict, columns exact, atol 1e-12, rtol 1e-9)');
    expect(r.publicMessage).not.toContain("expected.csv");
  });

  it("passes the same content with CRLF line breaks, no final newline, a BOM and redundant quoting", () => {
    expect(match(CORRECT.replace(/\n/g, "\r\n")).passed).toBe(true);
    expect(match(CORRECT.trimEnd()).passed).toBe(true);
    expect(match(`\uFEFF${CORRECT}`).passed).toBe(true);
    expect(match(CORRECT.replace("1,North", '"1","North"')).passed).toBe(true);
  });

  it("compares numbers by value: 1.50 = 1.5, 1e1 = 10, and leading zeros compare numerically (007 = 7)", () => {
    expect(match(table(withCell(0, 2, "10.50"))).passed).toBe(true);
    expect(match(table(withCell(2, 2, "7.0"))).passed).toBe(true);
    expect(match(table(withCell(2, 2, "007"))).passed).toBe(true);
    expect(match(table(withCell(2, 2, "0.7e1"))).passed).toBe(true);
  });
});

describe("csv_matches: wrong output fails", () => {
  it("fails one value off, with the cell, expected and actual in the message and the finding", () => {
    const r = match(table(withCell(1, 2, "20.26")));
    expect(r.passed).toBe(false);
    expect(r.message).toMatch(/^artifact "out.csv" does not match checker file "expected.csv": 1 cell differs in 1 of 4 compared rows; 0 expected rows missing; 0 extra; produced 4 rows, expected 4\. First differences: row 2, column "total": expected "20.25", found "20.26" \(differs by 0.01/);
    expect(r.findings).toEqual([{ where: 'row 2, column "total"', actual: "20.26", expected: "20.25", note: expect.stringMatching(/^differs by 0.01, more than the allowed/) }]);
    expect(r.publicMessage).toBe('artifact "out.csv" does not match the expected table: 1 cell differs in 1 of 4 compared rows; 0 expected rows missing; 0 extra; produced 4 rows, expected 4. First differences at: row 2, column "total"');
  });

  it("fails one row dropped, in every row order, and explains the shift under strict order", () => {
    const dropped = table([ROWS[0]!, ROWS[2]!, ROWS[3]!]);
    const strict = match(dropped);
    expect(strict.passed).toBe(false);
    expect(strict.message).toContain("1 expected row missing");
    expect(strict.message).toContain("produced 3 rows, expected 4");
    expect(strict.message).toContain("a dropped or added row shifts every row after it");
    const any = match(dropped, { row_order: "any" });
    expect(any.passed).toBe(false);
    expect(any.message).toContain("3 of 4 expected rows matched; 1 expected row missing; 0 extra");
    expect(any.findings?.map((f) => f.where)).toEqual(["row count", "expected row 2"]);
    const key = match(dropped, { row_order: "key", key: ["order_id"] });
    expect(key.passed).toBe(false);
    expect(key.findings).toEqual([
      { where: "row count", actual: "3", expected: "4", note: "1 row fewer than expected" },
      { where: "expected row 2", input: "order_id=2", expected: expect.stringContaining("total=20.25"), note: "no produced row has this key" },
    ]);
  });

  it("fails an extra row, in every row order", () => {
    const extra = table([...ROWS, ["5", "North", "1", "x"]]);
    expect(match(extra).message).toContain("0 expected rows missing; 1 extra");
    expect(match(extra, { row_order: "any" }).passed).toBe(false);
    const key = match(extra, { row_order: "key", key: ["order_id"] });
    expect(key.findings).toContainEqual({ where: "row 5", input: "order_id=5", actual: "region=North, total=1, note=x", note: "no expected row has this key" });
  });

  it("applies a tolerance that is just met and fails one just exceeded", () => {
    const t = { atol: 0.25, rtol: 0 };
    expect(match(table(withCell(0, 2, "10.75")), t).passed).toBe(true);
    expect(match(table(withCell(0, 2, "10.25")), t).passed).toBe(true);
    expect(match(table(withCell(0, 2, "10.7501")), t).passed).toBe(false);
    const rel = { atol: 0, rtol: 0.01 };
    expect(match(table(withCell(1, 2, "20.45")), rel).passed).toBe(true);
    expect(match(table(withCell(1, 2, "20.46")), rel).passed).toBe(false);
    // The default tolerance absorbs binary noise only.
    expect(match(table(withCell(0, 2, "10.500000000001"))).passed).toBe(true);
    expect(match(table(withCell(0, 2, "10.501"))).passed).toBe(false);
  });

  it("never applies tolerance to text", () => {
    const r = match(table(withCell(0, 1, "Nort")), { atol: 1e9, rtol: 1 });
    expect(r.passed).toBe(false);
    expect(r.findings?.[0]?.note).toBe("text differs");
  });

  it("treats NaN as text: NaN matches only NaN, never a number", () => {
    const nanExpected = table(withCell(0, 2, "NaN"));
    expect(match(nanExpected, {}, nanExpected).passed).toBe(true);
    expect(match(table(withCell(0, 2, "10.5")), {}, nanExpected).passed).toBe(false);
    expect(match(nanExpected).passed).toBe(false);
    expect(match(nanExpected, { atol: 1e9 }).findings?.[0]?.note).toMatch(/expected a number, found text/);
    expect(match(table(withCell(0, 2, "nan")), {}, nanExpected).passed).toBe(false);
    expect(match(table(withCell(0, 2, "nan")), { case_sensitive: false }, nanExpected).passed).toBe(true);
  });

  it("tells an empty cell (a null) from 0, both ways; a null matches only a null", () => {
    const r = match(table(withCell(3, 2, "")));
    expect(r.passed).toBe(false);
    expect(r.findings?.[0]).toMatchObject({ where: 'row 4, column "total"', actual: "", expected: "0", note: 'expected a value, found a null ("")' });
    const other = match(table(withCell(3, 3, "0")));
    expect(other.passed).toBe(false);
    expect(other.findings?.[0]?.note).toBe("expected a null (missing value), found a value");
    expect(match(table(withCell(3, 3, "NA"))).passed).toBe(false);
    expect(match(table(withCell(3, 3, "NA")), { null_values: ["", "NA"] }).passed).toBe(true);
  });

  it('compares "1,000" as text: it differs from 1000', () => {
    const expected = table(withCell(0, 2, "1000"));
    const r = match(table(withCell(0, 2, "1,000")), {}, expected);
    expect(r.passed).toBe(false);
    expect(r.findings?.[0]).toMatchObject({ actual: "1,000", expected: "1000" });
  });

  it("compares integers beyond 2^53 exactly", () => {
    const expected = table(withCell(0, 0, "9007199254740993"));
    expect(match(expected, { row_order: "key", key: ["order_id"] }, expected).passed).toBe(true);
    const r = match(table(withCell(0, 0, "9007199254740992")), {}, expected);
    expect(r.passed).toBe(false);
    expect(r.findings?.[0]?.note).toBe("integers differ by -1 (integers are compared exactly)");
    // In the multiset and key modes too: the big integers are different rows, different keys.
    expect(match(table(withCell(0, 0, "9007199254740992")), { row_order: "any" }, expected).passed).toBe(false);
    expect(match(table(withCell(0, 0, "9007199254740992")), { row_order: "key", key: ["order_id"] }, expected).passed).toBe(false);
  });

  it("fails surrounding whitespace unless trim is set", () => {
    const padded = table(withCell(0, 1, " North "));
    expect(match(padded).findings?.[0]?.note).toBe("text differs only in surrounding whitespace");
    expect(match(padded, { trim: true }).passed).toBe(true);
    expect(match(table(withCell(0, 1, "north"))).passed).toBe(false);
    expect(match(table(withCell(0, 1, "north")), { case_sensitive: false }).passed).toBe(true);
  });

  it("fails a renamed header column, naming the missing and the unexpected column", () => {
    const r = match(table(ROWS, ["order_id", "region", "amount", "note"]));
    expect(r.passed).toBe(false);
    expect(r.publicMessage).toMatch(/header: missing 1 column "total"; unexpected 1 column "amount"/);
    expect(r.findings?.[0]).toMatchObject({ where: "header", actual: "order_id,region,amount,note", expected: "order_id,region,total,note" });
    // The columns that are there are still compared.
    expect(r.message).toContain("0 cells differ in 0 of 4 compared rows");
  });

  it('fails reordered columns under columns "exact", passes them under "any_order"', () => {
    const reordered = table(
      ROWS.map(([a, b, c, d]) => [b!, a!, c!, d!]),
      ["region", "order_id", "total", "note"],
    );
    const r = match(reordered);
    expect(r.passed).toBe(false);
    expect(r.message).toContain("columns in a different order");
    expect(r.message).toContain("0 cells differ");
    expect(match(reordered, { columns: "any_order" }).passed).toBe(true);
  });

  it('ignores extra produced columns only under "expected_subset"; a missing column fails it', () => {
    const wider = table(
      ROWS.map((r) => [...r, "extra"]),
      ["order_id", "region", "total", "note", "debug"],
    );
    expect(match(wider).passed).toBe(false);
    expect(match(wider, { columns: "any_order" }).passed).toBe(false);
    expect(match(wider, { columns: "expected_subset" }).passed).toBe(true);
    const narrower = table(
      ROWS.map((r) => r.slice(0, 3)),
      ["order_id", "region", "total"],
    );
    expect(match(narrower, { columns: "expected_subset" }).message).toContain('missing 1 column "note"');
  });

  it("fails a duplicate key in the produced file and in the expected file", () => {
    const dup = table([...ROWS, ROWS[1]!]);
    const r = match(dup, { row_order: "key", key: ["order_id"] });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("1 duplicate key");
    expect(r.findings).toContainEqual({ where: "row 5", input: "order_id=2", note: "duplicate key (first at row 2)" });
    const badExpected = table([...ROWS, ROWS[0]!]);
    const e = match(table(ROWS), { row_order: "key", key: ["order_id"] }, badExpected);
    expect(e.passed).toBe(false);
    expect(e.findings).toContainEqual({ where: "expected row 5", input: "order_id=1", note: "duplicate key in the expected file (first at expected row 1)" });
  });

  it('counts a row repeated in "any" mode as extra (a multiset, not a set)', () => {
    const r = match(table([...ROWS, ROWS[0]!]), { row_order: "any" });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("4 of 4 expected rows matched; 0 expected rows missing; 1 extra");
  });

  it("fails an empty produced file and a produced table with no rows", () => {
    const empty = match("");
    expect(empty.passed).toBe(false);
    expect(empty.message).toBe('artifact "out.csv" is empty: expected a header row');
    const headerOnly = match("order_id,region,total,note\n");
    expect(headerOnly.passed).toBe(false);
    expect(headerOnly.message).toContain("4 expected rows missing");
    expect(headerOnly.message).toContain("the produced table has no data rows");
    expect(match("order_id,region,total,note\n", { row_order: "any" }).passed).toBe(false);
    expect(match("order_id,region,total,note\n", { row_order: "key", key: ["order_id"] }).passed).toBe(false);
  });

  it("fails a missing artifact with what was returned instead", () => {
    const r = match(null);
    expect(r).toMatchObject({ passed: false, message: 'artifact "out.csv" was not returned (returned artifacts: "result.json")' });
    expect(r.publicMessage).toBe(r.message);
  });

  it("fails a produced file without the key column", () => {
    const r = match(table(ROWS.map((x) => x.slice(1)), ["region", "total", "note"]), { row_order: "key", key: ["order_id"] });
    expect(r.passed).toBe(false);
    expect(r.message).toMatch(/has no key column "order_id"/);
  });

  it("fails an unparsable produced CSV with its line", () => {
    expect(match("order_id,region,total,note\n1,North,10.5\n").message).toBe('artifact "out.csv" is not valid CSV: line 2: data row 1 has 3 fields, the header has 4');
  });
});

describe("csv_matches: an invalid check fails closed", () => {
  it("fails when the checker file is missing", () => {
    const r = match(CORRECT, {}, null);
    expect(r.passed).toBe(false);
    expect(r.message).toBe('invalid check: checker file "expected.csv" is not among the goal\'s checker files (the goal has no checker files)');
    expect(r.publicMessage).toMatch(/^the check is misconfigured/);
  });

  it("fails when the expected file has no data rows, even against an empty table", () => {
    const r = match("order_id,region,total,note\n", {}, "order_id,region,total,note\n");
    expect(r.passed).toBe(false);
    expect(r.message).toMatch(/has a header but no data rows/);
    expect(match(CORRECT, {}, "").passed).toBe(false);
  });

  it("fails when the key is not a column of the expected file", () => {
    const r = match(CORRECT, { row_order: "key", key: ["id"] });
    expect(r).toMatchObject({ passed: false, message: 'invalid check: key column "id" is not in checker file "expected.csv"' });
  });

  it("rejects unknown and inconsistent params", () => {
    const base = { artifact: "out.csv", expected_file: "expected.csv" };
    const bad = [
      { tolerance: 0.1 },
      { row_order: "key" },
      { key: ["order_id"] },
      { row_order: "key", key: [] },
      { row_order: "key", key: ["a", "a"] },
      { row_order: "sorted" },
      { columns: "subset" },
      { atol: -1 },
      { delimiter: '"' },
      { delimiter: ",," },
      { max_findings: 0 },
      { max_findings: 51 },
      { null_values: "" },
      { artifact: "" },
    ];
    for (const extra of bad) expect(csvMatches.params.safeParse({ ...base, ...extra }).success, JSON.stringify(extra)).toBe(false);
    expect(csvMatches.params.safeParse({ artifact: "out.csv" }).success).toBe(false);
    expect(csvMatches.params.safeParse(csvMatches.example).success).toBe(true);
  });

  it("names its checker file and keeps expected material out of its public params", () => {
    expect(csvMatches.checkerFiles?.(csvMatches.params.parse({ artifact: "a.csv", expected_file: "e.csv" }))).toEqual(["e.csv"]);
    expect(csvMatches.publicParams).not.toContain("expected_file");
  });
});

describe("csv_matches: hidden material stays out of model-visible fields", () => {
  const wrongNote = table(withCell(2, 3, "wrong"));
  it.each([
    ["strict", {}],
    ["any", { row_order: "any" }],
    ["key", { row_order: "key", key: ["order_id"] }],
  ])("%s: the canary reaches message and expected, never publicMessage, where, input or actual", (_mode, params) => {
    const r = match(wrongNote, params);
    expect(r.passed).toBe(false);
    expect(r.message).toContain(CANARY);
    expect(r.findings?.some((f) => f.expected?.includes(CANARY))).toBe(true);
    expectNoLeak(r);
  });

  it("keeps the canary out when the row holding it is missing, or the table is empty", () => {
    for (const params of [{}, { row_order: "any" }, { row_order: "key", key: ["order_id"] }]) {
      for (const produced of [table([ROWS[0]!, ROWS[1]!, ROWS[3]!]), "order_id,region,total,note\n", table(ROWS.map((r) => r.slice(0, 3)), ["order_id", "region", "total"])]) {
        const r = match(produced, params);
        expect(r.passed).toBe(false);
        expectNoLeak(r);
      }
    }
  });
});

describe("csv_matches: row orders", () => {
  const shuffled = table([ROWS[2]!, ROWS[0]!, ROWS[3]!, ROWS[1]!]);
  it('passes shuffled rows under "any" and "key", fails them under "strict"', () => {
    expect(match(shuffled).passed).toBe(false);
    expect(match(shuffled, { row_order: "any" }).passed).toBe(true);
    expect(match(shuffled, { row_order: "key", key: ["order_id"] }).passed).toBe(true);
  });

  it('pairs rows within tolerance in "any" mode', () => {
    const close = table([withCell(2, 2, "7.001")[2]!, ROWS[0]!, withCell(3, 2, "-0.001")[3]!, withCell(1, 2, "20.249")[1]!]);
    expect(match(close, { row_order: "any", atol: 0.002 }).passed).toBe(true);
    expect(match(close, { row_order: "any", atol: 0.0005 }).passed).toBe(false);
  });

  it("reports cell differences by key, with the key as input and the produced row number", () => {
    const r = match(table([ROWS[3]!, ROWS[2]!, withCell(1, 2, "99")[1]!, ROWS[0]!]), { row_order: "key", key: ["order_id"] });
    expect(r.findings).toEqual([{ where: 'row 3, column "total"', input: "order_id=2", actual: "99", expected: "20.25", note: expect.any(String) }]);
  });

  it("matches keys numerically (01 = 1) and by several columns", () => {
    expect(match(table(withCell(0, 0, "01")), { row_order: "key", key: ["order_id"] }).passed).toBe(true);
    const r = match(table([ROWS[1]!, ROWS[0]!, ROWS[2]!, withCell(3, 2, "5")[3]!]), { row_order: "key", key: ["order_id", "region"] });
    expect(r.findings?.[0]).toMatchObject({ where: 'row 4, column "total"', input: "order_id=4, region=West" });
  });
});

describe("csv_matches: bounds", () => {
  it("caps findings at max_findings and keeps the message short with huge cells", () => {
    const huge = "x".repeat(10_000);
    const rows = Array.from({ length: 200 }, (_, i) => [String(i), huge, String(i)]);
    const expected = table(rows, ["id", "text", "n"]);
    const produced = table(
      rows.map(([a, , c]) => [a!, "y".repeat(10_000), c!]),
      ["id", "text", "n"],
    );
    const r = match(produced, { max_findings: 3 }, expected);
    expect(r.passed).toBe(false);
    expect(r.findings).toHaveLength(3);
    expect(r.message).toContain("200 cells differ in 200 of 200 compared rows");
    expect(r.message.length).toBeLessThan(2000);
    for (const f of r.findings ?? []) expect((f.actual ?? "").length).toBeLessThanOrEqual(81);
  });

  it("shows every kind of difference among the first findings", () => {
    const many = table([...ROWS.map((r) => r.map((c, j) => (j === 2 ? `${c}1` : c))).slice(1), ["9", "X", "1", ""]]);
    const r = match(many, { row_order: "key", key: ["order_id"], max_findings: 3 });
    const wheres = r.findings?.map((f) => f.note ?? "") ?? [];
    expect(wheres.some((n) => n.includes("no produced row"))).toBe(true);
    expect(wheres.some((n) => n.includes("no expected row"))).toBe(true);
  });

  // Not in mutation runs (npm run mutate sets MUTATE_TESTS): instrumented for coverage it takes minutes and
  // times out there; it is a size bound, run by npm test and timed by bench/checks.ts.
  it.skipIf(process.env.MUTATE_TESTS !== undefined)("compares 100,000 rows x 10 columns in every row order (timed in bench/checks.ts)", () => {
    const header = Array.from({ length: 10 }, (_, j) => `c${j}`);
    const rows = Array.from({ length: 100_000 }, (_, i) => header.map((_, j) => (j === 0 ? String(i) : j % 3 === 0 ? `name-${i}-${j}` : String((i * 7 + j) / 8))));
    const expected = table(rows, header);
    const producedRows = rows.map((r) => [...r]);
    producedRows[50_000]![4] = "1.5";
    const inOrder = table(producedRows, header);
    const reversed = table(producedRows.slice().reverse(), header);
    const timings: Record<string, { wall: number; cpu: number }> = {};
    for (const [mode, params, produced, verdict] of [
      ["strict", {}, inOrder, "1 cell differs in 1 of 100000 compared rows"],
      ["any", { row_order: "any" }, reversed, "99999 of 100000 expected rows matched; 1 expected row missing; 1 extra"],
      ["key", { row_order: "key", key: ["c0"] }, reversed, "1 cell differs in 1 of 100000 compared rows"],
    ] as const) {
      const cpu0 = process.cpuUsage();
      const started = performance.now();
      const r = match(produced, params, expected);
      const cpu = process.cpuUsage(cpu0);
      timings[mode] = { wall: Math.round(performance.now() - started), cpu: Math.round((cpu.user + cpu.system) / 1000) };
      expect(r.passed).toBe(false);
      expect(r.message).toContain(verdict);
    }
    console.log(`csv_matches 100k x 10 (parse both files + compare), ms: ${JSON.stringify(timings)}`);
  });
});
