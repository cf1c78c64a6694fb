import { z } from "zod";
import { defineCheck } from "../define";
import { preview } from "../format";
import { clipCell, type CsvGrid, delimiterParam, listNames, loadCsv, MAX_COLUMNS, plural, quoteName } from "../lib/csv";
import { type Num, parseNumber } from "../lib/numbers";
import { compilePattern, type Pattern } from "../lib/regex";
import type { Finding } from "../types";

// Column rules in the vocabulary of Great Expectations, dbt tests and Pandera. The traps those libraries
// document are closed here on purpose: a null never satisfies a value rule silently (nulls skipped are
// counted in the message), a column of nothing but nulls fails every value rule instead of passing
// vacuously, and a table with no rows fails.

const MESSAGE_GROUPS = 8;
const EXAMPLES_PER_GROUP = 2;

/** The pattern must match the whole cell; the wrapper is only sound for a pattern that compiles alone. */
function anchored(source: string): { ok: true; pattern: Pattern } | { ok: false; message: string } {
  const alone = compilePattern(source);
  if (!alone.ok) return alone;
  return compilePattern(`^(?:${source})$`);
}

const ruleSchema = z
  .strictObject({
    type: z.enum(["integer", "number", "string", "boolean", "date", "datetime"]).optional(),
    not_null: z.boolean().optional(),
    unique: z.boolean().optional(),
    in_set: z.array(z.string()).min(1).max(1000).optional(),
    between: z
      .tuple([z.number(), z.number()])
      .refine(([lo, hi]) => lo <= hi, { message: "the minimum is greater than the maximum" })
      .optional(),
    regex: z
      .string()
      .min(1)
      .superRefine((source, ctx) => {
        const compiled = anchored(source);
        if (!compiled.ok) ctx.addIssue({ code: "custom", message: compiled.message });
      })
      .optional(),
    min_length: z.number().int().nonnegative().optional(),
    max_length: z.number().int().nonnegative().optional(),
  })
  .refine(
    (r) =>
      r.type !== undefined || r.not_null === true || r.unique === true || r.in_set !== undefined || r.between !== undefined || r.regex !== undefined || r.min_length !== undefined || r.max_length !== undefined,
    { message: "a rule object needs at least one rule: type, not_null: true, unique: true, in_set, between, regex, min_length or max_length" },
  )
  .refine((r) => r.min_length === undefined || r.max_length === undefined || r.min_length <= r.max_length, {
    message: "min_length is greater than max_length",
    path: ["min_length"],
  });

type Rule = z.output<typeof ruleSchema>;

const params = z
  .strictObject({
    artifact: z.string().min(1).describe("The produced CSV, a path relative to the output directory."),
    columns: z.array(z.string()).min(1).max(MAX_COLUMNS).optional().describe("Required column names."),
    column_order: z
      .enum(["exact", "ordered", "any"])
      .default("any")
      .describe('"exact": the header is exactly `columns`; "ordered": they appear in this relative order; "any": anywhere.'),
    allow_extra_columns: z.boolean().optional().describe("Columns beyond `columns` are allowed (default true; never with column_order exact)."),
    rules: z.record(z.string(), ruleSchema).optional().describe("Column name -> rules."),
    null_values: z.array(z.string()).max(50).default([""]).describe('Cells that mean "missing".'),
    delimiter: delimiterParam,
    max_findings: z.number().int().min(1).max(50).default(10),
  })
  .superRefine((p, ctx) => {
    if (p.columns === undefined && p.rules === undefined) ctx.addIssue({ code: "custom", message: "give columns, rules or both: there is nothing to check" });
    if (p.column_order !== "any" && p.columns === undefined) {
      ctx.addIssue({ code: "custom", path: ["columns"], message: `required when column_order is "${p.column_order}"` });
    }
    if (p.column_order === "exact" && p.allow_extra_columns === true) {
      ctx.addIssue({ code: "custom", path: ["allow_extra_columns"], message: 'cannot be true with column_order "exact" (the header must be exactly `columns`)' });
    }
    if (p.allow_extra_columns === false && p.columns === undefined) {
      ctx.addIssue({ code: "custom", path: ["allow_extra_columns"], message: "false needs `columns`: the columns that are not extra" });
    }
    if (p.columns !== undefined && new Set(p.columns).size !== p.columns.length) ctx.addIssue({ code: "custom", path: ["columns"], message: "names a column twice" });
  });

type Params = z.output<typeof params>;

type Fail = (column: string, rule: string, make: () => Finding) => void;

/** One (column, rule) pair's failures: the count, and the first findings. */
interface Group {
  column: string;
  rule: string;
  count: number;
  findings: Finding[];
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))?$/;
const BOOLEAN = /^(?:true|false)$/i;

