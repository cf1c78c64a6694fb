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

// Issue 18 (mutation testing): each test below was written against a mutant that let a wrong table pass, a
// correct one fail, or a message say something untrue.
describe("csv_matches: params say what is wrong, at the key", () => {
  const issues = (extra: Record<string, unknown>) =>
    csvMatches.params.safeParse({ artifact: "out.csv", expected_file: "expected.csv", ...extra }).error?.issues.map(({ code, path, message }) => ({ code, path, message }));
  it("names the key in each inconsistency", () => {
    expect(issues({ row_order: "key" })).toEqual([{ code: "custom", path: ["key"], message: 'required when row_order is "key"' }]);
    expect(issues({ row_order: "any", key: ["order_id"] })).toEqual([{ code: "custom", path: ["key"], message: 'only used with row_order "key" (row_order is "any")' }]);
    expect(issues({ row_order: "key", key: ["a", "a"] })).toEqual([{ code: "custom", path: ["key"], message: "names a column twice" }]);
  });
});

/** Two columns, id and v: the rows differ only where `v` does. */
const pairTable = (vs: readonly string[]) => table(vs.map((v, i) => [String(i + 1), v]), ["id", "v"]);

describe("csv_matches: cells", () => {
  it("trims the null_values too when trim is set", () => {
    expect(match(table(withCell(3, 3, "NA")), { trim: true, null_values: [" NA ", ""] }).passed).toBe(true);
  });

  it("folds case by lower-casing: ß is not ss", () => {
    const r = match(table(withCell(0, 1, "STRASSE")), { case_sensitive: false }, table(withCell(0, 1, "straße")));
    expect(r.passed).toBe(false);
    expect(match(table(withCell(0, 1, "STRASSE")), { case_sensitive: false, row_order: "any" }, table(withCell(0, 1, "straße"))).passed).toBe(false);
  });

  it("never matches a null with a value, whatever the letter case", () => {
    const r = match(table(withCell(0, 1, "na")), { null_values: ["NA"], case_sensitive: false }, table(withCell(0, 1, "NA")));
    expect(r.passed).toBe(false);
    expect(r.findings?.[0]?.note).toBe("expected a null (missing value), found a value");
  });

  it("says why two cells differ", () => {
    const note = (produced: string, expected: string) => match(pairTable([produced]), {}, pairTable([expected])).findings?.[0]?.note;
    expect(note("7.5", "7")).toMatch(/^differs by 0\.5, more than the allowed/);
    expect(note("7", "7.5")).toMatch(/^differs by 0\.5, more than the allowed/);
    expect(note("5", "North")).toBe("expected text, found a number");
    expect(note("North", " North")).toBe("text differs only in surrounding whitespace");
    expect(note("north", "North")).toBe("text differs only in letter case");
    expect(note("South", "North")).toBe("text differs");
  });

  it("reads cells with the delimiter given", () => {
    expect(match("id;v\n1;2\n", { delimiter: ";" }, "id;v\n1;2.0\n").passed).toBe(true);
    expect(match("id;v\n1;3\n", { delimiter: ";" }, "id;v\n1;2.0\n").passed).toBe(false);
  });
});

