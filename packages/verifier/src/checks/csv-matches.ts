import { z } from "zod";
import { defineCheck } from "../define";
import { preview } from "../format";
import { clipCell, type CsvGrid, delimiterParam, listNames, loadCheckerCsv, loadCsv, plural, quoteName } from "../lib/csv";
import { differenceNote, exactInteger, floatsClose, type Num, numbersClose, parseNumber, type Tolerance, toleranceParams } from "../lib/numbers";
import type { CheckResult, Finding } from "../types";

// A produced table against the client's expected table (usually hidden), the way pandas/polars frame
// comparisons and testlib checkers judge one: cell by cell, numbers within atol/rtol, text exactly,
// nulls only equal to nulls. Everything a model may see (publicMessage, `where`, `input`, `actual`) is
// built from the produced file, counts and column names only; expected cells go to `message`,
// `expected` and `note`.

const MESSAGE_DIFFERENCES = 5;

const params = z
  .strictObject({
    artifact: z.string().min(1).describe("The produced CSV, a path relative to the output directory."),
    expected_file: z.string().min(1).describe("The checker file holding the expected CSV (hidden material)."),
    row_order: z
      .enum(["strict", "any", "key"])
      .default("strict")
      .describe('"strict": row i against row i; "any": the rows as a multiset; "key": rows matched by the `key` columns.'),
    key: z.array(z.string()).min(1).max(20).optional().describe('Key column names; required with row_order "key".'),
    columns: z
      .enum(["exact", "any_order", "expected_subset"])
      .default("exact")
      .describe('"exact": same names in the same order; "any_order": the same set; "expected_subset": extra produced columns are ignored.'),
    ...toleranceParams,
    null_values: z.array(z.string()).max(50).default([""]).describe('Cells that mean "missing"; a null matches only a null.'),
    trim: z.boolean().default(false).describe("Strip surrounding whitespace from cells and column names before comparing."),
    case_sensitive: z.boolean().default(true).describe("Compare text (and column names) case-sensitively."),
    delimiter: delimiterParam,
    max_findings: z.number().int().min(1).max(50).default(10),
  })
  .superRefine((p, ctx) => {
    if (p.row_order === "key" && p.key === undefined) ctx.addIssue({ code: "custom", path: ["key"], message: 'required when row_order is "key"' });
    if (p.row_order !== "key" && p.key !== undefined) {
      ctx.addIssue({ code: "custom", path: ["key"], message: `only used with row_order "key" (row_order is "${p.row_order}")` });
    }
    if (p.key !== undefined && new Set(p.key).size !== p.key.length) ctx.addIssue({ code: "custom", path: ["key"], message: "names a column twice" });
  });

type Params = z.output<typeof params>;

/** How the params read cells: normalisation, nulls, tolerance (csv_repair reads cells the same way). */
export interface Reader {
  norm(cell: string): string;
  fold(text: string): string;
  isNull(normed: string): boolean;
  tol: Tolerance;
}

export function readerFor(p: Pick<Params, "null_values" | "trim" | "case_sensitive" | "atol" | "rtol">): Reader {
  const nulls = new Set(p.null_values.map((v) => (p.trim ? v.trim() : v)));
  return {
    norm: p.trim ? (c) => c.trim() : (c) => c,
    fold: p.case_sensitive ? (t) => t : (t) => t.toLowerCase(),
    isNull: (c) => nulls.has(c),
    tol: { atol: p.atol, rtol: p.rtol },
  };
}

/** Whether two cells match under the params. */
export function cellsMatch(expected: string, actual: string, r: Reader): boolean {
  // Stryker disable next-line ConditionalExpression: equivalent, a fast path: the checks below also match two identical cells
  if (expected === actual) return true;
  const e = r.norm(expected);
  const a = r.norm(actual);
  const eNull = r.isNull(e);
  const aNull = r.isNull(a);
  if (eNull || aNull) return eNull && aNull;
  // Stryker disable next-line ConditionalExpression: equivalent, a fast path: equal numbers are close and equal texts fold alike
  if (e === a) return true;
  const en = parseNumber(e);
  const an = parseNumber(a);
  // Tolerance is for numbers only: text never gets "close enough".
  if (en !== null && an !== null) return numbersClose(an, en, r.tol);
  // A number never folds to the same text as a non-number: lower-casing keeps a number a number (E -> e is
  // the only letter it changes), so this compares two texts, or a number with a text and says no.
  return r.fold(e) === r.fold(a);
}

