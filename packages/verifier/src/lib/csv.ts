import { z } from "zod";
import { findArtifact } from "../artifacts";
import { listQuoted } from "../format";
import type { NamedFile, VerifyContext } from "../types";

// RFC 4180, read strictly: a deliverable that a spreadsheet or pandas would read differently from us (a
// stray quote, a ragged row, mojibake) is a failure with a line number, never a best guess. Inputs are
// the exception: the goal's own messy file is read leniently, because a check must not fail closed on
// the very mess the program was asked to clean (see `lenient`).
//
// The reader records where each cell lies in the text instead of cutting a string per cell: a
// 100,000 x 10 table is then a handful of objects rather than a million, which is what keeps the garbage
// collector (not the parsing) from dominating a comparison of two such tables.

export const MAX_CELLS = 1_000_000;
export const MAX_COLUMNS = 10_000;

export interface CsvTable {
  header: string[];
  /** Data rows (header excluded); in strict mode every row has exactly header.length cells. */
  rows: string[][];
}

/** A parsed CSV read cell by cell, without a string per cell until one is asked for. */
export interface CsvGrid {
  header: string[];
  /** Data rows, header excluded. */
  rowCount: number;
  /** Fields in data row `r` (header.length unless read leniently). */
  width(r: number): number;
  /** Cell `c` of data row `r` (0-based), unquoted and unescaped; "" past the row's end. */
  cell(r: number, c: number): string;
  /**
   * Data row `r` as written, quotes included, line break excluded. Records are read independently of
   * each other, so two rows with the same raw text have the same cells: comparisons start here.
   */
  raw(r: number): string;
  row(r: number): string[];
  toTable(): CsvTable;
}

export interface CsvOptions {
  /** One character; default ",". */
  delimiter?: string;
  /**
   * For the goal's input files: rows may have any number of fields, a quote inside an unquoted field is
   * kept as text (Python's csv module does the same), blank lines are skipped (pandas does), and bytes
   * that are not UTF-8 are read as Latin-1. Unterminated quotes are still refused: they swallow rows.
   */
  lenient?: boolean;
  /** Refuse duplicate column names (default true): columns are matched by name, so a duplicate is ambiguous. */
  uniqueHeader?: boolean;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** One delimiter character: anything but a double quote or a line break. */
export const delimiterChar = z
  .string()
  .length(1, { message: "must be exactly one character" })
  .refine((d) => d !== '"' && d !== "\r" && d !== "\n", { message: "cannot be a double quote or a line break" });

/** The `delimiter` param shared by the CSV checks. */
export const delimiterParam = delimiterChar.default(",").describe('Field delimiter, one character (default ","; "\\t" for TSV).');

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** Decodes and parses into header and rows. Errors name the 1-based physical line (quoted newlines count). */
export function parseCsv(input: Uint8Array | string, opts: CsvOptions = {}): Parsed<CsvTable> {
  const grid = scanCsv(input, opts);
  return grid.ok ? { ok: true, value: grid.value.toTable() } : grid;
}

/** Decodes and parses into a grid (see CsvGrid); same rules and messages as parseCsv. */
export function scanCsv(input: Uint8Array | string, opts: CsvOptions = {}): Parsed<CsvGrid> {
  let text: string;
  if (typeof input === "string") {
    text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  } else {
    try {
      // The decoder strips a leading UTF-8 BOM itself (ignoreBOM defaults to false).
      text = new TextDecoder("utf-8", { fatal: true }).decode(input);
    } catch {
      if (opts.lenient !== true) return { ok: false, message: `is not valid UTF-8 (${input.length} bytes); write the file as UTF-8` };
      text = new TextDecoder("latin1").decode(input);
    }
  }
  return scan(text, opts);
}

/** Growable cell spans: where each cell starts and ends in the text. */
class Spans {
  starts = new Int32Array(1024);
  ends = new Int32Array(1024);
  length = 0;
  push(start: number, end: number): void {
    if (this.length === this.starts.length) {
      const grow = (a: Int32Array) => {
        const b = new Int32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.starts = grow(this.starts);
      this.ends = grow(this.ends);
    }
    this.starts[this.length] = start;
    this.ends[this.length] = end;
    this.length++;
  }
}

/** A span end of -1 means the cell's value is in `escaped` (it had "" escapes, or text after a closing quote). */
const ESCAPED = -1;

class Grid implements CsvGrid {
  constructor(
    readonly header: string[],
    private readonly text: string,
    private readonly spans: Spans,
    /** Data row r's cells are spans rowStart[r] .. rowStart[r+1]-1; its raw text is recordStart[r] .. recordEnd[r]. */
    private readonly rowStart: Int32Array,
    private readonly recordStart: Int32Array,
    private readonly recordEnd: Int32Array,
    private readonly escaped: Map<number, string>,
  ) {}

