// Issue 10: csv_schema's column rules; the false-accept traps (nulls skipped silently, vacuous passes on
// empty tables or all-null columns, backtracking regexes) each have a case here.
import { describe, expect, it } from "vitest";
import { csvSchema } from "../src/checks/csv-schema";
import type { CheckResult } from "../src/types";
import { emptyCtx, file } from "./support";

const ctx = emptyCtx;

function schema(csv: string | null, params: Record<string, unknown>): CheckResult {
  const parsed = csvSchema.params.parse({ artifact: "out.csv", ...params });
  return csvSchema.run(parsed, ctx({ artifacts: csv === null ? [] : [file("out.csv", csv)] }));
}
const rejects = (params: Record<string, unknown>) => csvSchema.params.safeParse({ artifact: "out.csv", ...params });

const CLEAN = [
  "order_id,region,amount,day,at,paid,code",
  "1,North,10.50,2024-02-29,2024-02-29T13:05:00Z,true,AB-1",
  "2,South,0,2024-03-01,2024-03-01 08:00:00,False,CD-22",
  "3,East,100,2023-12-31,2023-12-31T23:59:59.123+02:00,TRUE,EF-333",
  "",
].join("\n");

const FULL_RULES = {
  order_id: { type: "integer", not_null: true, unique: true },
  region: { in_set: ["North", "South", "East", "West"] },
  amount: { type: "number", between: [0, 100] },
  day: { type: "date" },
  at: { type: "datetime" },
  paid: { type: "boolean" },
  code: { regex: "[A-Z]{2}-\\d+", min_length: 4, max_length: 6 },
};

/**
 * A one-column table holding `cells`, checked with `rule`. Empty cells are written `""`, as Python's csv
 * writer (and so pandas) writes them: a bare blank line at the end of a file is a trailing line break.
 */
function column(cells: string[], rule: Record<string, unknown>, extra: Record<string, unknown> = {}): CheckResult {
  return schema(`v\n${cells.map((c) => (c === "" || /[",\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join("\n")}\n`, { rules: { v: rule }, ...extra });
}

describe("csv_schema: a table that obeys its schema passes", () => {
  it("passes every rule kind on a clean table, and says what was checked", () => {
    const r = schema(CLEAN, { columns: ["order_id", "region", "amount"], rules: FULL_RULES });
    expect(r.passed).toBe(true);
    expect(r.message).toBe('artifact "out.csv" satisfies its schema: 3 rows; the 3 required columns present; rules on 7 columns hold');
    expect(r.publicMessage).toBe(r.message);
  });

  it("passes columns in relative order with extra columns in between", () => {
    expect(schema(CLEAN, { columns: ["order_id", "amount", "code"], column_order: "ordered" }).passed).toBe(true);
    expect(schema(CLEAN, { columns: ["order_id", "region", "amount", "day", "at", "paid", "code"], column_order: "exact" }).passed).toBe(true);
  });
});

describe("csv_schema: header rules", () => {
  it("fails a missing required column, naming it", () => {
    const r = schema(CLEAN, { columns: ["order_id", "customer"] });
    expect(r.passed).toBe(false);
    expect(r.message).toContain('column "customer": required column "customer" is missing');
    expect(r.findings?.[0]).toMatchObject({ where: 'column "customer"' });
  });

  it("fails a renamed column (the old name is missing)", () => {
    expect(schema(CLEAN.replace("amount", "total"), { columns: ["order_id", "amount"] }).passed).toBe(false);
  });

  it('fails reordered columns under "ordered" and "exact", passes them under "any"', () => {
    const cols = ["region", "order_id"];
    expect(schema(CLEAN, { columns: cols }).passed).toBe(true);
    const ordered = schema(CLEAN, { columns: cols, column_order: "ordered" });
    expect(ordered.passed).toBe(false);
    expect(ordered.message).toMatch(/the columns must appear in the order "region", "order_id"; found "order_id", "region"/);
    expect(schema(CLEAN, { columns: ["order_id", "region", "amount", "day", "at", "code", "paid"], column_order: "exact" }).passed).toBe(false);
  });

  it('fails extra columns under "exact" and with allow_extra_columns false', () => {
    const exact = schema(CLEAN, { columns: ["order_id", "region", "amount", "day", "at", "paid"], column_order: "exact" });
    expect(exact.passed).toBe(false);
    expect(exact.findings).toContainEqual(expect.objectContaining({ where: 'column "code"' }));
    expect(schema(CLEAN, { columns: ["order_id", "region", "amount", "day", "at", "paid"], allow_extra_columns: false }).passed).toBe(false);
    expect(schema(CLEAN, { columns: ["order_id", "region", "amount", "day", "at", "paid", "code"], allow_extra_columns: false }).passed).toBe(true);
  });

  it("fails a rule on a column the CSV does not have", () => {
    const r = schema(CLEAN, { rules: { customer: { not_null: true } } });
    expect(r.passed).toBe(false);
    expect(r.message).toMatch(/rules name column "customer", which the CSV does not have/);
  });
});

