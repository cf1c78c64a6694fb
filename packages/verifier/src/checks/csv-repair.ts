import { z } from "zod";
import { defineCheck } from "../define";
import { preview } from "../format";
import { clipCell, type CsvGrid, delimiterChar, delimiterParam, listNames, loadCheckerCsv, loadCsv, loadInputCsv, plural, quoteName } from "../lib/csv";
import { toleranceParams } from "../lib/numbers";
import type { CheckResult, Finding } from "../types";
import { canonCell, cellsMatch, diffNote, joinCells, type Reader, readerFor } from "./csv-matches";

// A cleaning job judged the way data-repair benchmarks (HoloClean, Raha/Baran, BClean) judge one: over
// three tables, the dirty input, the program's output and the client's clean answer, cell by cell.
//   a cell "needed fixing" when the input's value is not the expected one;
//   it "changed" when the output's value is not the input's;
//   it is "right" when the output's value is the expected one;
// recall = cells that needed fixing and are right / cells that needed fixing,
// precision = changed cells that are right / changed cells, accuracy = right cells / all scored cells.
// Cells compare as csv_matches compares them (numbers by value within atol/rtol, text exactly, a null only
// equal to a null), the same rule for all three comparisons. Rows are not scored by the thresholds: a
// missing, extra or duplicated row fails the check outright, as a header that differs does.
//
// What a model may see (publicMessage, `where`, `input`, `actual`) comes from the produced file, the input
// file (which the program already has) and counts; expected cells go only to `message`, `expected`, `note`.

const MESSAGE_CELLS = 5;

const ratio = z.number().gt(0).max(1);

const params = z
  .strictObject({
    artifact: z.string().min(1).describe("The produced (cleaned) CSV, a path relative to the output directory."),
    expected_file: z.string().min(1).describe("The checker file holding the clean CSV (hidden material)."),
    input_file: z.string().min(1).describe("The goal's input file holding the dirty CSV the program was asked to clean."),
    key: z
      .array(z.string())
      .min(1)
      .max(20)
      .optional()
      .describe("Key column names matching rows across the three tables (numbers by value); without it, row i of each table is the same record."),
    min_recall: ratio.describe("Required, in (0, 1]: the share of the cells that needed fixing that must end right. A copy of the input scores 0."),
    min_precision: ratio.default(1).describe("In (0, 1], default 1: the share of changed cells that must end right (1: no repair may be wrong and no good cell broken)."),
    min_accuracy: ratio.optional().describe("In (0, 1]: the share of all scored cells that must be right (no separate bar when omitted)."),
    ...toleranceParams,
    null_values: z.array(z.string()).max(50).default([""]).describe('Cells that mean "missing"; a null matches only a null.'),
    trim: z.boolean().default(false).describe("Strip surrounding whitespace from cells and column names before comparing."),
    case_sensitive: z.boolean().default(true).describe("Compare text (and column names) case-sensitively."),
    delimiter: delimiterParam,
    input_delimiter: delimiterChar.optional().describe("The input file's delimiter (default: delimiter)."),
    max_findings: z.number().int().min(1).max(50).default(10),
  })
  .superRefine((p, ctx) => {
    if (p.key !== undefined && new Set(p.key).size !== p.key.length) ctx.addIssue({ code: "custom", path: ["key"], message: "names a column twice" });
  });

type Params = z.output<typeof params>;

/** Wrong cells by what went wrong; then the row problems. */
const KINDS = ["broken", "wrong", "unfixed", "missing", "extra", "duplicate"] as const;
type Kind = (typeof KINDS)[number];

const CELL_NOTES: Record<"broken" | "wrong" | "unfixed", string> = {
  broken: "a good cell broken: the input's value was already right",
  wrong: "a wrong repair: changed, but not to the expected value",
  unfixed: "left unfixed: the input's value was kept",
};