  get rowCount(): number {
    return this.rowStart.length - 1;
  }

  width(r: number): number {
    return (this.rowStart[r + 1] ?? 0) - (this.rowStart[r] ?? 0);
  }

  cell(r: number, c: number): string {
    if (c < 0 || c >= this.width(r)) return "";
    const k = (this.rowStart[r] ?? 0) + c;
    const end = this.spans.ends[k] ?? 0;
    // Stryker disable next-line StringLiteral: equivalent, never used: every ESCAPED span has its text in `escaped`
    if (end === ESCAPED) return this.escaped.get(k) ?? "";
    return this.text.slice(this.spans.starts[k], end);
  }

  raw(r: number): string {
    return this.text.slice(this.recordStart[r], this.recordEnd[r]);
  }

  row(r: number): string[] {
    const out: string[] = [];
    const w = this.width(r);
    for (let c = 0; c < w; c++) out.push(this.cell(r, c));
    return out;
  }

  toTable(): CsvTable {
    const rows: string[][] = [];
    for (let r = 0; r < this.rowCount; r++) rows.push(this.row(r));
    return { header: this.header, rows };
  }
}

function scan(text: string, opts: CsvOptions): Parsed<CsvGrid> {
  const delimiter = (opts.delimiter ?? ",").charCodeAt(0);
  const lenient = opts.lenient === true;
  const n = text.length;
  // Past this index only line breaks follow: trailing blank lines, tolerated (charCodeAt(-1) is NaN, so
  // the loop stops at 0).
  let contentEnd = n;
  while ((text.charCodeAt(contentEnd - 1) === LF || text.charCodeAt(contentEnd - 1) === CR)) contentEnd--;
  if (contentEnd === 0) return { ok: false, message: "is empty: expected a header row" };

  const spans = new Spans();
  const escaped = new Map<number, string>();
  const rowStart: number[] = [];
  const recordStart: number[] = [];
  const recordEnd: number[] = [];
  let header: string[] | null = null;
  let width = 0;
  let line = 1;
  let i = 0;
  let nextQuote = -1;
  const fail = (message: string): Parsed<CsvGrid> => ({ ok: false, message });

  while (i < n) {
    const recordLine = line;
    const recordFrom = i;
    const first = spans.length;
    let recordTo = i;
    // One record: fields until an unquoted line break or the end of the text.
    for (;;) {
      if (text.charCodeAt(i) === QUOTE) {
        const openLine = line;
        const start = i + 1;
        let from = start;
        // Stryker disable next-line BooleanLiteral: equivalent, only saves a map entry: unescaping a field without "" changes nothing
        let doubled = false;
        let q: number;
        for (;;) {
          q = text.indexOf('"', from);
          if (q === -1) return fail(`line ${openLine}: a quoted field is never closed (unterminated double quote)`);
          if (text.charCodeAt(q + 1) !== QUOTE) break;
          doubled = true;
          from = q + 2;
        }
        line += countNewlines(text, start, q);
        i = q + 1;
        const next = text.charCodeAt(i);
        if (i < n && next !== delimiter && next !== LF && next !== CR) {
          if (!lenient) return fail(`line ${line}: unexpected ${JSON.stringify(text[i])} after a closing double quote (a quote inside a quoted field must be doubled: "")`);
          // Lenient: keep what follows the closing quote as part of the field, as Python's csv does.
          const end = unquotedEnd(text, i, delimiter);
          escaped.set(spans.length, unescape(text.slice(start, q)) + text.slice(i, end));
          spans.push(start, ESCAPED);
          i = end;
        } else {
          // Stryker disable next-line ConditionalExpression: always true is equivalent (see `doubled`); always false fails the "" tests
          if (doubled) escaped.set(spans.length, unescape(text.slice(start, q)));
          spans.push(start, doubled ? ESCAPED : q);
        }
      } else {
        const end = unquotedEnd(text, i, delimiter);
        if (!lenient) {
          // The next quote in the text, found again only once passed: linear, however the quotes lie.
          // Stryker disable next-line EqualityOperator: equivalent, nextQuote is never i here (a field at a quote is quoted); >= only costs time, which the linear-time test catches
          if (nextQuote < i) {
            const q = text.indexOf('"', i);
            nextQuote = q === -1 ? Infinity : q;
          }
          // Stryker disable next-line EqualityOperator: <= is equivalent, a quote is never at `end` (a delimiter, line break or the text's end); >= fails the refusal tests
          if (nextQuote < end) {
            return fail(`line ${line}: a double quote inside an unquoted field (field ${spans.length - first + 1}); quote the whole field and double the quote`);
          }
        }
        spans.push(i, end);
        i = end;
      }
      if (spans.length - first > MAX_COLUMNS) return fail(`line ${recordLine}: more than ${MAX_COLUMNS.toLocaleString("en-US")} columns, more than a check reads`);

      const c = text.charCodeAt(i);
      recordTo = i;
      // A delimiter at the very end still opens one last (empty) field: at n the unquoted branch reads "".
      if (c === delimiter) {
        i++;
        continue;
      }
      if (c === CR) {
        if (text.charCodeAt(i + 1) !== LF) {
          if (!lenient) return fail(`line ${line}: a carriage return not followed by a line feed (line breaks must be CRLF or LF)`);
          i += 1;
        } else i += 2;
        line++;
      } else {
        // A line feed, or NaN at the text's end, where stepping past changes nothing.
        i++;
        line++;
      }
      break;
    }

    const fields = spans.length - first;
    // A blank line is a record of one empty, unquoted field (RFC 4180): a one-column table's empty cell.
    // Nothing read means exactly that: a quote or a delimiter moves recordTo past recordFrom.
    const blank = recordTo === recordFrom;
    if (header === null) {
      if (blank) return fail(`line ${recordLine}: the header row is blank`);
      const names: string[] = [];
      for (let k = first; k < spans.length; k++) {
        const end = spans.ends[k] ?? 0;
        // Stryker disable next-line StringLiteral: equivalent, never used: every ESCAPED span has its text in `escaped`
        names.push(end === ESCAPED ? (escaped.get(k) ?? "") : text.slice(spans.starts[k], end));
      }
      header = names;
      width = fields;
      continue;
    }
    // Stryker disable next-line EqualityOperator: > is equivalent, no record starts at contentEnd (a line break ends the one before it); < fails the blank-line tests
    if (blank && (lenient || recordFrom >= contentEnd)) {
      // Skipped (lenient) or trailing line breaks: forget the record's one span.
      spans.length = first;
      escaped.delete(first);
      continue;
    }
    if (!lenient && fields !== width) {
      const hint = blank ? " (a blank line)" : "";
      return fail(`line ${recordLine}: data row ${rowStart.length + 1} has ${fields} field${fields === 1 ? "" : "s"}${hint}, the header has ${width}`);
    }
    // The bound is on data cells: a 100,000 x 10 table is within it.
    if (spans.length - (rowStart[0] ?? first) > MAX_CELLS) return fail(`has more than ${MAX_CELLS.toLocaleString("en-US")} cells, more than a check reads`);
    rowStart.push(first);
    recordStart.push(recordFrom);
    recordEnd.push(recordTo);
  }

  // Stryker disable next-line all: unreachable, kept for the type: a non-empty text's first record is the header or a refusal
  if (header === null) return fail("is empty: expected a header row");
  if (opts.uniqueHeader !== false) {
    const seen = new Map<string, number>();
    for (const [index, name] of header.entries()) {
      const prior = seen.get(name);
      if (prior !== undefined) return fail(`the header names column ${JSON.stringify(name)} twice (columns ${prior + 1} and ${index + 1}); column names must be unique`);
      seen.set(name, index);
    }
  }
  rowStart.push(spans.length);
  return { ok: true, value: new Grid(header, text, spans, Int32Array.from(rowStart), Int32Array.from(recordStart), Int32Array.from(recordEnd), escaped) };
}

function unescape(quoted: string): string {
  return quoted.replaceAll('""', '"');
}

/** Index of the delimiter or line break that ends an unquoted field starting at `from`. */
function unquotedEnd(text: string, from: number, delimiter: number): number {
  let j = from;
  const n = text.length;
  // Stryker disable next-line EqualityOperator: <= is equivalent, charCodeAt(n) is NaN and the one step past n is sliced away
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === delimiter || c === LF || c === CR) break;
    j++;
  }
  return j;
}

