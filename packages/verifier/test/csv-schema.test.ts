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

// Issue 18: the survivors of the mutation run, killed on behaviour: both sides of every bound, the exact
// findings and messages of every failure kind, and the exact param issues.
describe("csv_schema: bounds, both sides", () => {
  it("date: day 0 and month 0 or 13 are not dates; the first and last days are", () => {
    expect(column(["2024-01-01", "2024-12-31", "2023-02-28"], { type: "date" }).passed).toBe(true);
    for (const bad of ["2024-01-00", "2024-00-10", "2024-13-10", "2023-02-29"]) expect(column([bad], { type: "date" }).passed, bad).toBe(false);
    expect(column(["2024-01-00T00:00"], { type: "datetime" }).passed).toBe(false);
  });

  it("datetime: seconds 59 pass and 60 fail; offsets up to +23:59 pass, +24:00 and +05:60 fail", () => {
    for (const good of ["2024-01-05T23:59:59", "2024-01-05T00:00:00+23:00", "2024-01-05T00:00:00-05:59", "2024-01-05T00:00+0530", "2024-01-05T00:00Z"]) {
      expect(column([good], { type: "datetime" }).passed, good).toBe(true);
    }
    for (const bad of ["2024-01-05T13:00:60", "2024-01-05T00:00:00+24:00", "2024-01-05T00:00:00+05:60", "2024-01-05T24:00"]) {
      expect(column([bad], { type: "datetime" }).passed, bad).toBe(false);
    }
  });

  it("between: at each bound passes, one beyond fails, for integers and decimals, with decimal bounds", () => {
    expect(column(["0", "100"], { between: [0, 100] }).passed).toBe(true);
    for (const bad of ["-1", "101"]) expect(column([bad], { between: [0, 100] }).passed, bad).toBe(false);
    expect(column(["1", "10", "0.5", "10.5"], { between: [0.5, 10.5] }).passed).toBe(true);
    for (const bad of ["0", "11", "0.4", "10.6"]) expect(column([bad], { between: [0.5, 10.5] }).passed, bad).toBe(false);
    // A decimal cell against integer bounds, and a decimal past 2^53 against 2^53.
    expect(column(["0.5", "99.5", "1e2"], { between: [0, 100] }).passed).toBe(true);
    for (const bad of ["-0.5", "100.5", "1.5e2"]) expect(column([bad], { between: [0, 100] }).passed, bad).toBe(false);
    expect(column(["9007199254740994.0"], { between: [0, 9007199254740992] }).passed).toBe(false);
    expect(column(["5", "5.0"], { between: [5, 5] }).passed).toBe(true);
    expect(column(["4"], { between: [5, 5] }).passed).toBe(false);
  });

  it("min_length and max_length: at the bound passes, one beyond fails; astral characters are one each", () => {
    // U+10000, U+1F400, U+1F7FF and U+10FFFF sit on the edges of the surrogate ranges.
    const astral = ["\u{10000}", "\u{1F400}", "\u{1F7FF}", "\u{10FFFF}"];
    expect(column(astral.map((c) => `${c}${c}`), { min_length: 2, max_length: 2 }).passed).toBe(true);
    for (const c of astral) {
      expect(column([c], { min_length: 2 }).passed, c).toBe(false);
      expect(column([`${c}${c}${c}`], { max_length: 2 }).passed, c).toBe(false);
    }
    expect(column(["abc"], { min_length: 3, max_length: 3 }).passed).toBe(true);
    expect(column(["abcd"], { min_length: 3, max_length: 3 }).passed).toBe(false);
    expect(column(["ab"], { min_length: 3, max_length: 3 }).passed).toBe(false);
    expect(column(["abcd"], { max_length: 3 }).passed).toBe(false);
    expect(column(["ab"], { min_length: 3 }).passed).toBe(false);
  });

  it("type string accepts any non-null text, and still fails an all-null column", () => {
    expect(column(["abc", "1.5", "true"], { type: "string" }).passed).toBe(true);
    expect(column(["", ""], { type: "string" }).passed).toBe(false);
  });
});