describe("csv_matches: keys", () => {
  const byKey = (key: string[], extra: Record<string, unknown> = {}) => ({ row_order: "key", key, ...extra });
  it("matches null keys with nulls however they are spelled", () => {
    expect(match(table(withCell(3, 3, "NA")), byKey(["note"], { null_values: ["", "NA"] })).passed).toBe(true);
  });

  it("keys rows by text", () => {
    expect(match(table([ROWS[3]!, ROWS[1]!, ROWS[0]!, ROWS[2]!]), byKey(["region"])).passed).toBe(true);
    const r = match(table(withCell(0, 1, "Nord")), byKey(["region"]));
    expect(r.message).toContain("0 cells differ in 0 of 3 compared rows; 1 expected row missing; 1 extra");
  });

  it('keys numbers by value: "007" = "7", "1e3" = "1000", "-0" = "0", "1.50" = "1.5", 1e21 = 10^21; 1.5 and 2.5 stay apart', () => {
    const expected = pairTable(["a", "b", "c", "d", "e", "f"]).replace(/^(\d)/gm, (d) => ["", "7", "1000", "0", "1.5", "2.5", "1e21"][Number(d)] ?? d);
    const produced = pairTable(["a", "b", "c", "d", "e", "f"]).replace(/^(\d)/gm, (d) => ["", "007", "1e3", "-0", "1.50", "2.5", "1000000000000000000000"][Number(d)] ?? d);
    expect(expected.split("\n")[6]).toBe("1e21,f");
    expect(produced.split("\n")[6]).toBe("1000000000000000000000,f");
    const r = match(produced, byKey(["id"]), expected);
    expect(r.message).toContain("6 rows, 2 columns compared");
    expect(r.passed).toBe(true);
  });

  it("keys by several columns when the first repeats", () => {
    const rows = [
      ["North", "1", "a"],
      ["North", "2", "b"],
      ["South", "1", "c"],
    ];
    const h = ["region", "n", "v"];
    expect(match(table([rows[2]!, rows[1]!, rows[0]!], h), byKey(["region", "n"]), table(rows, h)).passed).toBe(true);
  });

  it("finds the key column by its folded name, and key columns by name when the columns are reordered", () => {
    expect(match(CORRECT, byKey(["ORDER_ID"], { case_sensitive: false })).passed).toBe(true);
    const moved = table(
      [ROWS[1]!, ROWS[0]!, ROWS[3]!, ROWS[2]!].map(([a, b, c, d]) => [d!, c!, b!, a!]),
      ["note", "total", "region", "order_id"],
    );
    expect(match(moved, byKey(["order_id"], { columns: "any_order" })).passed).toBe(true);
    const r = match(moved.replace("20.25", "20.5"), byKey(["order_id"], { columns: "any_order" }));
    expect(r.findings).toEqual([{ where: 'row 1, column "total"', input: "order_id=2", actual: "20.5", expected: "20.25", note: expect.any(String) }]);
    const gone = match(table([ROWS[0]!, ROWS[1]!, ROWS[3]!, ["9", "X", "1", "y"]].map(([a, b, c, d]) => [d!, c!, b!, a!]), ["note", "total", "region", "order_id"]), byKey(["order_id"], { columns: "any_order" }));
    expect(gone.findings).toEqual([
      { where: "expected row 3", input: "order_id=3", expected: `region=East, total=7, note=${CANARY}`, note: "no produced row has this key" },
      { where: "row 4", input: "order_id=9", actual: "region=X, total=1, note=y", note: "no expected row has this key" },
    ]);
    expect(gone.message).toContain("0 cells differ in 0 of 3 compared rows; 1 expected row missing; 1 extra; produced 4 rows, expected 4");
  });

  it("names the missing key column and says the check is misconfigured", () => {
    expect(match(CORRECT, byKey(["id"])).publicMessage).toBe(
      "the check is misconfigured (key column \"id\" is not in its expected file); the goal's checker files must be fixed, not the program",
    );
  });

  it("says which keys it matched by in a pass", () => {
    expect(match(CORRECT, byKey(["order_id", "region"])).publicMessage).toBe(
      'artifact "out.csv" matches the expected table: 4 rows, 4 columns compared (row order key by "order_id", "region", columns exact, atol 1e-12, rtol 1e-9)',
    );
  });
});

