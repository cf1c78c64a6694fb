import { z } from "zod";
import { findArtifact } from "../artifacts";
import { listQuoted } from "../format";
import type { NamedFile, VerifyContext } from "../types";

// RFC 4180, read strictly: a deliverable that a spreadsheet or pandas would read differently from us (a
// stray quote, a ragged row, mojibake) is a failure with a line number, never a best guess. Inputs are
// the exception: the goal's own messy file is read leniently, because a check must not fail closed on
// the very mess the program was asked to clean (see `lenient`).

export const MAX_CELLS = 1_000_000;
export const MAX_COLUMNS = 10_000;

export interface CsvTable {
  header: string[];
  /** Data rows (header excluded); in strict mode every row has exactly header.length cells. */
  rows: string[][];
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

/** The `delimiter` param shared by the CSV checks. */
export const delimiterChar = z
  .string()
  .length(1, { message: "must be exactly one character" })
  .refine((d) => d !== '"' && d !== "\r" && d !== "\n", { message: "cannot be a double quote or a line break" });

export const delimiterParam = delimiterChar
  .default(",")
  .describe('Field delimiter, one character (default ","; "\\t" for TSV).');

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

/** Decodes and parses. Errors name the 1-based physical line (quoted newlines count as lines). */
export function parseCsv(input: Uint8Array | string, opts: CsvOptions = {}): Parsed<CsvTable> {
  let text: string;
  if (typeof input === "string") {
    text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  } else {
    try {
      // The decoder strips a leading UTF-8 BOM itself (ignoreBOM defaults to false).
      text = new TextDecoder("utf-8", { fatal: true }).decode(input);
    } catch {
      if (!opts.lenient) return { ok: false, message: `is not valid UTF-8 (${input.length} bytes); write the file as UTF-8` };
      text = new TextDecoder("latin1").decode(input);
    }
  }
  return parseText(text, opts);
}

function parseText(text: string, opts: CsvOptions): Parsed<CsvTable> {
  const lenient = opts.lenient === true;
  // Past this index only line breaks follow: trailing blank lines, tolerated.
  let contentEnd = text.length;
  while (contentEnd > 0 && (text.charCodeAt(contentEnd - 1) === LF || text.charCodeAt(contentEnd - 1) === CR)) contentEnd--;
  if (contentEnd === 0) return { ok: false, message: "is empty: expected a header row" };

  // Most files have no quotes at all; native split reads those several times faster than a char loop.
  let table = new TableBuilder(lenient);
  let error = text.indexOf('"') === -1 ? splitUnquoted(text, contentEnd, opts.delimiter ?? ",", table) : undefined;
  if (error === undefined) {
    table = new TableBuilder(lenient);
    error = tokenize(text, contentEnd, opts, table);
  }
  if (error !== null) return { ok: false, message: error };
  const { header, records } = table;
  if (header === null) return { ok: false, message: "is empty: expected a header row" };
  if (opts.uniqueHeader !== false) {
    const seen = new Map<string, number>();
    for (const [index, name] of header.entries()) {
      const first = seen.get(name);
      if (first !== undefined) {
        return { ok: false, message: `the header names column ${JSON.stringify(name)} twice (columns ${first + 1} and ${index + 1}); column names must be unique` };
      }
      seen.set(name, index);
    }
  }
  return { ok: true, value: { header, rows: records } };
}

/** Collects records into a header and rows, enforcing the shape and the bounds. */
class TableBuilder {
  header: string[] | null = null;
  readonly records: string[][] = [];
  private width = 0;
  private cells = 0;
  constructor(private readonly lenient: boolean) {}

