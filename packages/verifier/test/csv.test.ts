// Issue 10: the CSV reader every CSV check stands on. A reader that guesses lets a wrong file through.
import { describe, expect, it } from "vitest";
import { clipCell, delimiterChar, listNames, loadCheckerCsv, loadCsv, loadInputCsv, MAX_CELLS, MAX_COLUMNS, parseCsv, scanCsv } from "../src/lib/csv";

import { emptyCtx, file } from "./support";

const ctx = emptyCtx;

function ok(input: string | Buffer, opts = {}) {
  const r = parseCsv(input, opts);
  if (!r.ok) throw new Error(`expected a parse, got: ${r.message}`);
  return r.value;
}
function err(input: string | Buffer, opts = {}): string {
  const r = parseCsv(input, opts);
  if (r.ok) throw new Error(`expected an error, parsed ${r.value.rows.length} rows`);
  return r.message;
}

describe("parseCsv: RFC 4180", () => {
  it("reads a header and rows, with or without a final line break", () => {
    expect(ok("a,b\n1,2\n3,4\n")).toEqual({ header: ["a", "b"], rows: [["1", "2"], ["3", "4"]] });
    expect(ok("a,b\n1,2\n3,4")).toEqual({ header: ["a", "b"], rows: [["1", "2"], ["3", "4"]] });
  });

  it("reads CRLF exactly as LF, and mixed line breaks too", () => {
    expect(ok("a,b\r\n1,2\r\n3,4\r\n")).toEqual(ok("a,b\n1,2\n3,4\n"));
    expect(ok("a,b\r\n1,2\n3,4\r\n")).toEqual(ok("a,b\n1,2\n3,4\n"));
  });

  it("strips a UTF-8 BOM from bytes and from text", () => {
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("id,name\n1,Zoë\n")]);
    expect(ok(bom)).toEqual({ header: ["id", "name"], rows: [["1", "Zoë"]] });
    expect(ok("\uFEFFid\n1\n").header).toEqual(["id"]);
  });

  it("reads quoted fields with delimiters, doubled quotes and line breaks inside", () => {
    const t = ok('id,text,n\n1,"Smith, John",2\n2,"say ""hi""",3\n3,"two\r\nlines",4\n4,"",5\n');
    expect(t.rows).toEqual([
      ["1", "Smith, John", "2"],
      ["2", 'say "hi"', "3"],
      ["3", "two\r\nlines", "4"],
      ["4", "", "5"],
    ]);
  });

  it("keeps empty fields, including a trailing one", () => {
    expect(ok("a,b,c\n,,\n1,,\n").rows).toEqual([["", "", ""], ["1", "", ""]]);
    expect(ok("a,b\n1,").rows).toEqual([["1", ""]]);
  });

  it("takes a configurable delimiter (semicolon, tab), where commas are plain text", () => {
    expect(ok("a;b\n1,5;2\n", { delimiter: ";" }).rows).toEqual([["1,5", "2"]]);
    expect(ok("a\tb\n1\t2\n", { delimiter: "\t" }).rows).toEqual([["1", "2"]]);
  });

  it("tolerates trailing blank lines, and reads a blank line in a one-column table as an empty cell", () => {
    expect(ok("a,b\n1,2\n\n\r\n").rows).toEqual([["1", "2"]]);
    expect(ok("x\n1\n\n2\n").rows).toEqual([["1"], [""], ["2"]]);
  });
});