describe("csv_schema: nulls and empty tables never pass silently", () => {
  it("fails a table with no rows", () => {
    const r = schema("order_id,region\n", { columns: ["order_id"], rules: { order_id: { type: "integer" } } });
    expect(r.passed).toBe(false);
    expect(r.message).toContain("the table has no rows");
  });

  it("fails an empty file and a missing artifact", () => {
    expect(schema("", { columns: ["a"] })).toMatchObject({ passed: false, message: 'artifact "out.csv" is empty: expected a header row' });
    expect(schema(null, { columns: ["a"] })).toMatchObject({ passed: false, message: 'artifact "out.csv" was not returned (no artifacts were returned)' });
  });

  it("fails a null under not_null, with the row", () => {
    const r = column(["a", "", "c"], { not_null: true });
    expect(r.passed).toBe(false);
    expect(r.findings).toEqual([{ where: 'row 2, column "v"', actual: "", note: 'not_null: the cell is null ("" is a null value)' }]);
    expect(column(["a", "NA"], { not_null: true }, { null_values: ["", "NA"] }).passed).toBe(false);
    // " " is not a null unless listed: it is a value.
    expect(column(["a", " "], { not_null: true }).passed).toBe(true);
  });

  it("skips nulls for value rules without not_null, and says how many", () => {
    const r = column(["1", "", "3", ""], { type: "integer" });
    expect(r.passed).toBe(true);
    expect(r.message).toContain('(2 nulls skipped in "v")');
    const failing = column(["1", "", "x"], { type: "integer" });
    expect(failing.message).toContain('1 null skipped in "v"');
  });

  it("fails a column of nothing but nulls for every value rule", () => {
    for (const rule of [{ type: "number" }, { between: [0, 1] }, { in_set: ["a"] }, { regex: ".*" }, { unique: true }, { min_length: 0 }]) {
      const r = column(["", "", ""], rule);
      expect(r.passed, JSON.stringify(rule)).toBe(false);
      expect(r.message).toContain("no non-null values to check");
    }
  });
});