describe("csv_schema: exact findings and notes", () => {
  it("names what is wrong with each type", () => {
    const note = (type: string, cell: string) => column([cell], { type }).findings?.[0]?.note;
    expect(note("integer", "abc")).toBe('type integer: "abc" is not an integer');
    expect(note("integer", "17.0")).toBe('type integer: "17.0" is written as a decimal, not an integer (a float column? write 17, not 17.0)');
    expect(note("number", "x")).toBe('type number: "x" is not a number (digits with an optional sign, decimal point and exponent; no thousands separators, units, NaN or inf)');
    expect(note("boolean", "yes")).toBe('type boolean: "yes" is not a boolean ("true" or "false", any case)');
    expect(note("date", "2024-1-5")).toBe('type date: "2024-1-5" is not an ISO date (YYYY-MM-DD)');
    expect(note("date", "2023-02-29")).toBe('type date: "2023-02-29" is not a real calendar date');
    expect(note("datetime", "13:00")).toBe('type datetime: "13:00" is not an ISO 8601 datetime (YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]; a space may replace the T)');
    expect(note("datetime", "2023-02-29T00:00")).toBe('type datetime: "2023-02-29T00:00" is not a real calendar date');
    expect(note("datetime", "2024-01-05T13:00:60")).toBe('type datetime: "2024-01-05T13:00:60" is not a real time of day');
    expect(note("datetime", "2024-01-05T13:00+24:00")).toBe('type datetime: "2024-01-05T13:00+24:00" has an impossible UTC offset');
  });

  it("names the rule, the cell and the row of each value failure", () => {
    const one = (cell: string, rule: Record<string, unknown>) => column(["ok", cell], rule);
    expect(one("b", { in_set: ["ok", "a"] }).findings).toEqual([{ where: 'row 2, column "v"', actual: "b", note: 'in_set: "b" is not one of "ok", "a" (exact text)' }]);
    expect(column(["1", "x"], { between: [0, 9] }).findings).toEqual([{ where: 'row 2, column "v"', actual: "x", note: 'between [0, 9]: "x" is not a number' }]);
    expect(column(["1", "10"], { between: [0, 9] }).findings).toEqual([{ where: 'row 2, column "v"', actual: "10", note: 'between [0, 9]: "10" is outside the range' }]);
    expect(one("x-1", { regex: "[a-z]+" }).findings).toEqual([{ where: 'row 2, column "v"', actual: "x-1", note: 'regex: "x-1" does not match "[a-z]+" as a whole' }]);
    expect(one("o", { min_length: 2 }).findings).toEqual([{ where: 'row 2, column "v"', actual: "o", note: "min_length 2: 1 character" }]);
    expect(one("okay", { max_length: 2 }).findings).toEqual([{ where: 'row 2, column "v"', actual: "okay", note: "max_length 2: 4 characters" }]);
    expect(column(["ab", "a"], { min_length: 3 }).findings?.[0]?.note).toBe("min_length 3: 2 characters");
    expect(column(["ab", "abcd"], { max_length: 1 }).findings?.[0]?.note).toBe("max_length 1: 2 characters");
  });

  it("says which rule failed in how many rows, with two examples and an ellipsis only beyond two", () => {
    const msg = (cells: string[]) => column(cells, { in_set: ["ok"] }).message;
    expect(msg(["ok", "a"])).toBe('artifact "out.csv" fails its schema: 1 problem in 2 rows: column "v": in_set fails in 1 row (row 2 "a")');
    expect(msg(["a", "b"])).toBe('artifact "out.csv" fails its schema: 2 problems in 2 rows: column "v": in_set fails in 2 rows (row 1 "a", row 2 "b")');
    expect(msg(["a", "b", "c"])).toBe('artifact "out.csv" fails its schema: 3 problems in 3 rows: column "v": in_set fails in 3 rows (row 1 "a", row 2 "b", …)');
    expect(column(["1", "5"], { between: [0, 1] }).message).toBe('artifact "out.csv" fails its schema: 1 problem in 2 rows: column "v": between fails in 1 row (row 2 "5")');
    for (const [rule, name] of [
      [{ between: [0, 1] }, "between"],
      [{ regex: "ok" }, "regex"],
      [{ min_length: 3 }, "min_length"],
      [{ max_length: 1 }, "max_length"],
    ] as const) {
      expect(column(["ok", "a"], rule).message, name).toMatch(new RegExp(`: column "v": ${name} fails in \\d rows? \\(`));
    }
  });

  it("not_null: names the rule and does not count the nulls as skipped", () => {
    const r = column(["1", ""], { not_null: true, type: "integer" });
    expect(r.message).toBe('artifact "out.csv" fails its schema: 1 problem in 2 rows: column "v": not_null fails in 1 row (row 2 "")');
    // A column of nothing but nulls under not_null alone fails not_null, and nothing else.
    const all = column(["", ""], { not_null: true });
    expect(all.message).toBe('artifact "out.csv" fails its schema: 2 problems in 2 rows: column "v": not_null fails in 2 rows (row 1 "", row 2 "")');
  });

  it("an all-null column names every value rule it has, and counts no nulls as skipped", () => {
    const all = column(["", "", ""], { type: "number" });
    expect(all.message).toBe('artifact "out.csv" fails its schema: 1 problem in 3 rows: column "v": type number: every one of the 3 cells is null, so there are no non-null values to check');
    expect(all.findings).toEqual([{ where: 'column "v"', note: "type number: every one of the 3 cells is null, so there are no non-null values to check" }]);
    expect(column([""], { max_length: 3 }).findings?.[0]?.note).toBe("max_length: every one of the 1 cell is null, so there are no non-null values to check");
    for (const [rule, names] of [
      [{ unique: true }, "unique"],
      [{ in_set: ["a"] }, "in_set"],
      [{ between: [0, 1] }, "between"],
      [{ regex: ".*" }, "regex"],
      [{ min_length: 0 }, "min_length"],
      [{ max_length: 1, unique: false }, "max_length"],
      [{ type: "date", unique: true, in_set: ["a"], between: [0, 1], regex: "a", min_length: 0, max_length: 1 }, "type date, unique, in_set, between, regex, min_length, max_length"],
    ] as const) {
      expect(column(["", ""], rule).findings?.[0]?.note, names).toBe(`${names}: every one of the 2 cells is null, so there are no non-null values to check`);
    }
  });

  it("a table with no rows: one finding, and no all-null failures for its rules", () => {
    const r = schema("order_id,region\n", { rules: { order_id: { type: "integer" } } });
    expect(r.message).toBe('artifact "out.csv" fails its schema: 1 problem in 0 rows: the table has no rows (only a header): nothing was checked');
    expect(r.findings).toEqual([{ where: "table", actual: "0 rows", note: "the table has no rows (only a header): nothing was checked" }]);
  });

  it("a rule on a missing column: the finding and the message", () => {
    const r = schema("a,b\n1,2\n", { rules: { c: { not_null: true } } });
    expect(r.message).toBe('artifact "out.csv" fails its schema: 1 problem in 1 row: column "c": rules name column "c", which the CSV does not have (its columns: "a", "b")');
    expect(r.findings).toEqual([{ where: 'column "c"', note: 'rules name column "c", which the CSV does not have (its columns: "a", "b")' }]);
  });

  it("header failures: the findings and the message", () => {
    const missing = schema("a,b\n1,2\n", { columns: ["a", "c"] });
    expect(missing.findings).toEqual([{ where: 'column "c"', actual: "a,b", note: 'required column "c" is missing' }]);
    const extra = schema("a,b\n1,2\n", { columns: ["a"], allow_extra_columns: false });
    expect(extra.message).toBe('artifact "out.csv" fails its schema: 1 problem in 1 row: column "b": column "b" is not one of the allowed columns ("a")');
    expect(extra.findings).toEqual([{ where: 'column "b"', note: 'column "b" is not one of the allowed columns ("a")' }]);
    const ordered = schema("b,a\n1,2\n", { columns: ["a", "b"], column_order: "ordered" });
    expect(ordered.message).toBe('artifact "out.csv" fails its schema: 1 problem in 1 row: the columns must appear in the order "a", "b"; found "b", "a"');
    expect(ordered.findings).toEqual([{ where: "header", actual: "b,a", note: 'the columns must appear in the order "a", "b"; found "b", "a"' }]);
    const exact = schema("b,a\n1,2\n", { columns: ["a", "b"], column_order: "exact" });
    expect(exact.findings).toEqual([{ where: "header", actual: "b,a", note: 'the columns must appear in the order "a", "b" and be the only columns; found "b", "a"' }]);
  });

  it("ordered: a missing column is reported as missing, not also as out of order", () => {
    const r = schema("a,b\n1,2\n", { columns: ["a", "x", "b"], column_order: "ordered" });
    expect(r.findings).toEqual([{ where: 'column "x"', actual: "a,b", note: 'required column "x" is missing' }]);
    expect(r.message).toBe('artifact "out.csv" fails its schema: 1 problem in 1 row: column "x": required column "x" is missing');
  });

  it("separates the failing rules with '; ' and shows eight of them, then how many more", () => {
    const header = Array.from({ length: 10 }, (_, i) => `c${i}`);
    const table = `${header.join(",")}\n${header.map(() => "x").join(",")}\n`;
    const rules = (n: number) => Object.fromEntries(header.slice(0, n).map((c) => [c, { in_set: ["ok"] }]));
    const part = (i: number) => `column "c${i}": in_set fails in 1 row (row 1 "x")`;
    const two = schema(table, { rules: rules(2) });
    expect(two.message).toBe(`artifact "out.csv" fails its schema: 2 problems in 1 row: ${part(0)}; ${part(1)}`);
    const eight = schema(table, { rules: rules(8) });
    expect(eight.message).toBe(`artifact "out.csv" fails its schema: 8 problems in 1 row: ${[0, 1, 2, 3, 4, 5, 6, 7].map(part).join("; ")}`);
    const ten = schema(table, { rules: rules(10) });
    expect(ten.message).toBe(`artifact "out.csv" fails its schema: 10 problems in 1 row: ${[0, 1, 2, 3, 4, 5, 6, 7].map(part).join("; ")}; and 2 more rule failures`);
    expect(schema(table, { rules: rules(9) }).message).toMatch(/"c7": in_set fails in 1 row \(row 1 "x"\); and 1 more rule failure$/);
  });

  it("a passing message says what was checked, and lists at most five columns with skipped nulls", () => {
    const table = "a,b,c,d,e,f,g\n1,1,1,1,1,1,1\n,,,,,,\n";
    const rules = (cols: string) => Object.fromEntries([...cols].map((c) => [c, { type: "integer" }]));
    expect(schema(table, { rules: rules("a") }).message).toBe('artifact "out.csv" satisfies its schema: 2 rows; rules on 1 column hold (1 null skipped in "a")');
    expect(schema(table, { rules: rules("abcde") }).message).toBe(
      'artifact "out.csv" satisfies its schema: 2 rows; rules on 5 columns hold (1 null skipped in "a"; 1 null skipped in "b"; 1 null skipped in "c"; 1 null skipped in "d"; 1 null skipped in "e")',
    );
    expect(schema(table, { rules: rules("abcdefg") }).message).toBe(
      'artifact "out.csv" satisfies its schema: 2 rows; rules on 7 columns hold (1 null skipped in "a"; 1 null skipped in "b"; 1 null skipped in "c"; 1 null skipped in "d"; 1 null skipped in "e"; and in 2 more columns)',
    );
    expect(schema(table, { rules: rules("abcdef") }).message).toMatch(/; and in 1 more column\)$/);
    expect(schema(table, { columns: ["a"] }).message).toBe('artifact "out.csv" satisfies its schema: 2 rows; the 1 required column present');
    expect(schema(table, { columns: ["a", "b"], column_order: "ordered" }).message).toBe('artifact "out.csv" satisfies its schema: 2 rows; the 2 required columns present (ordered)');
    expect(schema("a,b\n1,2\n", { columns: ["a", "b"], column_order: "exact" }).message).toBe('artifact "out.csv" satisfies its schema: 1 row; the 2 required columns present (exact)');
    // A failing message counts skipped nulls too.
    expect(schema(table, { rules: { a: { type: "integer" }, b: { in_set: ["2"] } } }).message).toBe(
      'artifact "out.csv" fails its schema: 1 problem in 2 rows (1 null skipped in "a"; 1 null skipped in "b"): column "b": in_set fails in 1 row (row 1 "1")',
    );
  });

  it("a passing result carries no findings", () => {
    expect(column(["a"], { not_null: true })).toEqual({ passed: true, message: 'artifact "out.csv" satisfies its schema: 1 row; rules on 1 column hold', publicMessage: 'artifact "out.csv" satisfies its schema: 1 row; rules on 1 column hold' });
  });

  it("guards a caller that skipped the schema: a pattern that does not compile fails its column", () => {
    const parsed = csvSchema.params.parse({ artifact: "out.csv", rules: { v: { regex: "a" } } });
    const r = csvSchema.run({ ...parsed, rules: { v: { regex: "(a)\\1" } } }, ctx({ artifacts: [file("out.csv", "v\na\n")] }));
    expect(r.passed).toBe(false);
    expect(r.findings).toHaveLength(1);
    expect(r.findings?.[0]?.where).toBe('column "v"');
    expect(r.findings?.[0]).not.toHaveProperty("actual");
    const note = r.findings?.[0]?.note ?? "";
    expect(note).toMatch(/not a valid RE2 regular expression/);
    expect(r.message).toBe(`artifact "out.csv" fails its schema: 1 problem in 1 row: column "v": regex fails in 1 row (${note})`);
  });
});