function realDate(y: number, m: number, d: number): boolean {
  // A month outside 1..12 has no entry, so no day is in it.
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] ?? 0;
  return d >= 1 && d <= days;
}

/** Why `cell` is not of `type`, or null when it is. */
function typeProblem(type: NonNullable<Rule["type"]>, cell: string): string | null {
  switch (type) {
    case "string":
      return null;
    case "integer": {
      const n = parseNumber(cell);
      if (n?.kind === "int") return null;
      if (n !== null && Number.isInteger(n.value)) return "is written as a decimal, not an integer (a float column? write 17, not 17.0)";
      return "is not an integer";
    }
    case "number":
      return parseNumber(cell) !== null ? null : "is not a number (digits with an optional sign, decimal point and exponent; no thousands separators, units, NaN or inf)";
    case "boolean":
      return BOOLEAN.test(cell) ? null : 'is not a boolean ("true" or "false", any case)';
    case "date": {
      const m = ISO_DATE.exec(cell);
      if (m === null) return "is not an ISO date (YYYY-MM-DD)";
      return realDate(Number(m[1]), Number(m[2]), Number(m[3])) ? null : "is not a real calendar date";
    }
    case "datetime": {
      const m = ISO_DATETIME.exec(cell);
      if (m === null) return "is not an ISO 8601 datetime (YYYY-MM-DDTHH:MM[:SS[.fff]][Z|±HH:MM]; a space may replace the T)";
      if (!realDate(Number(m[1]), Number(m[2]), Number(m[3]))) return "is not a real calendar date";
      const [h, min, s] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
      if (h > 23 || min > 59 || s > 59) return "is not a real time of day";
      if (Number(m[8] ?? 0) > 23 || Number(m[9] ?? 0) > 59) return "has an impossible UTC offset";
      return null;
    }
  }
}

/**
 * Exact comparison of a parsed number with a bound: an integer bound as a bigint, so 2^53 + 1 is not 2^53
 * (JavaScript compares a bigint with a bigint or a double exactly).
 */
function compareToBound(n: Num, bound: number): number {
  if (Number.isInteger(bound)) {
    const b = BigInt(bound);
    return n.value < b ? -1 : n.value > b ? 1 : 0;
  }
  return Number(n.value) - bound;
}

/** Characters as code points: a surrogate pair is one, a lone surrogate is one (string iteration's rule). */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function hasValueRule(rule: Rule): boolean {
  return rule.type !== undefined || rule.unique === true || rule.in_set !== undefined || rule.between !== undefined || rule.regex !== undefined || rule.min_length !== undefined || rule.max_length !== undefined;
}

function ruleNames(rule: Rule): string {
  const names: string[] = [];
  if (rule.type !== undefined) names.push(`type ${rule.type}`);
  if (rule.unique === true) names.push("unique");
  if (rule.in_set !== undefined) names.push("in_set");
  if (rule.between !== undefined) names.push("between");
  if (rule.regex !== undefined) names.push("regex");
  if (rule.min_length !== undefined) names.push("min_length");
  if (rule.max_length !== undefined) names.push("max_length");
  return names.join(", ");
}

function cellWhere(row: number, column: string): string {
  return `row ${row}, column ${quoteName(column)}`;
}