describe("csv_schema: value rules", () => {
  it("type integer: accepts 007 and -5, refuses 17.0, 1e3, 1,000 and NaN", () => {
    expect(column(["007", "-5", "9007199254740993"], { type: "integer" }).passed).toBe(true);
    const r = column(["1", "17.0", "1e3", "1,000", "NaN"], { type: "integer" });
    expect(r.passed).toBe(false);
    expect(r.message).toContain('type integer fails in 4 rows (row 2 "17.0", row 3 "1e3", …)');
    expect(r.findings?.[0]?.note).toMatch(/written as a decimal, not an integer/);
  });

  it("type number: refuses NaN, inf, thousands separators and units", () => {
    expect(column(["1", "-2.5", "1e-3", ".5"], { type: "number" }).passed).toBe(true);
    for (const bad of ["NaN", "inf", "1,000", "$5", "5 kg", " 5"]) expect(column(["1", bad], { type: "number" }).passed, bad).toBe(false);
  });

  it("type boolean, date and datetime: real values only", () => {
    expect(column(["true", "False", "TRUE"], { type: "boolean" }).passed).toBe(true);
    for (const bad of ["yes", "1", "t"]) expect(column([bad], { type: "boolean" }).passed, bad).toBe(false);
    expect(column(["2024-02-29", "2000-02-29", "1999-12-31"], { type: "date" }).passed).toBe(true);
    for (const bad of ["2023-02-29", "1900-02-29", "2024-13-01", "2024-04-31", "2024-1-5", "2024-01-05T00:00:00", "05/01/2024"]) {
      expect(column([bad], { type: "date" }).passed, bad).toBe(false);
    }
    expect(column(["2024-01-05T13:00", "2024-01-05 13:00:00", "2024-01-05T13:00:00.123456Z", "2024-01-05T13:00:00-05:00"], { type: "datetime" }).passed).toBe(true);
    for (const bad of ["2024-01-05", "2024-01-05T25:00:00", "2024-01-05T12:60", "2024-02-30T00:00", "2024-01-05T13:00:00+25:00", "13:00"]) {
      expect(column([bad], { type: "datetime" }).passed, bad).toBe(false);
    }
  });

  it("unique: reports each duplicate with the row it repeats; nulls are not duplicates", () => {
    const r = column(["a", "b", "", "a", "", "b", "a"], { unique: true });
    expect(r.passed).toBe(false);
    expect(r.findings).toEqual([
      { where: 'row 4, column "v"', actual: "a", note: 'unique: "a" already appears in row 1' },
      { where: 'row 6, column "v"', actual: "b", note: 'unique: "b" already appears in row 2' },
      { where: 'row 7, column "v"', actual: "a", note: 'unique: "a" already appears in row 1' },
    ]);
    expect(r.message).toContain("unique fails in 3 rows");
    expect(column(["a", "b", "", ""], { unique: true }).passed).toBe(true);
  });

  it("in_set: exact text", () => {
    expect(column(["North", "South"], { in_set: ["North", "South"] }).passed).toBe(true);
    for (const bad of ["north", "North ", "Nort"]) expect(column([bad], { in_set: ["North", "South"] }).passed, bad).toBe(false);
  });

  it("between: inclusive, numbers only, integers compared exactly", () => {
    expect(column(["0", "100", "50.5", "1e2"], { between: [0, 100] }).passed).toBe(true);
    for (const bad of ["-0.0001", "100.0001", "abc", "NaN", "1,5"]) expect(column([bad], { between: [0, 100] }).passed, bad).toBe(false);
    expect(column(["9007199254740993"], { between: [0, 9007199254740992] }).passed).toBe(false);
    expect(column(["9007199254740992"], { between: [0, 9007199254740992] }).passed).toBe(true);
  });

  it("regex: must match the whole cell", () => {
    expect(column(["AB-1", "CD-22"], { regex: "[A-Z]{2}-\\d+" }).passed).toBe(true);
    const r = column(["AB-1", "xAB-1", "AB-1x"], { regex: "[A-Z]{2}-\\d+" });
    expect(r.passed).toBe(false);
    expect(r.findings?.map((f) => f.where)).toEqual(['row 2, column "v"', 'row 3, column "v"']);
    // An alternation stays inside the anchors.
    expect(column(["ab"], { regex: "a|b" }).passed).toBe(false);
  });

  it("regex: a catastrophic-backtracking pattern runs in linear time (RE2) on a 50,000-character cell", () => {
    const started = performance.now();
    const r = column([`${"a".repeat(50_000)}!`, "a".repeat(50_000)], { regex: "^(a|a)*$" });
    const ms = performance.now() - started;
    expect(r.passed).toBe(false);
    expect(r.findings).toHaveLength(1);
    expect(r.findings?.[0]?.actual?.length).toBeLessThanOrEqual(81);
    // Timing lives in bench/checks.ts; here it is only printed (a backtracking engine would not finish).
    console.log(`csv_schema RE2 on 2 x 50,000 characters: ${Math.round(ms)} ms`);
  });

  it("min_length and max_length count characters (code points), not UTF-16 units", () => {
    expect(column(["ab", "a😀"], { min_length: 2, max_length: 2 }).passed).toBe(true);
    expect(column(["a"], { min_length: 2 }).passed).toBe(false);
    expect(column(["😀😀😀"], { max_length: 2 }).passed).toBe(false);
  });

  it("reports several failing rules and columns, bounded", () => {
    const rows = Array.from({ length: 500 }, (_, i) => `${i % 7},X${"y".repeat(200)},abc`);
    const r = schema(`id,region,amount\n${rows.join("\n")}\n`, {
      rules: { id: { unique: true }, region: { in_set: ["North"], max_length: 5 }, amount: { type: "number" } },
      max_findings: 6,
    });
    expect(r.passed).toBe(false);
    expect(r.findings).toHaveLength(6);
    // The first findings show every failing rule, not six of the first one.
    expect(new Set(r.findings?.map((f) => f.note?.split(":")[0]))).toEqual(new Set(["unique", "in_set", "max_length 5", "type number"]));
    expect(r.message.length).toBeLessThan(2000);
    expect(r.message).toMatch(/^artifact "out.csv" fails its schema: 1993 problems in 500 rows: /);
  });

  it("checks 100,000 rows with several rules (timed in bench/checks.ts)", () => {
    const rows = Array.from({ length: 100_000 }, (_, i) => `${i},${["North", "South"][i % 2]},${(i % 1000) / 10},2024-01-${String((i % 28) + 1).padStart(2, "0")}`);
    const csv = `id,region,amount,day\n${rows.join("\n")}\n`;
    const started = performance.now();
    const r = schema(csv, { rules: { id: { type: "integer", unique: true, not_null: true }, region: { in_set: ["North", "South"] }, amount: { type: "number", between: [0, 100] }, day: { type: "date", regex: "2024-.*" } } });
    const ms = performance.now() - started;
    expect(r.passed).toBe(true);
    console.log(`csv_schema 100k rows x 4 columns, 8 rules: ${Math.round(ms)} ms`);
  });
});