describe("csv_schema: each param issue, with its code and path", () => {
  const issues = (params: Record<string, unknown>) => rejects(params).error?.issues.map((i) => ({ code: i.code, path: i.path, message: i.message }));

  it("names the contradiction", () => {
    expect(issues({})).toEqual([{ code: "custom", path: [], message: "give columns, rules or both: there is nothing to check" }]);
    expect(issues({ column_order: "ordered", rules: { a: { not_null: true } } })).toEqual([{ code: "custom", path: ["columns"], message: 'required when column_order is "ordered"' }]);
    expect(issues({ columns: ["a"], column_order: "exact", allow_extra_columns: true })).toEqual([
      { code: "custom", path: ["allow_extra_columns"], message: 'cannot be true with column_order "exact" (the header must be exactly `columns`)' },
    ]);
    expect(issues({ allow_extra_columns: false, rules: { a: { not_null: true } } })).toEqual([
      { code: "custom", path: ["allow_extra_columns"], message: "false needs `columns`: the columns that are not extra" },
    ]);
    expect(issues({ columns: ["a", "a"] })).toEqual([{ code: "custom", path: ["columns"], message: "names a column twice" }]);
    expect(rejects({ rules: { code: { regex: "(a)\\1" } } }).error?.issues[0]?.code).toBe("custom");
  });

  it("accepts what is not a contradiction", () => {
    expect(rejects({ columns: ["a"], column_order: "ordered", allow_extra_columns: true }).success).toBe(true);
    expect(rejects({ columns: ["a"], allow_extra_columns: true }).success).toBe(true);
    expect(rejects({ rules: { a: { between: [5, 5] } } }).success).toBe(true);
    expect(rejects({ rules: { a: { min_length: 2, max_length: 2 } } }).success).toBe(true);
  });
});