/** Why two cells that do not match differ, for a finding's note (reveal "full"); only built for shown findings. */
export function diffNote(expected: string, actual: string, r: Reader): string {
  const e = r.norm(expected);
  const a = r.norm(actual);
  if (r.isNull(e)) return "expected a null (missing value), found a value";
  if (r.isNull(a)) return `expected a value, found a null (${JSON.stringify(a)})`;
  const en = parseNumber(e);
  const an = parseNumber(a);
  if (en !== null && an !== null) return numberNote(an, en, r.tol);
  if (en !== null) return "expected a number, found text (numbers are plain digits: no thousands separators, units or NaN)";
  if (an !== null) return "expected text, found a number";
  if (e.trim() === a.trim()) return "text differs only in surrounding whitespace";
  if (e.toLowerCase() === a.toLowerCase()) return "text differs only in letter case";
  return "text differs";
}

function numberNote(actual: Num, expected: Num, tol: Tolerance): string {
  // Past 2^53 the doubles differenceNote works with may be equal; the integers are not.
  if (actual.kind === "int" && expected.kind === "int") return `integers differ by ${actual.value - expected.value} (integers are compared exactly)`;
  return differenceNote(actual, expected, tol);
}

const PLAIN_INT = /^(?:0|-?[1-9]\d{0,14})$/;

/** A cell as a hashable value with the same equality as cellsMatch at zero tolerance. */
export function canonCell(cell: string, r: Reader): string {
  const c = r.norm(cell);
  // Stryker disable next-line StringLiteral: equivalent, any key that no number ("n...") or text ("t...") key can be
  if (r.isNull(c)) return "\u0000";
  // Already the canonical spelling of a safe integer (most ids): skip parsing.
  // Stryker disable next-line ConditionalExpression: equivalent, a speed-up: parsing gives the same key
  if (PLAIN_INT.test(c)) return `n${c}`;
  const n = parseNumber(c);
  if (n === null) return `t${r.fold(c)}`;
  // An integer-valued float is the integer it names, as numbersClose reads it: 1e21 is 10^21 (String() would write 1e+21).
  return `n${exactInteger(n) ?? n.value}`;
}

/** Joins cells into one map key without ambiguity: each is prefixed by its length. */
export function joinCells(cells: readonly string[]): string {
  // Stryker disable next-line StringLiteral: equivalent, a prefix shared by every key changes no equality
  let key = "";
  for (const c of cells) key += `${c.length}:${c}`;
  return key;
}

// Cell classes for the merge in "any" mode, in sort order: nulls, numbers (by value), text.
const NULL = 0;
const FLOAT = 1;
const INT = 2;
const BIG = 3;
const TEXT = 4;
function classOf(kind: number): number {
  if (kind === NULL) return 0;
  // Stryker disable next-line EqualityOperator: equivalent, swapping the number and text classes is another strict order, and the sort and the merge share it
  return kind === TEXT ? 2 : 1;
}

/**
 * The cells of some rows, read once and stored flat (a kind, a double, a text per cell): no object per
 * cell, so 100,000 leftover rows do not swamp the garbage collector while they are sorted.
 */
class ReadRows {
  readonly kind: Uint8Array;
  readonly value: Float64Array;
  readonly text: string[];
  /** Integers beyond 2^53, kept exact. */
  readonly big = new Map<number, bigint>();