export const csvSchema = defineCheck({
  description:
    'A produced CSV has the required columns and every cell obeys its column\'s rules (Great Expectations / dbt style). Params: artifact (required), columns (required column names), column_order "any" (default) | "ordered" | "exact", allow_extra_columns (default true), rules: {column: {type?: "integer"|"number"|"string"|"boolean"|"date" (YYYY-MM-DD)|"datetime" (ISO 8601), not_null?, unique?, in_set?: [text], between?: [min, max] (inclusive), regex? (RE2, must match the whole cell), min_length?, max_length?}}, null_values (default [""]), delimiter (default ","), max_findings (default 10). Nulls fail not_null and are skipped (and counted) by the other rules; a column of nothing but nulls fails its value rules; a table with no rows fails.',
  params,
  example: {
    artifact: "clean.csv",
    columns: ["order_id", "region", "amount"],
    rules: { order_id: { type: "integer", not_null: true, unique: true }, region: { in_set: ["North", "South", "East", "West"] }, amount: { type: "number", between: [0, 100000] } },
  },
  publicParams: ["artifact", "columns", "column_order", "allow_extra_columns", "rules", "null_values", "delimiter", "max_findings"],
  run(p, ctx) {
    const loaded = loadCsv(ctx, p.artifact, { delimiter: p.delimiter });
    if (!loaded.ok) return { passed: false, message: loaded.message, publicMessage: loaded.message };
    const grid = loaded.value;
    const { header, rowCount } = grid;
    const art = JSON.stringify(p.artifact);
    const groups: Group[] = [];
    const byColumn = new Map<string, Map<string, Group>>();
    // Findings are built only while under the cap: a column of 100,000 failing cells must stay cheap.
    const fail = (column: string, rule: string, make: () => Finding) => {
      let rules = byColumn.get(column);
      if (rules === undefined) {
        rules = new Map();
        byColumn.set(column, rules);
      }
      let g = rules.get(rule);
      if (g === undefined) {
        g = { column, rule, count: 0, findings: [] };
        groups.push(g);
        rules.set(rule, g);
      }
      g.count++;
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, only speed: mergeFindings never takes more than max_findings from one group
      if (g.findings.length < p.max_findings) g.findings.push(make());
    };

    checkHeader(p, header, fail);
    if (rowCount === 0) fail("", "rows", () => ({ where: "table", actual: "0 rows", note: "the table has no rows (only a header): nothing was checked" }));

    const index = new Map(header.map((name, i) => [name, i]));
    const nulls = new Set(p.null_values);
    const skipped: string[] = [];
    let ruleCount = 0;
    for (const [column, rule] of Object.entries(p.rules ?? {})) {
      const at = index.get(column);
      if (at === undefined) {
        fail(column, "column", () => ({ where: `column ${quoteName(column)}`, note: `rules name column ${quoteName(column)}, which the CSV does not have (its columns: ${listNames(header, 8)})` }));
        continue;
      }
      if (rowCount === 0) continue;
      ruleCount++;
      const nullCount = checkColumn(column, at, rule, grid, nulls, fail);
      if (nullCount > 0 && rule.not_null !== true && hasValueRule(rule) && nullCount < rowCount) {
        skipped.push(`${plural(nullCount, "null")} skipped in ${quoteName(column)}`);
      }
    }

    const skippedText = skipped.length === 0 ? "" : ` (${skipped.slice(0, 5).join("; ")}${skipped.length > 5 ? `; and in ${plural(skipped.length - 5, "more column")}` : ""})`;
    if (groups.length === 0) {
      const what = [p.columns !== undefined ? `the ${plural(p.columns.length, "required column")} ${p.column_order === "any" ? "present" : `present (${p.column_order})`}` : "", ruleCount > 0 ? `rules on ${plural(ruleCount, "column")} hold` : ""]
        .filter((s) => s !== "")
        .join("; ");
      const message = `artifact ${art} satisfies its schema: ${plural(rowCount, "row")}; ${what}${skippedText}`;
      return { passed: true, message, publicMessage: message };
    }

    const problems = groups.reduce((n, g) => n + g.count, 0);
    const shown = groups.slice(0, MESSAGE_GROUPS).map(describeGroup);
    const moreGroups = groups.length > MESSAGE_GROUPS ? `; and ${plural(groups.length - MESSAGE_GROUPS, "more rule failure")}` : "";
    const message = `artifact ${art} fails its schema: ${plural(problems, "problem")} in ${plural(rowCount, "row")}${skippedText}: ${shown.join("; ")}${moreGroups}`;
    return { passed: false, message, publicMessage: message, findings: mergeFindings(groups, p.max_findings) };
  },
});

function checkHeader(p: Params, header: string[], fail: Fail): void {
  const columns = p.columns;
  if (columns === undefined) return;
  const have = new Set(header);
  const wanted = new Set(columns);
  const shownHeader = clipCell(header.join(","), 200);
  for (const column of columns) {
    if (!have.has(column)) fail(column, "required", () => ({ where: `column ${quoteName(column)}`, actual: shownHeader, note: `required column ${quoteName(column)} is missing` }));
  }
  const allowExtra = p.column_order !== "exact" && p.allow_extra_columns !== false;
  if (!allowExtra) {
    for (const column of header) {
      if (!wanted.has(column)) fail(column, "extra", () => ({ where: `column ${quoteName(column)}`, note: `column ${quoteName(column)} is not one of the allowed columns (${listNames(columns, 8)})` }));
    }
  }
  if (p.column_order === "any") return;
  const present = header.filter((c) => wanted.has(c));
  const expectedOrder = columns.filter((c) => have.has(c));
  if (present.join("\u0000") !== expectedOrder.join("\u0000")) {
    fail("", "order", () => ({
      where: "header",
      actual: shownHeader,
      note: `the columns must appear in the order ${listNames(columns, 10)}${p.column_order === "exact" ? " and be the only columns" : ""}; found ${listNames(present, 10)}`,
    }));
  }
}