/** Findings by kind, each list capped; merged in turns so that one kind cannot crowd out the others. */
class Collector {
  private readonly byKind = new Map<Kind, Finding[]>(KINDS.map((k) => [k, []]));
  constructor(private readonly cap: number) {}
  /** Takes a thunk: past the cap nothing is built, so 100,000 wrong cells stay cheap. */
  add(kind: Kind, make: () => Finding): void {
    const list = this.byKind.get(kind) ?? [];
    if (list.length < this.cap) list.push(make());
  }
  merged(): Finding[] {
    const lists = [...this.byKind.values()];
    const out: Finding[] = [];
    for (let i = 0; out.length < this.cap; i++) {
      const round = lists.map((l) => l[i]).filter((f): f is Finding => f !== undefined);
      if (round.length === 0) break;
      out.push(...round.slice(0, this.cap - out.length));
    }
    return out;
  }
}

interface Tally {
  cells: number;
  right: number;
  needed: number;
  fixed: number;
  changed: number;
  changedRight: number;
  broken: number;
  missing: number;
  extra: number;
  duplicates: number;
}

/** A scored column: its name and where it is in each table (-1: the input has no such column). */
interface Column {
  name: string;
  expected: number;
  produced: number;
  input: number;
}

interface Tables {
  exp: CsvGrid;
  inp: CsvGrid;
  prod: CsvGrid;
}

export const csvRepair = defineCheck({
  description:
    'A data-cleaning job judged by cells fixed and good cells broken, not exact equality: the produced CSV against the expected clean CSV (a checker file, usually hidden) and the dirty input CSV (an input file), cell by cell. A cell needed fixing when the input differs from the expected value, changed when the output differs from the input, is right when the output matches the expected value (numbers by value within atol + rtol × |expected|, text exactly, a null only a null). recall = needed-and-right / needed (1 when no cell needed fixing), precision = changed-and-right / changed (0 when nothing changed though something needed fixing; 1 when neither), accuracy = right / scored cells. Params: artifact, expected_file, input_file, min_recall (all required; min_recall in (0, 1], so a copy of the input fails), min_precision (default 1: no wrong repair, no good cell broken), min_accuracy (optional), key (columns matching rows across the three tables; without it rows match by position and the input must have as many rows as the expected file), atol (1e-12), rtol (1e-9), null_values ([""]), trim (false), case_sensitive (true), delimiter (","), input_delimiter (delimiter), max_findings (10). The header must be the expected one (same names, same order); a missing, extra or duplicate-key row fails whatever the bars. Key columns are not scored; a column the input lacks counts as nulls there; with a key, an input key seen twice takes its first row.',
  params,
  example: { artifact: "clean.csv", expected_file: "expected_clean.csv", input_file: "orders.csv", key: ["order_id"], min_recall: 0.9, atol: 0.005 },
  publicParams: ["artifact", "input_file", "key", "min_recall", "min_precision", "min_accuracy", "atol", "rtol", "null_values", "trim", "case_sensitive", "delimiter", "input_delimiter", "max_findings"],
  checkerFiles: (p) => [p.expected_file],
  run(p, ctx) {
    const expected = loadCheckerCsv(ctx, p.expected_file, { delimiter: p.delimiter });
    if (!expected.ok) return misconfigured(expected.message, "its expected file could not be read");
    if (expected.value.rowCount === 0) {
      return misconfigured(`checker file ${JSON.stringify(p.expected_file)} has a header but no data rows: an empty expected table would pass vacuously`, "its expected file has no rows");
    }
    // The input is the mess being cleaned: read leniently (ragged rows, stray quotes), as the program may have.
    const input = loadInputCsv(ctx, p.input_file, { delimiter: p.input_delimiter ?? p.delimiter, lenient: true });
    if (!input.ok) return misconfigured(input.message, "its input file could not be read");
    const produced = loadCsv(ctx, p.artifact, { delimiter: p.delimiter });
    if (!produced.ok) return { passed: false, message: produced.message, publicMessage: produced.message };
    return judge(p, { exp: expected.value, inp: input.value, prod: produced.value });
  },
});

function misconfigured(message: string, why: string): CheckResult {
  return { passed: false, message: `invalid check: ${message}`, publicMessage: `the check is misconfigured (${why}); the goal's checker or input files must be fixed, not the program` };
}