describe("csv_matches: any order, cell by cell", () => {
  const any = { row_order: "any" };
  const anyMatch = (produced: readonly string[], expected: readonly string[], extra: Record<string, unknown> = {}) =>
    match(pairTable(produced), { ...any, ...extra }, pairTable(expected));
  it("never pairs a number with a text or a null, nor a text with a null", () => {
    expect(anyMatch(["abc"], ["0"]).passed).toBe(false);
    expect(anyMatch(["0"], ["abc"]).passed).toBe(false);
    expect(anyMatch(["0"], [""]).passed).toBe(false);
    expect(anyMatch([""], ["0"]).passed).toBe(false);
    expect(anyMatch(["NA"], [""], { null_values: ["NA"] }).passed).toBe(false);
    expect(anyMatch([""], ["NA"], { null_values: ["NA"] }).passed).toBe(false);
  });

  it("pairs nulls however they are spelled", () => {
    expect(anyMatch(["NA", "1"], ["", "1"], { null_values: ["", "NA"] }).passed).toBe(true);
  });

  it("pairs an integer beyond 2^53 only with that exact integer", () => {
    expect(anyMatch(["9007199254740993"], ["9007199254740992.0"]).passed).toBe(false);
    expect(anyMatch(["9007199254740992.0"], ["9007199254740993"]).passed).toBe(false);
    expect(anyMatch(["1.5"], ["9007199254740993"]).passed).toBe(false);
    expect(anyMatch(["9007199254740993"], ["1.5"]).passed).toBe(false);
    expect(anyMatch(["9007199254740992"], ["9007199254740992.0"]).passed).toBe(true);
    expect(anyMatch(["9007199254740992.0"], ["9007199254740992"]).passed).toBe(true);
  });

  it("reads each leftover row's own cells (an integer beyond 2^53 is not carried to the next row)", () => {
    const h = ["n", "v"];
    const expected = table([["9007199254740993", "0.5"], ["5", "0.5"]], h);
    const produced = table([["9007199254740993", "0.50000000001"], ["9007199254740993", "0.5"]], h);
    const r = match(produced, any, expected);
    expect(r.passed).toBe(false);
    expect(r.message).toContain("1 of 2 expected rows matched; 1 expected row missing; 1 extra");
  });

  it("counts an expected row repeated as two rows", () => {
    const r = match(table([ROWS[0]!, ROWS[1]!, ROWS[2]!, ROWS[3]!]), any, table([...ROWS, ROWS[1]!]));
    expect(r.passed).toBe(false);
    expect(r.message).toContain(": 4 of 5 expected rows matched; 1 expected row missing; 0 extra");
  });

  it("reports the rows left over, in row order, with their cells", () => {
    const produced = table([withCell(0, 2, "99")[0]!, ROWS[1]!, ["8", "A", "2", "x"], withCell(2, 2, "98")[2]!, ROWS[3]!]);
    const r = match(produced, any);
    expect(r.message).toMatch(/: 2 of 4 expected rows matched; 2 expected rows missing; 3 extra; produced 5 rows, expected 4\. /);
    expect(r.findings).toEqual([
      { where: "row count", actual: "5", expected: "4", note: "1 row more than expected" },
      { where: "expected row 1", expected: "order_id=1, region=North, total=10.5, note=ok", note: "no produced row matches this expected row" },
      { where: "row 1", actual: "order_id=1, region=North, total=99, note=ok", note: "matches no expected row" },
      { where: "expected row 3", expected: `order_id=3, region=East, total=7, note=${CANARY}`, note: "no produced row matches this expected row" },
      { where: "row 3", actual: "order_id=8, region=A, total=2, note=x", note: "matches no expected row" },
      { where: "row 4", actual: "order_id=3, region=East, total=98, note=" + CANARY, note: "matches no expected row" },
    ]);
    expect(r.publicMessage).toBe(
      'artifact "out.csv" does not match the expected table: 2 of 4 expected rows matched; 2 expected rows missing; 3 extra; produced 5 rows, expected 4. First differences at: row count; expected row 1; row 1; expected row 3; row 3',
    );
  });

  it("reports an extra row that sorts last among the leftovers", () => {
    const r = anyMatch(["a", "b2", "zz"], ["a", "b"]);
    expect(r.findings?.filter((f) => f.where !== "row count")).toEqual([
      { where: "expected row 2", expected: "id=2, v=b", note: "no produced row matches this expected row" },
      { where: "row 2", actual: "id=2, v=b2", note: "matches no expected row" },
      { where: "row 3", actual: "id=3, v=zz", note: "matches no expected row" },
    ]);
  });

  it("reports missing and extra rows in row order, not in sort order", () => {
    const h = ["v"];
    const r = match(table([["y"], ["x"]], h), any, table([["b"], ["a"]], h));
    expect(r.findings?.map((f) => f.where)).toEqual(["expected row 1", "row 1", "expected row 2", "row 2"]);
  });

  it("of equal expected rows, reports the last ones as missing", () => {
    const h = ["v"];
    const r = match(table([["1.00"], ["1.00"]], h), any, table([["1.0"], ["1"], ["1.0"]], h));
    expect(r.findings?.filter((f) => f.where !== "row count")).toEqual([{ where: "expected row 3", expected: "v=1.0", note: "no produced row matches this expected row" }]);
  });

  it("pairs rows by their cells when the columns are reordered", () => {
    const moved = (rows: string[][]) => table(rows.map(([a, b, c, d]) => [d!, c!, b!, a!]), ["note", "total", "region", "order_id"]);
    expect(match(moved([ROWS[1]!, ROWS[0]!, ROWS[3]!, ROWS[2]!]), { ...any, columns: "any_order" }).passed).toBe(true);
    const r = match(moved([ROWS[1]!, ROWS[0]!, ROWS[3]!, withCell(2, 2, "8")[2]!]), { ...any, columns: "any_order" });
    expect(r.passed).toBe(false);
    expect(r.findings).toEqual([
      { where: "expected row 3", expected: `order_id=3, region=East, total=7, note=${CANARY}`, note: "no produced row matches this expected row" },
      { where: "row 4", actual: `order_id=3, region=East, total=8, note=${CANARY}`, note: "matches no expected row" },
    ]);
  });
});