/** Runs one column's rules over every row; returns how many of its cells were null. */
function checkColumn(
  column: string,
  at: number,
  rule: Rule,
  grid: CsvGrid,
  nulls: Set<string>,
  fail: Fail,
): number {
  const pattern = rule.regex === undefined ? null : anchored(rule.regex);
  if (pattern !== null && !pattern.ok) {
    // Params were validated when parsed; this only guards a caller that skipped the schema.
    fail(column, "regex", () => ({ where: `column ${quoteName(column)}`, note: pattern.message }));
    return 0;
  }
  const inSet = rule.in_set === undefined ? null : { list: rule.in_set, set: new Set(rule.in_set) };
  const seen = rule.unique === true ? new Map<string, number>() : null;
  let nullCount = 0;
  for (let i = 0; i < grid.rowCount; i++) {
    const cell = grid.cell(i, at);
    const row = i + 1;
    if (nulls.has(cell)) {
      nullCount++;
      if (rule.not_null === true) fail(column, "not_null", () => ({ where: cellWhere(row, column), actual: cell, note: `not_null: the cell is null (${preview(cell)} is a null value)` }));
      continue;
    }
    if (rule.type !== undefined) {
      const problem = typeProblem(rule.type, cell);
      if (problem !== null) fail(column, `type ${rule.type}`, () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `type ${rule.type}: ${preview(cell)} ${problem}` }));
    }
    if (inSet !== null && !inSet.set.has(cell)) {
      fail(column, "in_set", () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `in_set: ${preview(cell)} is not one of ${listNames(inSet.list, 8)} (exact text)` }));
    }
    if (rule.between !== undefined) {
      const [lo, hi] = rule.between;
      const n = parseNumber(cell);
      if (n === null) fail(column, "between", () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `between [${lo}, ${hi}]: ${preview(cell)} is not a number` }));
      else if (compareToBound(n, lo) < 0 || compareToBound(n, hi) > 0) fail(column, "between", () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `between [${lo}, ${hi}]: ${preview(cell)} is outside the range` }));
    }
    if (pattern !== null && !pattern.pattern.test(cell)) {
      fail(column, "regex", () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `regex: ${preview(cell)} does not match ${JSON.stringify(rule.regex)} as a whole` }));
    }
    // Stryker disable next-line ConditionalExpression: equivalent, only speed: the length is only counted when a length rule needs it
    if (rule.min_length !== undefined || rule.max_length !== undefined) {
      const length = codePoints(cell);
      if (length < (rule.min_length ?? 0)) fail(column, "min_length", () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `min_length ${rule.min_length}: ${plural(length, "character")}` }));
      if (length > (rule.max_length ?? Infinity)) fail(column, "max_length", () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `max_length ${rule.max_length}: ${plural(length, "character")}` }));
    }
    if (seen !== null) {
      const first = seen.get(cell);
      if (first === undefined) seen.set(cell, row);
      else fail(column, "unique", () => ({ where: cellWhere(row, column), actual: clipCell(cell), note: `unique: ${preview(cell)} already appears in row ${first}` }));
    }
  }
  // Never called on a table with no rows (run skips them), so every-cell-null means at least one null.
  if (nullCount === grid.rowCount && hasValueRule(rule)) {
    fail(column, "all null", () => ({ where: `column ${quoteName(column)}`, note: `${ruleNames(rule)}: every one of the ${plural(grid.rowCount, "cell")} is null, so there are no non-null values to check` }));
  }
  return nullCount;
}

function describeGroup(g: Group): string {
  // In the groups that list examples, a finding has an actual cell exactly when it names a row.
  const examples = g.findings
    .slice(0, EXAMPLES_PER_GROUP)
    .map((f) => (f.actual !== undefined ? `${f.where.split(",")[0]} ${preview(f.actual)}` : (f.note ?? f.where)))
    .join(", ");
  const subject = g.column === "" ? "" : `column ${quoteName(g.column)}: `;
  if (g.rule === "rows" || g.rule === "order" || g.rule === "required" || g.rule === "extra" || g.rule === "column" || g.rule === "all null") {
    // Stryker disable next-line OptionalChaining: equivalent, every group holds its first finding (max_findings >= 1)
    return `${subject}${g.findings[0]?.note ?? g.rule}`;
  }
  return `${subject}${g.rule} fails in ${plural(g.count, "row")} (${examples}${g.count > EXAMPLES_PER_GROUP ? ", …" : ""})`;
}

/** The first findings of each failing rule in turn, so that one noisy rule cannot hide the others. */
function mergeFindings(groups: Group[], cap: number): Finding[] {
  const out: Finding[] = [];
  // The round that finds out full takes nothing and ends the loop.
  for (let i = 0; ; i++) {
    let took = false;
    for (const g of groups) {
      const f = g.findings[i];
      if (f !== undefined && out.length < cap) {
        out.push(f);
        took = true;
      }
    }
    if (!took) break;
  }
  return out;
}