function failed(message: string, findings?: Finding[]): CheckResult {
  return { passed: false, message, publicMessage: message, ...(findings === undefined ? {} : { findings }) };
}

function judge(p: Params, t: Tables): CheckResult {
  const r = readerFor(p);
  const art = JSON.stringify(p.artifact);
  const nameKey = (name: string) => r.fold(r.norm(name));
  const indexNames = (header: string[]): { at: Map<string, number>; twice: string | null } => {
    const at = new Map<string, number>();
    for (const [i, name] of header.entries()) {
      if (at.has(nameKey(name))) return { at, twice: name };
      at.set(nameKey(name), i);
    }
    return { at, twice: null };
  };

  const e = indexNames(t.exp.header);
  if (e.twice !== null) return misconfigured(`checker file ${JSON.stringify(p.expected_file)} names column ${quoteName(e.twice)} twice once trimmed/case-folded`, "its expected file has duplicate columns");
  const i = indexNames(t.inp.header);
  if (i.twice !== null) return misconfigured(`input file ${JSON.stringify(p.input_file)} names column ${quoteName(i.twice)} twice once trimmed/case-folded`, "its input file has duplicate columns");
  const pr = indexNames(t.prod.header);
  if (pr.twice !== null) return failed(`artifact ${art} names column ${quoteName(pr.twice)} twice once trimmed/case-folded; column names must be unique`);

  // The header must be the expected one: a cleaning job keeps the table's shape.
  const missingColumns = t.exp.header.filter((n) => !pr.at.has(nameKey(n)));
  const extraColumns = t.prod.header.filter((n) => !e.at.has(nameKey(n)));
  const reordered = missingColumns.length === 0 && extraColumns.length === 0 && t.exp.header.some((n, k) => pr.at.get(nameKey(n)) !== k);
  if (missingColumns.length > 0 || extraColumns.length > 0 || reordered) {
    const problems: string[] = [];
    if (missingColumns.length > 0) problems.push(`missing ${plural(missingColumns.length, "column")} ${listNames(missingColumns, 5)}`);
    if (extraColumns.length > 0) problems.push(`unexpected ${plural(extraColumns.length, "column")} ${listNames(extraColumns, 5)}`);
    if (reordered) problems.push(`columns in a different order (expected ${listNames(t.exp.header, 8)})`);
    const m = `artifact ${art} does not have the expected header: ${problems.join("; ")}`;
    return failed(m, [{ where: "header", actual: clipCell(t.prod.header.join(","), 200), expected: clipCell(t.exp.header.join(","), 200), note: problems.join("; ") }]);
  }

  const keyNames = new Set((p.key ?? []).map(nameKey));
  for (const k of p.key ?? []) {
    if (!e.at.has(nameKey(k))) return misconfigured(`key column ${quoteName(k)} is not in checker file ${JSON.stringify(p.expected_file)}`, `key column ${quoteName(k)} is not in its expected file`);
    if (!i.at.has(nameKey(k))) return misconfigured(`key column ${quoteName(k)} is not in input file ${JSON.stringify(p.input_file)}`, `key column ${quoteName(k)} is not in its input file`);
  }
  const column = (name: string): Column => ({ name, expected: e.at.get(nameKey(name)) ?? -1, produced: pr.at.get(nameKey(name)) ?? -1, input: i.at.get(nameKey(name)) ?? -1 });
  const scored = t.exp.header.filter((n) => !keyNames.has(nameKey(n))).map(column);
  if (scored.length === 0) return misconfigured("every expected column is a key column, so no cell is scored", "it scores no column");
  const keys = (p.key ?? []).map(column);

  const tally: Tally = { cells: 0, right: 0, needed: 0, fixed: 0, changed: 0, changedRight: 0, broken: 0, missing: 0, extra: 0, duplicates: 0 };
  const out = new Collector(p.max_findings);
  // The output's columns sit where the expected file's do (the header check saw to it); the input's may not.
  const inputLayout = (p.input_delimiter ?? p.delimiter) === p.delimiter && t.inp.header.length === t.exp.header.length && t.exp.header.every((n, k) => i.at.get(nameKey(n)) === k);
  const score = (ei: number, ii: number, pi: number | null, label: () => string) => scoreRow(r, t, scored, inputLayout, ei, ii, pi, label, tally, out);

  if (keys.length > 0) {
    const problem = byKey(p, r, t, keys, scored, tally, out, score);
    if (problem !== null) return problem;
  } else {
    if (t.inp.rowCount !== t.exp.rowCount) {
      return misconfigured(
        `input file ${JSON.stringify(p.input_file)} has ${plural(t.inp.rowCount, "data row")} and checker file ${JSON.stringify(p.expected_file)} ${t.exp.rowCount}: rows are matched by position, so they must agree (give a key when the cleaning adds or removes rows)`,
        "its input and expected files have different row counts; rows are matched by position",
      );
    }
    const paired = Math.min(t.exp.rowCount, t.prod.rowCount);
    for (let k = 0; k < t.exp.rowCount; k++) score(k, k, k < paired ? k : null, () => `row ${k + 1}`);
    for (let k = paired; k < t.exp.rowCount; k++) {
      tally.missing++;
      out.add("missing", () => ({ where: `input row ${k + 1}`, expected: rowPreview(t.exp, k, scored, (c) => c.expected), note: "the produced table ends before this row" }));
    }
    for (let k = paired; k < t.prod.rowCount; k++) {
      tally.extra++;
      out.add("extra", () => ({ where: `row ${k + 1}`, actual: rowPreview(t.prod, k, scored, (c) => c.produced), note: "a row beyond the expected table's end" }));
    }
  }
  return verdict(p, t, tally, out, keys.length > 0);
}