/** Line feeds in [from, to): a scan bounded by the field, never past it. */
function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  // Stryker disable next-line EqualityOperator: <= is equivalent, `to` is the closing quote, never a line feed
  for (let j = from; j < to; j++) if (text.charCodeAt(j) === LF) count++;
  return count;
}

function scanNamed(file: NamedFile, label: string, opts: CsvOptions): Parsed<CsvGrid> {
  const parsed = scanCsv(file.content, opts);
  if (!parsed.ok) return { ok: false, message: `${label} ${parsed.message.startsWith("line ") ? `is not valid CSV: ${parsed.message}` : parsed.message}` };
  return parsed;
}

/** A produced CSV artifact, parsed strictly; a missing one says what was returned instead. */
export function loadCsv(ctx: VerifyContext, artifactName: string, opts: CsvOptions = {}): Parsed<CsvGrid> {
  const found = findArtifact(ctx, artifactName);
  if (!found.ok) return found;
  return scanNamed({ name: artifactName, content: found.value }, `artifact ${JSON.stringify(artifactName)}`, opts);
}

/** A client's checker file (hidden material), parsed strictly. */
export function loadCheckerCsv(ctx: VerifyContext, name: string, opts: CsvOptions = {}): Parsed<CsvGrid> {
  const file = ctx.checkerFiles.find((f) => f.name === name);
  if (file === undefined) {
    const have = ctx.checkerFiles.length === 0 ? "the goal has no checker files" : `checker files: ${listQuoted(ctx.checkerFiles.map((f) => f.name))}`;
    return { ok: false, message: `checker file ${JSON.stringify(name)} is not among the goal's checker files (${have})` };
  }
  return scanNamed(file, `checker file ${JSON.stringify(name)}`, opts);
}