  constructor(
    /** The table row behind each read row. */
    readonly rows: number[],
    readonly width: number,
    t: CsvGrid,
    cols: readonly number[],
    r: Reader,
  ) {
    const n = rows.length * width;
    this.kind = new Uint8Array(n);
    this.value = new Float64Array(n);
    // Stryker disable next-line ArrayDeclaration,StringLiteral: equivalent, only TEXT cells' text is read (the fill keeps the array packed)
    this.text = new Array<string>(n).fill("");
    for (let k = 0; k !== rows.length; k++) {
      for (let j = 0; j < width; j++) {
        const at = k * width + j;
        const cell = r.norm(t.cell(rows[k] ?? 0, cols[j] ?? 0));
        if (r.isNull(cell)) continue;
        const num = parseNumber(cell);
        if (num === null) {
          this.kind[at] = TEXT;
          this.text[at] = r.fold(cell);
        } else if (num.kind === "float") {
          this.kind[at] = FLOAT;
          this.value[at] = num.value;
        } else {
          const v = Number(num.value);
          this.value[at] = v;
          if (Number.isSafeInteger(v)) this.kind[at] = INT;
          else {
            this.kind[at] = BIG;
            this.big.set(at, num.value);
          }
        }
      }
    }
  }

  bigAt(at: number): bigint {
    return this.big.get(at) ?? BigInt(this.value[at] ?? 0);
  }
}

/** Orders read row `x` of `a` against read row `y` of `b`, cell by cell. */
function compareRead(a: ReadRows, x: number, b: ReadRows, y: number): number {
  for (let j = 0; j !== a.width; j++) {
    const i = x * a.width + j;
    const k = y * b.width + j;
    const ka = a.kind[i] ?? NULL;
    const kb = b.kind[k] ?? NULL;
    const d = classOf(ka) - classOf(kb);
    if (d !== 0) return d;
    if (ka === TEXT) {
      // Stryker disable next-line StringLiteral: equivalent, never used: the index is in range
      const ta = a.text[i] ?? "";
      // Stryker disable next-line StringLiteral: equivalent, never used: the index is in range
      const tb = b.text[k] ?? "";
      if (ta !== tb) {
        // Stryker disable next-line EqualityOperator: equivalent, any strict order of texts works: the sort and the merge use this same comparison
        return ta < tb ? -1 : 1;
      }
    } else if (ka === BIG && kb === BIG) {
      const ba = a.bigAt(i);
      const bb = b.bigAt(k);
      // Stryker disable next-line ConditionalExpression: equivalent, equal integers then only change the sort's tie order: the merge asks readMatch first
      if (ba !== bb) {
        // Stryker disable next-line EqualityOperator: equivalent, any strict order of these integers works: the sort and the merge use this same comparison
        return ba < bb ? -1 : 1;
      }
    } else {
      // Numbers, or two nulls: a null holds the value 0.
      const va = a.value[i] ?? 0;
      const vb = b.value[k] ?? 0;
      if (va !== vb) return va - vb;
    }
  }
  return 0;
}

/** The same equality as cellsMatch, on read rows: expected row `x` of `e` against produced row `y` of `a`. */
function readMatch(e: ReadRows, x: number, a: ReadRows, y: number, tol: Tolerance): boolean {
  for (let j = 0; j < e.width; j++) {
    const i = x * e.width + j;
    const k = y * a.width + j;
    const ke = e.kind[i] ?? NULL;
    const ka = a.kind[k] ?? NULL;
    if (classOf(ke) !== classOf(ka)) return false;
    // Two nulls hold the value 0, so they pass the number comparison below.
    if (ke === TEXT) {
      if (e.text[i] !== a.text[k]) return false;
      continue;
    }
    const ve = e.value[i] ?? 0;
    const va = a.value[k] ?? 0;
    // numbersClose's rule: an integer beyond 2^53 only equals the same integer exactly (a float only when
    // it is that integer); everything else within tolerance.
    if (ke === BIG || ka === BIG) {
      // Only a float can hold a non-integer value; it equals no integer.
      if (!Number.isInteger(ve) || !Number.isInteger(va)) return false;
      if (e.bigAt(i) !== a.bigAt(k)) return false;
    } else if (!floatsClose(va, ve, tol)) return false;
  }
  return true;
}

interface Column {
  name: string;
  expected: number;
  produced: number;
}

interface Tally {
  compared: number;
  cellDiffs: number;
  rowsWithDiffs: number;
  missing: number;
  extra: number;
  duplicates: number;
}