type Score = (ei: number, ii: number, pi: number | null, label: () => string) => void;

/** Pairs rows by key; returns a result only when the check cannot be judged (the files disagree). */
function byKey(p: Params, r: Reader, t: Tables, keys: Column[], scored: Column[], tally: Tally, out: Collector, score: Score): CheckResult | null {
  const keyOf = (g: CsvGrid, row: number, at: (c: Column) => number) => joinCells(keys.map((k) => canonCell(g.cell(row, at(k)), r)));
  const showKey = (g: CsvGrid, row: number, at: (c: Column) => number) => rowPreview(g, row, keys, at);
  const index = (g: CsvGrid, at: (c: Column) => number, onDuplicate: (row: number, first: number) => void) => {
    const firstAt = new Map<string, number>();
    for (let row = 0; row < g.rowCount; row++) {
      const k = keyOf(g, row, at);
      const first = firstAt.get(k);
      if (first === undefined) firstAt.set(k, row);
      else onDuplicate(row, first);
    }
    return firstAt;
  };

  const expectedDuplicates: [number, number][] = [];
  const expectedAt = index(t.exp, (c) => c.expected, (row, first) => expectedDuplicates.push([row, first]));
  const [dup] = expectedDuplicates;
  if (dup !== undefined) {
    const [row, first] = dup;
    return misconfigured(`checker file ${JSON.stringify(p.expected_file)} has a duplicate key at expected row ${row + 1} (first at row ${first + 1})`, "its expected file has duplicate keys");
  }
  // An input key seen twice (the duplicates a cleaning job removes) is judged against its first row.
  const inputAt = index(t.inp, (c) => c.input, () => undefined);
  const producedAt = index(t.prod, (c) => c.produced, (row, first) => {
    tally.duplicates++;
    out.add("duplicate", () => ({ where: `row ${row + 1} (${showKey(t.prod, row, (c) => c.produced)})`, note: `duplicate key (first at row ${first + 1})` }));
  });

  for (const [k, ei] of expectedAt) {
    if (!inputAt.has(k)) {
      return misconfigured(
        `expected row ${ei + 1} (${showKey(t.exp, ei, (c) => c.expected)}) has a key no row of input file ${JSON.stringify(p.input_file)} has, so what needed fixing there is unknown (a key the cleaning rewrites cannot match rows: leave out key to match them by position)`,
        "its expected file has a key its input file lacks",
      );
    }
  }
  for (const [k, ei] of expectedAt) {
    const ii = inputAt.get(k) ?? 0;
    const pi = producedAt.get(k);
    // The label is only built for a produced row's wrong cell.
    score(ei, ii, pi ?? null, () => `row ${(pi ?? 0) + 1} (${showKey(t.prod, pi ?? 0, (c) => c.produced)})`);
    if (pi === undefined) {
      tally.missing++;
      out.add("missing", () => ({ where: `input row ${ii + 1} (${showKey(t.inp, ii, (c) => c.input)})`, expected: rowPreview(t.exp, ei, scored, (c) => c.expected), note: "no produced row has this key" }));
    }
  }
  for (const [k, pi] of producedAt) {
    if (expectedAt.has(k)) continue;
    tally.extra++;
    const note = inputAt.has(k) ? "no expected row has this key: the cleaning should have removed this input row" : "no expected row has this key, nor has the input";
    out.add("extra", () => ({ where: `row ${pi + 1} (${showKey(t.prod, pi, (c) => c.produced)})`, actual: rowPreview(t.prod, pi, scored, (c) => c.produced), note }));
  }
  return null;
}