/** One of the goal's input files, parsed leniently unless told otherwise (it is the mess being cleaned). */
export function loadInputCsv(ctx: VerifyContext, name: string, opts: CsvOptions = { lenient: true }): Parsed<CsvGrid> {
  const file = ctx.inputs.find((f) => f.name === name);
  if (file === undefined) {
    const have = ctx.inputs.length === 0 ? "the goal has no input files" : `input files: ${listQuoted(ctx.inputs.map((f) => f.name))}`;
    return { ok: false, message: `input file ${JSON.stringify(name)} is not among the goal's input files (${have})` };
  }
  return scanNamed(file, `input file ${JSON.stringify(name)}`, opts);
}

/** A cell for a message or a finding: at most `max` characters, so one huge cell cannot flood a prompt. */
export function clipCell(cell: string, max = 80): string {
  return cell.length > max ? `${cell.slice(0, max)}…` : cell;
}

/** A column name (or a listed value) for a message: quoted and clipped. */
export function quoteName(name: string): string {
  return JSON.stringify(clipCell(name, 60));
}

/** Quoted, clipped names, cut after `max` entries (format.ts's listQuoted, with each name bounded too). */
export function listNames(names: readonly string[], max = 10): string {
  const shown = names.slice(0, max).map(quoteName).join(", ");
  return names.length > max ? `${shown} and ${names.length - max} more` : shown;
}

/** "1 row", "3 rows". */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}