describe("scanCsv: the grid the checks read", () => {
  function grid(input: string, opts = {}) {
    const r = scanCsv(input, opts);
    if (!r.ok) throw new Error(r.message);
    return r.value;
  }

  it("reads a quoted empty field in a one-column table as a cell, not a blank line", () => {
    expect(grid('v\n""\nx\n""\n').toTable().rows).toEqual([[""], ["x"], [""]]);
  });

  it("gives each row's raw text without its line break; equal raw text means equal cells", () => {
    const g = grid('a,b\r\n"x, ""y""",2\r\nplain,3\n"x, ""y""",2');
    expect(g.rowCount).toBe(3);
    expect(g.raw(0)).toBe('"x, ""y""",2');
    expect(g.raw(1)).toBe("plain,3");
    expect(g.raw(2)).toBe(g.raw(0));
    expect(g.cell(0, 0)).toBe('x, "y"');
    expect(g.row(2)).toEqual(g.row(0));
  });

  it("reports each row's width when read leniently, and an empty cell past it", () => {
    const g = grid("a,b,c\n1\n1,2,3,4\n", { lenient: true });
    expect([g.width(0), g.width(1)]).toEqual([1, 4]);
    expect(g.cell(0, 2)).toBe("");
    expect(g.cell(1, 3)).toBe("4");
  });

  // Not in mutation runs (npm run mutate sets MUTATE_TESTS): instrumented code is many times slower, and
  // this is a bound on time, not on behaviour.
  it.skipIf(process.env.MUTATE_TESTS !== undefined)("stays linear on long lines of quoted fields and on a quote far down a long file", () => {
    const wide = `${Array.from({ length: 10_000 }, (_, i) => `h${i}`).join(",")}\n${Array.from({ length: 10_000 }, () => `"${"x".repeat(100)}"`).join(",")}\n`;
    const late = `a,b\n${"1,2\n".repeat(200_000)}"3",4\n`;
    const started = performance.now();
    expect(grid(wide).rowCount).toBe(1);
    expect(grid(late).rowCount).toBe(200_001);
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe("parseCsv: refusals", () => {
  it("refuses an unterminated quote, naming the line where it opened", () => {
    expect(err('a,b\n1,2\n3,"open\n4,5\n')).toBe("line 3: a quoted field is never closed (unterminated double quote)");
  });

  it("refuses a stray quote inside an unquoted field", () => {
    expect(err('a,b\n1,2\n3,4"5\n')).toMatch(/^line 3: a double quote inside an unquoted field \(field 2\)/);
  });

  it("refuses text after a closing quote", () => {
    expect(err('a,b\n"x"y,2\n')).toMatch(/^line 2: unexpected "y" after a closing double quote/);
  });

  it("counts line breaks inside quoted fields in line numbers", () => {
    expect(err('a,b\n"multi\nline\nfield",2\n3\n')).toBe("line 5: data row 2 has 1 field, the header has 2");
  });

  it("refuses a row with a different number of fields, naming the line and both counts", () => {
    expect(err("a,b,c\n1,2,3\n4,5\n")).toBe("line 3: data row 2 has 2 fields, the header has 3");
    expect(err("a,b\n1,2,3\n")).toBe("line 2: data row 1 has 3 fields, the header has 2");
  });

  it("refuses a blank line inside a multi-column table and says it is blank", () => {
    expect(err("a,b\n1,2\n\n3,4\n")).toBe("line 3: data row 2 has 1 field (a blank line), the header has 2");
  });

  it("refuses invalid UTF-8", () => {
    expect(err(Buffer.from([0x61, 0x0a, 0xff, 0xfe, 0x0a]))).toMatch(/^is not valid UTF-8 \(5 bytes\)/);
  });

  it("refuses a bare carriage return outside quotes", () => {
    expect(err("a,b\r1,2\r\n")).toMatch(/^line 1: a carriage return not followed by a line feed/);
  });

  it("refuses an empty file, a BOM alone and a blank header", () => {
    expect(err("")).toMatch(/is empty/);
    expect(err("\n\r\n")).toMatch(/is empty/);
    expect(err(Buffer.from([0xef, 0xbb, 0xbf]))).toMatch(/is empty/);
    expect(err(",\n")).toMatch(/names column "" twice/);
  });

  it("refuses duplicate column names unless told otherwise", () => {
    expect(err("id,x,id\n1,2,3\n")).toBe('the header names column "id" twice (columns 1 and 3); column names must be unique');
    expect(ok("id,x,id\n1,2,3\n", { uniqueHeader: false }).header).toEqual(["id", "x", "id"]);
  });

  it(`refuses more than ${MAX_COLUMNS} columns and more than ${MAX_CELLS} cells`, () => {
    expect(err(`${Array.from({ length: MAX_COLUMNS + 1 }, (_, i) => `c${i}`).join(",")}\n`)).toMatch(/more than 10,000 columns/);
    const header = Array.from({ length: 1000 }, (_, i) => `c${i}`).join(",");
    const row = Array.from({ length: 1000 }, () => "1").join(",");
    // The bound counts data cells: exactly 1,000,000 is allowed, one more row is not.
    const rows = (n: number) => `${header}\n${Array.from({ length: n }, () => row).join("\n")}\n`;
    expect(ok(rows(1000)).rows).toHaveLength(1000);
    expect(err(rows(1001))).toMatch(/more than 1,000,000 cells/);
  });
});

describe("parseCsv: lenient (the goal's own messy inputs)", () => {
  it("accepts ragged rows and stray quotes, skips blank lines, reads Latin-1", () => {
    const t = ok('a,b,c\n1,2\n\n3,4"x,5,6\n"q"z,1,2\n', { lenient: true });
    expect(t.rows).toEqual([["1", "2"], ["3", '4"x', "5", "6"], ["qz", "1", "2"]]);
    const latin1 = Buffer.from([0x6e, 0x0a, 0x5a, 0x6f, 0xeb, 0x0a]);
    expect(ok(latin1, { lenient: true }).rows).toEqual([["Zoë"]]);
  });

  it("still refuses an unterminated quote", () => {
    expect(err('a\n"open\n1\n', { lenient: true })).toMatch(/never closed/);
  });
});

describe("loaders", () => {
  it("loadCsv parses a returned artifact, prefixing errors with its name", () => {
    const c = ctx({ artifacts: [file("out.csv", "a\n1\n"), file("bad.csv", "a,b\n1\n")] });
    const out = loadCsv(c, "out.csv");
    expect(out.ok && out.value.toTable()).toEqual({ header: ["a"], rows: [["1"]] });
    expect(loadCsv(c, "bad.csv")).toEqual({ ok: false, message: 'artifact "bad.csv" is not valid CSV: line 2: data row 1 has 1 field, the header has 2' });
  });

  it("loadCsv names what was returned, and the sandbox's reason, for a missing artifact", () => {
    const c = ctx({ artifacts: [file("result.json", "{}")], artifactErrors: ["timeout while collecting"] });
    const r = loadCsv(c, "clean.csv");
    expect(r).toEqual({ ok: false, message: 'artifact "clean.csv" was not returned (returned artifacts: "result.json"; collection errors: timeout while collecting)' });
    const reasoned = loadCsv(ctx({ artifactErrors: ["clean.csv: larger than 10 MiB"] }), "clean.csv");
    expect(reasoned).toEqual({ ok: false, message: 'artifact "clean.csv" was not returned: clean.csv: larger than 10 MiB' });
  });

  it("loadCheckerCsv and loadInputCsv name the files the goal has", () => {
    const c = ctx({ checkerFiles: [file("expected.csv", "a\n1\n")], inputs: [file("sales.csv", "a,b\n1\n2,3\n")] });
    expect(loadCheckerCsv(c, "expected.csv").ok).toBe(true);
    const missing = loadCheckerCsv(c, "other.csv");
    expect(missing).toEqual({ ok: false, message: 'checker file "other.csv" is not among the goal\'s checker files (checker files: "expected.csv")' });
    const none = loadCheckerCsv(ctx(), "x.csv");
    expect(none).toEqual({ ok: false, message: expect.stringMatching(/the goal has no checker files/) });
    // Inputs are read leniently by default: the ragged row still counts.
    const input = loadInputCsv(c, "sales.csv");
    expect(input.ok && input.value.rowCount).toBe(2);
    const noInput = loadInputCsv(c, "nope.csv");
    expect(noInput).toEqual({ ok: false, message: expect.stringMatching(/input file "nope.csv" is not among the goal's input files \(input files: "sales.csv"\)/) });
  });
});

describe("csv helpers: what mutation testing found untested (issue 18)", () => {
  it("refuses a delimiter that is a quote or a line break, and takes any other one character", () => {
    for (const d of ['"', "\r", "\n", "", ",,"]) expect(delimiterChar.safeParse(d).success, JSON.stringify(d)).toBe(false);
    for (const d of [",", ";", "\t", "|"]) expect(delimiterChar.safeParse(d).success, JSON.stringify(d)).toBe(true);
  });

  it("refuses an empty file and a blank header row", () => {
    expect(err("")).toBe("is empty: expected a header row");
    expect(err("\n1\n")).toBe("line 1: the header row is blank");
  });

  it("reads an escaped header name", () => {
    expect(ok('"a""b",c\n1,2\n').header).toEqual(['a"b', "c"]);
  });

  it("names the input files when one is missing, or says there are none", () => {
    expect(loadInputCsv(ctx(), "x.csv")).toEqual({ ok: false, message: 'input file "x.csv" is not among the goal\'s input files (the goal has no input files)' });
    const some = loadInputCsv(ctx({ inputs: [file("a.csv", "h\n1\n")] }), "x.csv");
    expect(some).toEqual({ ok: false, message: 'input file "x.csv" is not among the goal\'s input files (input files: "a.csv")' });
  });

  it("names the file in a parse error of an input or a checker file", () => {
    const bad = 'a,b\n1,"2\n';
    const input = loadInputCsv(ctx({ inputs: [file("in.csv", bad)] }), "in.csv");
    expect(!input.ok && input.message).toMatch(/^input file "in\.csv" /);
    const checker = loadCheckerCsv(ctx({ checkerFiles: [file("want.csv", bad)] }), "want.csv");
    expect(!checker.ok && checker.message).toMatch(/^checker file "want\.csv" /);
  });

  it("reads no cell outside a row: not the row before's last, not the next row's first", () => {
    const g = scanCsv("a,b\n1,2\n3,4\n");
    if (!g.ok) throw new Error(g.message);
    expect([g.value.cell(1, -1), g.value.cell(0, 2), g.value.cell(0, 1)]).toEqual(["", "", "2"]);
  });

  it("reads a quoted field at the very end of the text, and a quoted empty header name", () => {
    expect(ok('a,b\n1,"x"').rows).toEqual([["1", "x"]]);
    expect(ok('a\n"x"').rows).toEqual([["x"]]);
    expect(ok('""\nx\n').header).toEqual([""]);
    expect(ok('a,b\n"x",').rows).toEqual([["x", ""]]);
  });

  it(`reads exactly ${MAX_COLUMNS} columns, a trailing empty field included`, () => {
    const names = Array.from({ length: MAX_COLUMNS }, (_, i) => `c${i}`);
    expect(ok(`${names.join(",")}\n`).header).toHaveLength(MAX_COLUMNS);
    expect(ok(`${names.slice(1).join(",")},\n`).header).toHaveLength(MAX_COLUMNS);
    expect(err(`${names.join(",")},\n`)).toMatch(/^line 1: more than 10,000 columns/);
  });

  it("counts CRLF line breaks in line numbers, and reads a bare carriage return leniently as a line break", () => {
    expect(err("a,b\r\n1,2\r\n3\r\n")).toBe("line 3: data row 2 has 1 field, the header has 2");
    expect(ok("a,b\r1,2\r3,4\n", { lenient: true })).toEqual({ header: ["a", "b"], rows: [["1", "2"], ["3", "4"]] });
  });

  it("clips cells at the bound, not before, and lists at most max names", () => {
    expect(clipCell("x".repeat(80))).toBe("x".repeat(80));
    expect(clipCell("x".repeat(81))).toBe(`${"x".repeat(80)}…`);
    expect(clipCell("abcd", 3)).toBe("abc…");
    expect(listNames(["a", "b", "c"], 3)).toBe('"a", "b", "c"');
    expect(listNames(["a", "b", "c", "d"], 2)).toBe('"a", "b" and 2 more');
  });
});