/** Scores one expected row's cells against its input row and its produced row (null: the row is missing). */
function scoreRow(r: Reader, t: Tables, columns: readonly Column[], inputLayout: boolean, ei: number, ii: number, pi: number | null, label: () => string, tally: Tally, out: Collector): void {
  // Rows with the same raw text at the same column positions have the same cells: most rows of a good
  // repair are the expected row to the byte, and most input rows needed nothing.
  const outputSame = pi !== null && t.exp.raw(ei) === t.prod.raw(pi);
  if (outputSame && inputLayout && t.exp.raw(ei) === t.inp.raw(ii)) {
    tally.cells += columns.length;
    tally.right += columns.length;
    return;
  }
  for (const c of columns) {
    const ev = t.exp.cell(ei, c.expected);
    // A column the input lacks (one the cleaning derives) held nothing there: a null.
    const dv = c.input < 0 ? null : t.inp.cell(ii, c.input);
    const needed = dv === null ? !r.isNull(r.norm(ev)) : !cellsMatch(ev, dv, r);
    tally.cells++;
    if (needed) tally.needed++;
    if (pi === null) continue;
    const av = t.prod.cell(pi, c.produced);
    // The output's cell is the expected one to the byte: right, and changed exactly when it needed fixing.
    const right = outputSame || cellsMatch(ev, av, r);
    const changed = outputSame ? needed : dv === null ? !r.isNull(r.norm(av)) : !cellsMatch(av, dv, r);
    if (right) tally.right++;
    if (needed && right) tally.fixed++;
    if (changed) tally.changed++;
    if (changed && right) tally.changedRight++;
    if (right) continue;
    const kind: Kind = !needed ? "broken" : changed ? "wrong" : "unfixed";
    if (kind === "broken") tally.broken++;
    out.add(kind, () => ({
      where: `${label()}, column ${quoteName(c.name)}`,
      input: dv === null ? "(the input has no such column)" : clipCell(dv),
      actual: clipCell(av),
      expected: clipCell(ev),
      note: `${dv === null && kind === "broken" ? "a value where the expected cell is empty (the input has no such column)" : CELL_NOTES[kind]}; ${diffNote(ev, av, r)}`,
    }));
  }
}