type Kind = "duplicate" | "cell" | "missing" | "extra";

/** Findings by kind, each list capped; merged at the end so that one kind cannot crowd out the others. */
class Collector {
  readonly header: Finding[] = [];
  private readonly byKind: Record<Kind, Finding[]> = { duplicate: [], cell: [], missing: [], extra: [] };
  constructor(private readonly cap: number) {}
  /** Takes a thunk: past the cap nothing is built, so a table of 100,000 missing rows stays cheap. */
  add(kind: Kind, make: () => Finding): void {
    const list = this.byKind[kind];
    // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, only saves work: merged() takes at most cap findings in all, so at most cap of one kind
    if (list.length < this.cap) list.push(make());
  }
  /** Header findings first, then the other kinds in turn, so the first few show every kind of problem. */
  merged(): Finding[] {
    const out = this.header.slice(0, this.cap);
    const lists = Object.values(this.byKind);
    // Ends at the first round that takes nothing: every list is used up, or `out` is full.
    for (let i = 0; ; i++) {
      let took = false;
      for (const list of lists) {
        const f = list[i];
        if (f !== undefined && out.length < this.cap) {
          out.push(f);
          took = true;
        }
      }
      if (!took) break;
    }
    return out;
  }
}

function where(row: number, column: string): string {
  return `row ${row}, column ${quoteName(column)}`;
}

/** "region=North, total=10.5": the row's cells in the given columns, bounded. */
function rowPreview(t: CsvGrid, row: number, columns: readonly Column[], at: At): string {
  const text = columns.map((c) => `${c.name}=${clipCell(t.cell(row, at(c)), 40)}`).join(", ");
  return clipCell(text, 200);
}

export const csvMatches = defineCheck({
  description:
    'A produced CSV artifact matches an expected CSV (a checker file, usually hidden) cell by cell. Cells compare as numbers when both parse as numbers (integers exactly at any size, so "007" equals "7"; decimals within atol + rtol × |expected|), otherwise as exact text ("1,000" is text, "NaN" equals only "NaN"); a null (a `null_values` cell) matches only a null. Params: artifact (required), expected_file (required), row_order "strict" (default) | "any" | "key" (with key: [columns]; duplicate keys fail), columns "exact" (default) | "any_order" | "expected_subset", atol (default 1e-12), rtol (default 1e-9), null_values (default [""]), trim (default false), case_sensitive (default true), delimiter (default ","), max_findings (default 10, 1-50). An expected file with no data rows is an invalid check.',
  params,
  example: { artifact: "clean.csv", expected_file: "expected_clean.csv", row_order: "key", key: ["order_id"], atol: 0.005 },
  publicParams: ["artifact", "row_order", "key", "columns", "atol", "rtol", "null_values", "trim", "case_sensitive", "delimiter"],
  checkerFiles: (p) => [p.expected_file],
  run(p, ctx) {
    const opts = { delimiter: p.delimiter };
    const expected = loadCheckerCsv(ctx, p.expected_file, opts);
    if (!expected.ok) return misconfigured(expected.message, "its expected file could not be read");
    if (expected.value.rowCount === 0) {
      return misconfigured(`checker file ${JSON.stringify(p.expected_file)} has a header but no data rows: an empty expected table would pass vacuously`, "its expected file has no rows");
    }
    const produced = loadCsv(ctx, p.artifact, opts);
    if (!produced.ok) return { passed: false, message: produced.message, publicMessage: produced.message };
    return compareTables(p, expected.value, produced.value);
  },
});

function misconfigured(message: string, why: string): CheckResult {
  return { passed: false, message: `invalid check: ${message}`, publicMessage: `the check is misconfigured (${why}); the goal's checker files must be fixed, not the program` };
}