describe("csv_schema: params are strict", () => {
  it("rejects unknown keys at every level, empty rules and contradictions", () => {
    const bad: Record<string, unknown>[] = [
      { columns: ["a"], strict: true },
      { rules: { a: { type: "integer", nullable: true } } },
      { rules: { a: {} } },
      { rules: { a: { not_null: false } } },
      { rules: { a: { type: "float" } } },
      { rules: { a: { between: [5, 1] } } },
      { rules: { a: { between: [1] } } },
      { rules: { a: { in_set: [] } } },
      { rules: { a: { min_length: 5, max_length: 2 } } },
      { rules: { a: { regex: "(a)\\1" } } },
      { rules: { a: { regex: "(?=a)" } } },
      { rules: { a: { regex: "a)|(b" } } },
      { rules: { a: { regex: "[" } } },
      { columns: ["a"], column_order: "exact", allow_extra_columns: true },
      { column_order: "ordered", rules: { a: { not_null: true } } },
      { allow_extra_columns: false, rules: { a: { not_null: true } } },
      { columns: ["a", "a"] },
      { columns: [] },
      {},
      { columns: ["a"], max_findings: 0 },
      { columns: ["a"], delimiter: "\n" },
    ];
    for (const params of bad) expect(rejects(params).success, JSON.stringify(params)).toBe(false);
    expect(csvSchema.params.safeParse({ columns: ["a"] }).success).toBe(false);
    expect(csvSchema.params.safeParse(csvSchema.example).success).toBe(true);
  });

  it("names the path of a nested unknown key and of a bad pattern", () => {
    const nested = rejects({ rules: { region: { in_set: ["a"], accepted_values: ["b"] } } });
    expect(nested.success).toBe(false);
    expect(nested.error?.issues[0]?.path).toEqual(["rules", "region"]);
    expect(nested.error?.issues[0]?.message).toMatch(/accepted_values/);
    const pattern = rejects({ rules: { code: { regex: "(a)\\1" } } });
    expect(pattern.error?.issues[0]?.path).toEqual(["rules", "code", "regex"]);
    expect(pattern.error?.issues[0]?.message).toMatch(/not a valid RE2 regular expression/);
  });

  it("takes another delimiter", () => {
    expect(schema("a;b\n1,5;x\n", { delimiter: ";", rules: { a: { in_set: ["1,5"] } } }).passed).toBe(true);
  });

  it("fails closed on an unparsable CSV", () => {
    expect(schema('a,b\n1,"x\n', { columns: ["a"] }).message).toBe('artifact "out.csv" is not valid CSV: line 2: a quoted field is never closed (unterminated double quote)');
  });
});