function verdict(p: Params, t: Tables, tally: Tally, out: Collector, byKeyMode: boolean): CheckResult {
  const art = JSON.stringify(p.artifact);
  const recall = tally.needed > 0 ? tally.fixed / tally.needed : 1;
  // Nothing changed: a perfect score when nothing needed fixing, none when something did (a copy of the input).
  const precision = tally.changed > 0 ? tally.changedRight / tally.changed : tally.needed === 0 ? 1 : 0;
  const accuracy = tally.right / tally.cells;

  const bars: { name: string; value: number; min: number | undefined; text: string }[] = [
    {
      name: "recall",
      value: recall,
      min: p.min_recall,
      text: tally.needed > 0 ? `${tally.fixed} of ${plural(tally.needed, "cell")} that needed fixing fixed` : "no cell needed fixing",
    },
    {
      name: "precision",
      value: precision,
      min: p.min_precision,
      text: tally.changed > 0 ? `${tally.changedRight} of ${plural(tally.changed, "changed cell")} right, ${plural(tally.broken, "good cell")} broken` : "no cell changed",
    },
    { name: "accuracy", value: accuracy, min: p.min_accuracy, text: `${tally.right} of ${plural(tally.cells, "cell")} right` },
  ];
  const below = bars.filter((b) => b.min !== undefined && !(b.value >= b.min));
  const scores = bars.map((b) => `${b.name} ${fmtRatio(b.value, below.includes(b) ? (b.min ?? null) : null)} (${b.text})`).join(", ");
  const required = `min_recall ${p.min_recall}, min_precision ${p.min_precision}${p.min_accuracy === undefined ? "" : `, min_accuracy ${p.min_accuracy}`}`;

  const rowProblems: string[] = [];
  if (tally.missing > 0) rowProblems.push(`${plural(tally.missing, "expected row")} missing`);
  if (tally.extra > 0) rowProblems.push(`${plural(tally.extra, "extra row")}`);
  if (tally.duplicates > 0) rowProblems.push(plural(tally.duplicates, "duplicate key"));
  const shape = `${plural(t.exp.rowCount, "row")} ${byKeyMode ? `matched by ${listNames(p.key ?? [])}` : "matched by position"}, produced ${t.prod.rowCount}`;

  const findings = out.merged();
  const passed = rowProblems.length === 0 && below.length === 0;
  if (passed) {
    const message = `artifact ${art} repairs input file ${JSON.stringify(p.input_file)}: ${scores}; ${shape} (${required})`;
    return { passed: true, message, publicMessage: message, ...(findings.length > 0 ? { findings } : {}) };
  }
  const why = [...below.map((b) => `${b.name} ${fmtRatio(b.value, b.min ?? null)} is below ${b.min}`), ...rowProblems].join("; ");
  const shown = findings.slice(0, MESSAGE_CELLS);
  const message = `artifact ${art} falls short of checker file ${JSON.stringify(p.expected_file)}: ${why}. Scores: ${scores}; ${shape} (${required}).${shown.length > 0 ? ` First problems: ${shown.map(describeFinding).join("; ")}` : ""}`;
  const publicMessage = `artifact ${art} falls short of the expected table: ${why}. Scores: ${scores}; ${shape} (${required}).${shown.length > 0 ? ` First problems at: ${shown.map((f) => f.where).join("; ")}` : ""}`;
  return { passed: false, message, publicMessage, findings };
}

/** A ratio in at most 4 significant digits, or as many as it takes not to read as its bar when it misses it. */
function fmtRatio(value: number, bar: number | null): string {
  for (let digits = 4; digits < 17; digits++) {
    const text = String(Number(value.toPrecision(digits)));
    if (bar === null || Number(text) !== bar) return text;
  }
  return String(value);
}

/** testlib style: where, the input's value, then expected and found. */
function describeFinding(f: Finding): string {
  let text = f.where;
  if (f.input !== undefined) text += ` (input ${preview(f.input)})`;
  const values: string[] = [];
  if (f.expected !== undefined) values.push(`expected ${preview(f.expected)}`);
  if (f.actual !== undefined) values.push(`found ${preview(f.actual)}`);
  if (values.length > 0) text += `: ${values.join(", ")}`;
  if (f.note !== undefined) text += ` (${f.note})`;
  return text;
}

/** "order_id=4, region=West": a row's cells in the given columns, bounded. */
function rowPreview(g: CsvGrid, row: number, columns: readonly Column[], at: (c: Column) => number): string {
  return clipCell(columns.map((c) => `${c.name}=${clipCell(g.cell(row, at(c)), 40)}`).join(", "), 200);
}