describe("csv_matches: any order, tables too large for the search", () => {
  // Past FUZZY_PAIRS_MAX (4,000,000 missing × extra row pairs) only the sort-and-merge pairs rows, so a
  // wrong sort order fails a correct table here. Every row differs from its expected row by float noise
  // within tolerance (the last column), so none is paired as identical text.
  // Each table below makes one kind of cell the last that tells rows apart: a comparison that ignores or
  // misorders it leaves most of the 6,000 rows unpaired, far past what the search may take on.
  const N = 6000;
  const noisy = (rows: string[][], produced: boolean) => rows.map((r) => [...r, produced ? "0.50000000001" : "0.5"]);
  const big = (rows: string[][], header: string[]) => {
    const h = [...header, "noise"];
    const expected = table(noisy(rows, false), h);
    const produced = table(noisy(rows, true).reverse(), h);
    return { expected, produced };
  };
  const cases: Record<string, { header: string[]; row: (i: number) => string[] }> = {
    numbers: { header: ["x"], row: (i) => [i % 2 === 0 ? String(i - 3000) : `${i - 3000}.25`] },
    texts: { header: ["x"], row: (i) => [`w${(i * 7919) % N}`] },
    "nulls, numbers and texts": { header: ["x"], row: (i) => [["", String(i), `t${i}`][i % 3]!] },
    "equal numbers, then texts": { header: ["x", "y"], row: (i) => [String(i % 3), `w${(i * 7919) % N}`] },
    "equal texts, then numbers": { header: ["x", "y"], row: (i) => [`t${i % 3}`, String(i)] },
    "nulls or one number, then numbers": { header: ["x", "y"], row: (i) => [i % 2 === 0 ? "" : "5", String(i)] },
    // Consecutive integers past 2^53 share doubles, so only exact comparison orders them; the floats among them
    // must never be turned into integers.
    "integers beyond 2^53 among floats": { header: ["x"], row: (i) => [i % 7 === 3 ? `${i}.5` : String(9007199254740993n + BigInt(i))] },
  };
  it.each(Object.entries(cases))("pairs every row of a shuffled correct table: %s", (_name, { header, row }) => {
    const rows = Array.from({ length: N }, (_, i) => row(i));
    const { expected, produced } = big(rows, header);
    const r = match(produced, { row_order: "any" }, expected);
    expect(r.message).toContain(`${N} rows, ${header.length + 1} columns compared`);
    expect(r.passed).toBe(true);
    // One value wrong: one row missing, one extra, every other row matched.
    const wrongRows = noisy(rows, true).reverse();
    wrongRows[7]![0] = "wrong";
    const w = match(table(wrongRows, [...header, "noise"]), { row_order: "any" }, expected);
    expect(w.passed).toBe(false);
    expect(w.message).toContain(`: ${N - 1} of ${N} expected rows matched; 1 expected row missing; 1 extra;`);
  });

  it("pairs identical rows first, so that the merge pairs the rest", () => {
    // Per group: E_a = (0.3, x) and E_b = (0.30000000000000004, a) expected; produced P_b is E_b exactly and
    // P_a is E_a with noise. Merged unpaired, E_a sorts before E_b and P_b before P_a, and none would pair.
    const rows: string[][] = [];
    const out: string[][] = [];
    for (let g = 0; g < 2100; g++) {
      rows.push([String(g), "0.3", "x"], [String(g), "0.30000000000000004", "a"]);
      out.push([String(g), "0.30000000000000004", "a"], [String(g), "0.30000000000000004", "x"]);
    }
    const h = ["g", "f", "t"];
    const r = match(table(out, h), { row_order: "any" }, table(rows, h));
    expect(r.passed).toBe(true);
    out[1]![2] = "y";
    expect(match(table(out, h), { row_order: "any" }, table(rows, h)).message).toContain(": 4199 of 4200 expected rows matched; 1 expected row missing; 1 extra;");
  });

  it("on a tie in sort order that is no match, steps past the produced row, not the expected one", () => {
    // 2^53 + 4i + 1 (written "+...", so no row is identical text) sorts level with the float 2^53 + 4i
    // written before it, and equals only the integer after it.
    const rows: string[][] = [];
    const out: string[][] = [];
    for (let i = 0; i < 2100; i++) {
      const b = 9007199254740993n + 4n * BigInt(i);
      rows.push([`+${b}`]);
      out.push([`${b - 1n}.0`], [String(b)]);
    }
    const r = match(table(out, ["n"]), { row_order: "any" }, table(rows, ["n"]));
    expect(r.message).toContain(": 2100 of 2100 expected rows matched; 0 expected rows missing; 2100 extra;");
  });

  // The merge leaves half of these rows unpaired (their first cells are within tolerance but sort the other
  // way round), and the search pairs them while missing × extra stays within FUZZY_PAIRS_MAX.
  const swapped = (half: number, extraRow = false) => {
    const lo = "0.43999999999999995";
    const hi = "0.44000000000000006";
    const t = (i: number) => `t${String(i).padStart(5, "0")}`;
    const rows = Array.from({ length: 2 * half }, (_, i) => [i < half ? lo : hi, t(i)]);
    const out = Array.from({ length: 2 * half }, (_, i) => [i < half ? hi : lo, t(i)]);
    if (extraRow) out.push(["1", "x"]);
    return match(table(out, ["f", "t"]), { row_order: "any" }, table(rows, ["f", "t"]));
  };
  it("searches for pairs the merge missed while missing × extra <= 4,000,000, and not beyond", () => {
    expect(swapped(2000).passed).toBe(true);
    expect(swapped(3, true).message).toContain(": 6 of 6 expected rows matched; 0 expected rows missing; 1 extra;");
    const beyond = swapped(2001);
    expect(beyond.passed).toBe(false);
    expect(beyond.message).toContain(": 2001 of 4002 expected rows matched; 2001 expected rows missing; 2001 extra;");
  });
});