function compareTables(p: Params, exp: CsvGrid, prod: CsvGrid): CheckResult {
  const r = readerFor(p);
  const art = JSON.stringify(p.artifact);
  const headerName = (name: string) => r.fold(r.norm(name));

  const producedIndex = new Map<string, number>();
  for (const [i, name] of prod.header.entries()) {
    const k = headerName(name);
    if (producedIndex.has(k)) {
      // Stryker disable next-line StringLiteral: equivalent, never used: the index is in range
      const m = `artifact ${art}: columns ${quoteName(name)} and ${quoteName(prod.header[producedIndex.get(k) ?? 0] ?? "")} are the same name once trimmed/case-folded; column names must be unique`;
      return { passed: false, message: m, publicMessage: m };
    }
    producedIndex.set(k, i);
  }
  const expectedNames = new Set<string>();
  for (const name of exp.header) {
    const k = headerName(name);
    if (expectedNames.has(k)) return misconfigured(`checker file ${JSON.stringify(p.expected_file)} names column ${quoteName(name)} twice once trimmed/case-folded`, "its expected file has duplicate columns");
    expectedNames.add(k);
  }

  // Columns compared: the expected ones the produced file has, by name (so a reordering is reported once,
  // in the header, not as a difference in every cell).
  const columns: Column[] = [];
  const missingColumns: string[] = [];
  for (const [ei, name] of exp.header.entries()) {
    const pi = producedIndex.get(headerName(name));
    if (pi === undefined) missingColumns.push(name);
    else columns.push({ name, expected: ei, produced: pi });
  }
  const extraColumns = p.columns === "expected_subset" ? [] : prod.header.filter((n) => !expectedNames.has(headerName(n)));
  const reordered =
    p.columns === "exact" && missingColumns.length === 0 && extraColumns.length === 0 && columns.some((c) => c.expected !== c.produced);

  const out = new Collector(p.max_findings);
  const headerProblems: string[] = [];
  if (missingColumns.length > 0) headerProblems.push(`missing ${plural(missingColumns.length, "column")} ${listNames(missingColumns, 5)}`);
  if (extraColumns.length > 0) headerProblems.push(`unexpected ${plural(extraColumns.length, "column")} ${listNames(extraColumns, 5)}`);
  if (reordered) headerProblems.push(`columns in a different order (expected ${listNames(exp.header, 8)})`);
  if (headerProblems.length > 0) {
    out.header.push({
      where: "header",
      actual: clipCell(prod.header.join(","), 200),
      expected: clipCell(exp.header.join(","), 200),
      note: headerProblems.join("; "),
    });
  }

  if (exp.rowCount !== prod.rowCount) {
    out.header.push({
      where: "row count",
      actual: String(prod.rowCount),
      expected: String(exp.rowCount),
      // Stryker disable next-line EqualityOperator: <= is equivalent, the counts differ here; >= fails the fewer/more tests
      note: `${plural(Math.abs(exp.rowCount - prod.rowCount), "row")} ${prod.rowCount < exp.rowCount ? "fewer" : "more"} than expected`,
    });
  }

  const tally: Tally = { compared: 0, cellDiffs: 0, rowsWithDiffs: 0, missing: 0, extra: 0, duplicates: 0 };
  // Same columns at the same positions: a row whose raw text is identical in both files needs no cell look.
  // Only a speed-up while the columns sit at the same positions: then raw-identical rows are cell-identical.
  // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: equivalent, with a column missing or added at the end no row is raw-identical to an expected one (their field counts differ) or the header already fails the table
  const sameWidth = exp.header.length === prod.header.length && columns.length === exp.header.length;
  // Stryker disable next-line ConditionalExpression,ArrowFunction: equivalent, false only turns the speed-up off (rows are then compared cell by cell); true fails the reordered-column tests
  const sameLayout = sameWidth && columns.every((c) => c.expected === c.produced);
  const cmp: Comparison = { r, exp, prod, columns, sameLayout, out, tally };
  const notes: string[] = [];
  if (columns.length === 0) {
    notes.push("no expected column is in the produced file, so no rows were compared");
  } else if (p.row_order === "key") {
    const problem = byKey(p, cmp);
    if (problem !== null) return problem;
  } else if (p.row_order === "any") {
    asMultiset(cmp);
  } else {
    byPosition(cmp);
    if (exp.rowCount !== prod.rowCount) notes.push('with row_order "strict" rows are compared by position, so a dropped or added row shifts every row after it');
  }
  if (prod.rowCount === 0) notes.unshift("the produced table has no data rows");

  // No compared column means every expected column is missing, a header problem: such a table fails too.
  const passed = headerProblems.length === 0 && tally.cellDiffs === 0 && tally.missing === 0 && tally.extra === 0 && tally.duplicates === 0;
  const shape = `${plural(exp.rowCount, "row")}, ${plural(columns.length, "column")} compared`;
  const how = `row order ${p.row_order}${p.key ? ` by ${listNames(p.key)}` : ""}, columns ${p.columns}, atol ${p.atol}, rtol ${p.rtol}`;
  if (passed) {
    return {
      passed: true,
      message: `artifact ${art} matches checker file ${JSON.stringify(p.expected_file)}: ${shape} (${how})`,
      publicMessage: `artifact ${art} matches the expected table: ${shape} (${how})`,
    };
  }

  const counts: string[] = [];
  if (p.row_order === "any") counts.push(`${tally.compared} of ${plural(exp.rowCount, "expected row")} matched`);
  else counts.push(`${plural(tally.cellDiffs, "cell differs", "cells differ")} in ${tally.rowsWithDiffs} of ${plural(tally.compared, "compared row")}`);
  counts.push(`${plural(tally.missing, "expected row")} missing`, `${tally.extra} extra`);
  if (tally.duplicates > 0) counts.push(plural(tally.duplicates, "duplicate key"));
  const summary = [
    counts.join("; "),
    `produced ${plural(prod.rowCount, "row")}, expected ${exp.rowCount}`,
    headerProblems.length > 0 ? `header: ${headerProblems.join("; ")}` : "",
    ...notes,
  ]
    .filter((s) => s !== "")
    .join("; ");
  const findings = out.merged();
  const shown = findings.slice(0, MESSAGE_DIFFERENCES);
  const detail = shown.map(describeFinding).join("; ");
  const locators = shown.map((f) => f.where).join("; ");
  return {
    passed: false,
    message: `artifact ${art} does not match checker file ${JSON.stringify(p.expected_file)}: ${summary}. First differences: ${detail}`,
    publicMessage: `artifact ${art} does not match the expected table: ${summary}. First differences at: ${locators}`,
    findings,
  };
}