  /** An error message, or null when the record was taken (or skipped). */
  add(record: string[], recordLine: number): string | null {
    if (record.length > MAX_COLUMNS) return `line ${recordLine}: more than ${MAX_COLUMNS.toLocaleString("en-US")} columns, more than a check reads`;
    const blank = record.length === 1 && record[0] === "";
    if (this.header === null) {
      if (blank) return `line ${recordLine}: the header row is blank`;
      this.header = record;
      this.width = record.length;
      return null;
    }
    // A blank line is a record of one empty field (RFC 4180), which only a one-column table can hold.
    if (blank && this.lenient) return null;
    if (!this.lenient && record.length !== this.width) {
      const hint = blank ? " (a blank line)" : "";
      return `line ${recordLine}: data row ${this.records.length + 1} has ${record.length} field${record.length === 1 ? "" : "s"}${hint}, the header has ${this.width}`;
    }
    // The bound is on data cells: a 100,000 x 10 table is within it.
    this.cells += record.length;
    if (this.cells > MAX_CELLS) return `has more than ${MAX_CELLS.toLocaleString("en-US")} cells, more than a check reads`;
    this.records.push(record);
    return null;
  }
}

/** The fast path for text without a double quote; undefined sends the text to the full tokenizer. */
function splitUnquoted(text: string, contentEnd: number, delimiter: string, table: TableBuilder): string | null | undefined {
  // The limit keeps a file of millions of empty lines from allocating them all before the cell bound.
  const lines = text.slice(0, contentEnd).split("\n", MAX_CELLS + 2);
  for (let k = 0; k < lines.length; k++) {
    let line = lines[k] ?? "";
    if (line.charCodeAt(line.length - 1) === CR) line = line.slice(0, -1);
    // A carriage return that ends no line: the tokenizer says where (or, lenient, how to read it).
    if (line.indexOf("\r") !== -1) return undefined;
    const error = table.add(line.split(delimiter, MAX_COLUMNS + 1), k + 1);
    if (error !== null) return error;
  }
  return null;
}

/** The full RFC 4180 reader: quoted fields, "" escapes, line breaks inside quotes. */
function tokenize(text: string, contentEnd: number, opts: CsvOptions, table: TableBuilder): string | null {
  const delimiter = (opts.delimiter ?? ",").charCodeAt(0);
  const lenient = opts.lenient === true;
  const n = text.length;
  let line = 1;
  let i = 0;

  while (i < n) {
    const recordLine = line;
    const record: string[] = [];
    // One record: fields until an unquoted line break or the end of the text.
    for (;;) {
      let field: string;
      if (text.charCodeAt(i) === QUOTE) {
        const openLine = line;
        let value = "";
        let start = i + 1;
        for (;;) {
          const q = text.indexOf('"', start);
          if (q === -1) return `line ${openLine}: a quoted field is never closed (unterminated double quote)`;
          value += text.slice(start, q);
          line += countNewlines(text, start, q);
          if (text.charCodeAt(q + 1) === QUOTE) {
            value += '"';
            start = q + 2;
            continue;
          }
          i = q + 1;
          break;
        }
        const next = text.charCodeAt(i);
        if (i < n && next !== delimiter && next !== LF && next !== CR) {
          if (!lenient) return `line ${line}: unexpected ${JSON.stringify(text[i])} after a closing double quote (a quote inside a quoted field must be doubled: "")`;
          // Lenient: keep what follows the closing quote as part of the field, as Python's csv does.
          const end = fieldEnd(text, i, delimiter);
          value += text.slice(i, end);
          i = end;
        }
        field = value;
      } else {
        const end = fieldEnd(text, i, delimiter);
        field = text.slice(i, end);
        if (!lenient && field.indexOf('"') !== -1) {
          return `line ${line}: a double quote inside an unquoted field (field ${record.length + 1}); quote the whole field and double the quote`;
        }
        i = end;
      }
      record.push(field);
      if (record.length > MAX_COLUMNS) return `line ${recordLine}: more than ${MAX_COLUMNS.toLocaleString("en-US")} columns, more than a check reads`;

      const c = text.charCodeAt(i);
      if (c === delimiter) {
        i++;
        // A delimiter at the very end still opens one last (empty) field.
        if (i === n) record.push("");
        else continue;
      }
      if (c === CR) {
        if (text.charCodeAt(i + 1) !== LF) {
          if (!lenient) return `line ${line}: a carriage return not followed by a line feed (line breaks must be CRLF or LF)`;
          i += 1;
        } else i += 2;
        line++;
      } else if (c === LF) {
        i++;
        line++;
      }
      break;
    }
    // Blank lines at the end of the file are trailing line breaks, not records.
    if (record.length === 1 && record[0] === "" && i > contentEnd && table.header !== null) break;
    const error = table.add(record, recordLine);
    if (error !== null) return error;
  }
  return null;
}

/** Index of the delimiter or line break that ends an unquoted field starting at `from`. */
function fieldEnd(text: string, from: number, delimiter: number): number {
  let j = from;
  const n = text.length;
  while (j < n) {
    const c = text.charCodeAt(j);
    if (c === delimiter || c === LF || c === CR) break;
    j++;
  }
  return j;
}

function countNewlines(text: string, from: number, to: number): number {
  let count = 0;
  for (let j = text.indexOf("\n", from); j !== -1 && j < to; j = text.indexOf("\n", j + 1)) count++;
  return count;
}

function parseNamed(file: NamedFile, label: string, opts: CsvOptions): Parsed<CsvTable> {
  const parsed = parseCsv(file.content, opts);
  if (!parsed.ok) return { ok: false, message: `${label} ${parsed.message.startsWith("line ") ? `is not valid CSV: ${parsed.message}` : parsed.message}` };
  return parsed;
}

/** A produced CSV artifact, parsed strictly; a missing one says what was returned instead. */
export function loadCsv(ctx: VerifyContext, artifactName: string, opts: CsvOptions = {}): Parsed<CsvTable> {
  const found = findArtifact(ctx, artifactName);
  if (!found.ok) return found;
  return parseNamed({ name: artifactName, content: found.value }, `artifact ${JSON.stringify(artifactName)}`, opts);
}

/** A client's checker file (hidden material), parsed strictly. */
export function loadCheckerCsv(ctx: VerifyContext, name: string, opts: CsvOptions = {}): Parsed<CsvTable> {
  const file = ctx.checkerFiles.find((f) => f.name === name);
  if (file === undefined) {
    const have = ctx.checkerFiles.length === 0 ? "the goal has no checker files" : `checker files: ${listQuoted(ctx.checkerFiles.map((f) => f.name))}`;
    return { ok: false, message: `checker file ${JSON.stringify(name)} is not among the goal's checker files (${have})` };
  }
  return parseNamed(file, `checker file ${JSON.stringify(name)}`, opts);
}

/** One of the goal's input files, parsed leniently unless told otherwise (it is the mess being cleaned). */
export function loadInputCsv(ctx: VerifyContext, name: string, opts: CsvOptions = { lenient: true }): Parsed<CsvTable> {
  const file = ctx.inputs.find((f) => f.name === name);
  if (file === undefined) {
    const have = ctx.inputs.length === 0 ? "the goal has no input files" : `input files: ${listQuoted(ctx.inputs.map((f) => f.name))}`;
    return { ok: false, message: `input file ${JSON.stringify(name)} is not among the goal's input files (${have})` };
  }
  return parseNamed(file, `input file ${JSON.stringify(name)}`, opts);
}

/** A cell for a message or a finding: at most `max` characters, so one huge cell cannot flood a prompt. */
export function clipCell(cell: string, max = 80): string {
  return cell.length > max ? `${cell.slice(0, max)}…` : cell;
}

/** "1 row", "3 rows". */
export function plural(count: number, noun: string, nouns = `${noun}s`): string {
  return `${count} ${count === 1 ? noun : nouns}`;
}