describe("csv_matches: header and column problems", () => {
  it("names a missing middle column without calling the rest reordered", () => {
    const r = match(table(ROWS.map(([a, , c, d]) => [a!, c!, d!]), ["order_id", "total", "note"]));
    expect(r.findings?.[0]).toEqual({ where: "header", actual: "order_id,total,note", expected: "order_id,region,total,note", note: 'missing 1 column "region"' });
    const x = match(table(ROWS.map(([a, b, c, d]) => [a!, "x", b!, c!, d!]), ["order_id", "extra", "region", "total", "note"]));
    expect(x.findings?.[0]?.note).toBe('unexpected 1 column "extra"');
    const both = match(table(ROWS, ["order_id", "region", "amount", "note"]));
    expect(both.findings?.[0]?.note).toBe('missing 1 column "total"; unexpected 1 column "amount"');
  });

  it("fails a table with no expected column at all, saying so", () => {
    const r = match(table(ROWS, ["a", "b", "c", "d"]));
    expect(r.passed).toBe(false);
    expect(r.message).toContain("no expected column is in the produced file, so no rows were compared");
    expect(match(table(ROWS, ["a", "b", "c", "d"]), { columns: "expected_subset" }).passed).toBe(false);
  });

  it("fails produced columns that are one name once case-folded, and calls such expected columns a misconfiguration", () => {
    const r = match(table(ROWS, ["order_id", "region", "total", "REGION"]), { case_sensitive: false });
    expect(r).toMatchObject({
      passed: false,
      message: 'artifact "out.csv": columns "REGION" and "region" are the same name once trimmed/case-folded; column names must be unique',
    });
    const e = match(CORRECT, { trim: true }, table(ROWS, ["order_id", "region", " region", "note"]));
    expect(e).toMatchObject({
      passed: false,
      message: 'invalid check: checker file "expected.csv" names column " region" twice once trimmed/case-folded',
      publicMessage: "the check is misconfigured (its expected file has duplicate columns); the goal's checker files must be fixed, not the program",
    });
  });

  it("tells a misconfigured expected file from a wrong program in public", () => {
    const why = (m: string) => `the check is misconfigured (${m}); the goal's checker files must be fixed, not the program`;
    expect(match(CORRECT, {}, null).publicMessage).toBe(why("its expected file could not be read"));
    expect(match(CORRECT, {}, "order_id\n").publicMessage).toBe(why("its expected file has no rows"));
  });

  it("compares moved columns by name even when the raw rows are the same text", () => {
    // Swapped headers over the same row text: every value is in the other column.
    expect(match("b,a\n1,2\n", { columns: "any_order" }, "a,b\n1,2\n").passed).toBe(false);
    expect(match("b,a\n1,2\n", { columns: "any_order", row_order: "any" }, "a,b\n1,2\n").passed).toBe(false);
    expect(match("a,c,b\n1,2,3\n", { columns: "any_order" }, "a,b,c\n1,2,3\n").passed).toBe(false);
    expect(match("a,c,b\n1,2,3\n", { columns: "any_order", row_order: "any" }, "a,b,c\n1,2,3\n").passed).toBe(false);
    expect(match("a,c,b\n1,3,2\n", { columns: "any_order", row_order: "any" }, "a,b,c\n1,2,3\n").passed).toBe(true);
  });
});