/** testlib style: where, then expected and found. */
function describeFinding(f: Finding): string {
  let text = f.where;
  if (f.input !== undefined) text += ` (${f.input})`;
  const values: string[] = [];
  if (f.expected !== undefined) values.push(`expected ${preview(f.expected)}`);
  if (f.actual !== undefined) values.push(`found ${preview(f.actual)}`);
  if (values.length > 0) text += `: ${values.join(", ")}`;
  // Stryker disable next-line ConditionalExpression: equivalent, every csv_matches finding has a note
  if (f.note !== undefined) text += ` (${f.note})`;
  return text;
}

/** Where a compared column is in one of the two files. */
type At = (c: Column) => number;
const inExpected: At = (c) => c.expected;
const inProduced: At = (c) => c.produced;

/** Everything one comparison of two tables shares. */
interface Comparison {
  r: Reader;
  exp: CsvGrid;
  prod: CsvGrid;
  columns: Column[];
  sameLayout: boolean;
  out: Collector;
  tally: Tally;
}

/**
 * Compares expected row `ei` with produced row `pi` over `columns`.
 * `input` builds the row's key only when a cell differs: most rows match, and building it for each is costly.
 */
function compareRow(cmp: Comparison, ei: number, pi: number, columns: readonly Column[], input?: () => string): void {
  const { r, exp, prod, out, tally } = cmp;
  tally.compared++;
  // Stryker disable next-line ConditionalExpression: equivalent, a speed-up: raw-identical rows at the same positions have identical cells
  if (cmp.sameLayout && exp.raw(ei) === prod.raw(pi)) return;
  let differs = false;
  for (const c of columns) {
    const ev = exp.cell(ei, c.expected);
    const av = prod.cell(pi, c.produced);
    if (cellsMatch(ev, av, r)) continue;
    differs = true;
    tally.cellDiffs++;
    out.add("cell", () => ({ where: where(pi + 1, c.name), ...(input !== undefined ? { input: input() } : {}), actual: clipCell(av), expected: clipCell(ev), note: diffNote(ev, av, r) }));
  }
  if (differs) tally.rowsWithDiffs++;
}