describe("csv_matches: strict order reports", () => {
  it("reports a dropped last row and an added row with their cells and the row count both ways", () => {
    const short = match(table(ROWS.slice(0, 3)));
    expect(short.findings).toEqual([
      { where: "row count", actual: "3", expected: "4", note: "1 row fewer than expected" },
      { where: "expected row 4", expected: "order_id=4, region=West, total=0, note=", note: "the produced table ends before this row" },
    ]);
    const long = match(table([...ROWS, ["5", "North", "1", "x"], ["6", "South", "2", "y"]]));
    expect(long.findings).toEqual([
      { where: "row count", actual: "6", expected: "4", note: "2 rows more than expected" },
      { where: "row 5", actual: "order_id=5, region=North, total=1, note=x", note: "a row beyond the expected table's end" },
      { where: "row 6", actual: "order_id=6, region=South, total=2, note=y", note: "a row beyond the expected table's end" },
    ]);
    expect(long.message).toContain(": 0 cells differ in 0 of 4 compared rows; 0 expected rows missing; 2 extra; produced 6 rows, expected 4; ");
  });

  it("previews rows by column name when the columns are reordered", () => {
    const moved = (rows: string[][]) => table(rows.map(([a, b, c, d]) => [d!, c!, b!, a!]), ["note", "total", "region", "order_id"]);
    expect(match(moved(ROWS.slice(0, 3)), { columns: "any_order" }).findings?.[1]?.expected).toBe("order_id=4, region=West, total=0, note=");
    expect(match(moved([...ROWS, ["5", "N", "1", "x"]]), { columns: "any_order" }).findings?.[1]?.actual).toBe("order_id=5, region=N, total=1, note=x");
  });
});