function byPosition(cmp: Comparison): void {
  const { exp, prod, columns, out, tally } = cmp;
  const paired = Math.min(exp.rowCount, prod.rowCount);
  for (let i = 0; i < paired; i++) compareRow(cmp, i, i, columns);
  for (let i = paired; i < exp.rowCount; i++) {
    tally.missing++;
    out.add("missing", () => ({ where: `expected row ${i + 1}`, expected: rowPreview(exp, i, columns, inExpected), note: "the produced table ends before this row" }));
  }
  for (let i = paired; i < prod.rowCount; i++) {
    tally.extra++;
    out.add("extra", () => ({ where: `row ${i + 1}`, actual: rowPreview(prod, i, columns, inProduced), note: "a row beyond the expected table's end" }));
  }
}

function byKey(p: Params, cmp: Comparison): CheckResult | null {
  const { r, exp, prod, columns, out, tally } = cmp;
  const keys: Column[] = [];
  // Stryker disable next-line ArrayDeclaration: equivalent, the params require a key with row_order "key"
  for (const k of p.key ?? []) {
    // Compared columns have distinct names once trimmed/case-folded, so at most one is the key.
    const col = columns.find((c) => r.fold(r.norm(c.name)) === r.fold(r.norm(k)));
    if (col !== undefined) {
      keys.push(col);
      continue;
    }
    if (!exp.header.some((n) => r.fold(r.norm(n)) === r.fold(r.norm(k)))) {
      return misconfigured(`key column ${quoteName(k)} is not in checker file ${JSON.stringify(p.expected_file)}`, `key column ${quoteName(k)} is not in its expected file`);
    }
    const m = `artifact ${JSON.stringify(p.artifact)} has no key column ${quoteName(k)} (its columns: ${listNames(prod.header)}), so rows cannot be matched`;
    return { passed: false, message: m, publicMessage: m };
  }
  const keyOf = (t: CsvGrid, row: number, at: At) => joinCells(keys.map((k) => canonCell(t.cell(row, at(k)), r)));
  const index = (t: CsvGrid, at: At, expectedSide: boolean) => {
    const firstAt = new Map<string, number>();
    for (let i = 0; i < t.rowCount; i++) {
      const k = keyOf(t, i, at);
      const first = firstAt.get(k);
      if (first === undefined) {
        firstAt.set(k, i);
        continue;
      }
      tally.duplicates++;
      const w = expectedSide ? `expected row ${i + 1}` : `row ${i + 1}`;
      const note = expectedSide ? `duplicate key in the expected file (first at expected row ${first + 1})` : `duplicate key (first at row ${first + 1})`;
      out.add("duplicate", () => ({ where: w, input: rowPreview(t, i, keys, at), note }));
    }
    return firstAt;
  };
  const expectedAt = index(exp, inExpected, true);
  const producedAt = index(prod, inProduced, false);

  const others = columns.filter((c) => !keys.includes(c));
  for (const [k, ei] of expectedAt) {
    const pi = producedAt.get(k);
    if (pi === undefined) {
      tally.missing++;
      out.add("missing", () => ({ where: `expected row ${ei + 1}`, input: rowPreview(exp, ei, keys, inExpected), expected: rowPreview(exp, ei, others, inExpected), note: "no produced row has this key" }));
      continue;
    }
    compareRow(cmp, ei, pi, others, () => rowPreview(prod, pi, keys, inProduced));
  }
  for (const [k, pi] of producedAt) {
    if (expectedAt.has(k)) continue;
    tally.extra++;
    out.add("extra", () => ({ where: `row ${pi + 1}`, input: rowPreview(prod, pi, keys, inProduced), actual: rowPreview(prod, pi, others, inProduced), note: "no expected row has this key" }));
  }
  return null;
}

/**
 * Pairs rows in two passes: identical text through a hash (usually nearly every row, and cheap), then a
 * merge of the sorted leftovers that pairs rows with equal values or values within tolerance. Identical
 * rows are also equal-valued, so the first pass never steals a pairing the merge would have made.
 */