describe("csv_matches: findings and messages", () => {
  it("keeps max_findings even when the header findings alone exceed it", () => {
    const r = match(table(ROWS.slice(0, 3), ["order_id", "region", "amount", "note"]), { max_findings: 1 });
    expect(r.findings).toEqual([expect.objectContaining({ where: "header" })]);
  });

  it("takes max_findings findings in turns across kinds", () => {
    const many = table([...ROWS.map((r) => r.map((c, j) => (j === 2 ? `${c}1` : c))).slice(1), ["9", "X", "1", ""], ["9", "X", "1", ""]]);
    const r = match(many, { row_order: "key", key: ["order_id"], max_findings: 3 });
    expect(r.findings?.map((f) => f.where)).toEqual(["row count", "row 5", 'row 1, column "total"']);
    const four = match(many, { row_order: "key", key: ["order_id"], max_findings: 6 });
    expect(four.findings?.map((f) => f.where)).toEqual(["row count", "row 5", 'row 1, column "total"', "expected row 1", "row 4", 'row 2, column "total"']);
    expect(four.message).toContain(": 3 cells differ in 3 of 3 compared rows; 1 expected row missing; 1 extra; 1 duplicate key; produced 5 rows, expected 4");
  });

  it("shows the first five findings in the messages, each with its key, values and note", () => {
    const wrong = table(ROWS.map((r) => r.map((c, j) => (j === 1 ? `${c}!` : j === 2 ? `${c}1` : c))));
    const r = match(wrong, { row_order: "key", key: ["order_id"] });
    expect(r.findings).toHaveLength(8);
    expect(r.publicMessage).toBe(
      'artifact "out.csv" does not match the expected table: 8 cells differ in 4 of 4 compared rows; 0 expected rows missing; 0 extra; produced 4 rows, expected 4. First differences at: row 1, column "region"; row 1, column "total"; row 2, column "region"; row 2, column "total"; row 3, column "region"',
    );
    expect(r.message).toContain(
      '. First differences: row 1, column "region" (order_id=1): expected "North", found "North!" (text differs); row 1, column "total" (order_id=1): expected "10.5", found "10.51" (differs by 0.01',
    );
    const dup = match(table([...ROWS, ROWS[0]!]), { row_order: "key", key: ["order_id"] });
    expect(dup.message).toContain("First differences: row count: expected \"4\", found \"5\" (1 row more than expected); row 5 (order_id=1) (duplicate key (first at row 1))");
    const extra = match(table([...ROWS, ["5", "N", "1", "x"]]), { row_order: "key", key: ["order_id"] });
    expect(extra.message).toContain('; row 5 (order_id=5): found "region=N, total=1, note=x" (no expected row has this key)');
    const missing = match(table(ROWS.slice(1)), { row_order: "key", key: ["order_id"] });
    expect(missing.message).toContain('; expected row 1 (order_id=1): expected "region=North, total=10.5, note=ok" (no produced row has this key)');
    expect(missing.message).toContain(": 0 cells differ in 0 of 3 compared rows; 1 expected row missing; 0 extra;");
  });
});