/** Beyond this many (missing × extra) row pairs, the search for pairs within tolerance is skipped. */
const FUZZY_PAIRS_MAX = 4_000_000;

function asMultiset(cmp: Comparison): void {
  const { r, exp, prod, columns, out, tally } = cmp;
  const textKey = cmp.sameLayout
    ? (t: CsvGrid, row: number) => t.raw(row)
    : (t: CsvGrid, row: number, at: At) => joinCells(columns.map((c) => r.norm(t.cell(row, at(c)))));

  const pending = new Map<string, number[]>();
  for (let i = 0; i < exp.rowCount; i++) {
    const k = textKey(exp, i, inExpected);
    const list = pending.get(k);
    if (list === undefined) pending.set(k, [i]);
    else list.push(i);
  }
  const leftProduced: number[] = [];
  for (let i = 0; i < prod.rowCount; i++) {
    const list = pending.get(textKey(prod, i, inProduced));
    if (list !== undefined && list.length > 0) {
      list.pop();
      tally.compared++;
    } else leftProduced.push(i);
  }
  const leftExpected = [...pending.values()].flat().sort((x, y) => x - y);

  // The leftovers' cells are read once. Sorted by value, rows with equal values (1.0 and 1, "007" and 7)
  // end up side by side, and so do rows within tolerance of each other, so one merge pairs them.
  const es = new ReadRows(leftExpected, columns.length, exp, columns.map((c) => c.expected), r);
  const ps = new ReadRows(leftProduced, columns.length, prod, columns.map((c) => c.produced), r);
  const eOrder = leftExpected.map((_, k) => k).sort((x, y) => compareRead(es, x, es, y));
  const pOrder = leftProduced.map((_, k) => k).sort((x, y) => compareRead(ps, x, ps, y));

  // Read-row indexes left unpaired by the merge.
  const missingRead: number[] = [];
  const extraRead: number[] = [];
  let i = 0;
  let j = 0;
  while (i < eOrder.length && j < pOrder.length) {
    const x = eOrder[i] ?? 0;
    const y = pOrder[j] ?? 0;
    if (readMatch(es, x, ps, y, r.tol)) {
      tally.compared++;
      i++;
      j++;
    } else if (compareRead(es, x, ps, y) < 0) {
      missingRead.push(x);
      i++;
    } else {
      extraRead.push(y);
      j++;
    }
  }
  for (; i < eOrder.length; i++) missingRead.push(eOrder[i] ?? 0);
  for (; j < pOrder.length; j++) extraRead.push(pOrder[j] ?? 0);
  // The merge pairs neighbours in sort order, which values within tolerance need not be (0.44000000000000006
  // sorts after 0.43999999999999995 whatever the next column says). What is left is paired by search,
  // while that stays affordable: a correct table must not fail for the order of its float noise.
  // (With nothing left on one side the loop finds nothing, cheaply.)
  if (missingRead.length * extraRead.length <= FUZZY_PAIRS_MAX) {
    for (let m = missingRead.length - 1; m >= 0; m--) {
      const hit = extraRead.findIndex((y) => readMatch(es, missingRead[m] ?? 0, ps, y, r.tol));
      if (hit < 0) continue;
      extraRead.splice(hit, 1);
      missingRead.splice(m, 1);
      tally.compared++;
    }
  }
  const missing = missingRead.map((x) => leftExpected[x] ?? 0);
  const extra = extraRead.map((y) => leftProduced[y] ?? 0);
  missing.sort((a, b) => a - b);
  extra.sort((a, b) => a - b);
  tally.missing = missing.length;
  tally.extra = extra.length;
  for (const ei of missing) {
    out.add("missing", () => ({ where: `expected row ${ei + 1}`, expected: rowPreview(exp, ei, columns, inExpected), note: "no produced row matches this expected row" }));
  }
  for (const pi of extra) {
    out.add("extra", () => ({ where: `row ${pi + 1}`, actual: rowPreview(prod, pi, columns, inProduced), note: "matches no expected row" }));
  }
}
