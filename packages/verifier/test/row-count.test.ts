// Issue 10: row_count catches the seed's silent row drops; an empty table never passes by default.
import { describe, expect, it } from "vitest";
import { rowCount } from "../src/checks/row-count";
import type { CheckResult, NamedFile } from "../src/types";
import { emptyCtx, file } from "./support";

const ctx = emptyCtx;

/** A CSV with a header and `n` data rows. */
const rows = (n: number, header = "id,amount") => `${header}\n${Array.from({ length: n }, (_, i) => `${i},${i * 2}`).join("\n")}${n > 0 ? "\n" : ""}`;

function count(produced: string | null, params: Record<string, unknown>, inputs: NamedFile[] = []): CheckResult {
  const parsed = rowCount.params.parse({ artifact: "clean.csv", ...params });
  return rowCount.run(parsed, ctx({ artifacts: produced === null ? [] : [file("clean.csv", produced)], inputs }));
}

describe("row_count: equals", () => {
  it("passes the exact count and fails one off either way", () => {
    expect(count(rows(120), { equals: 120 })).toMatchObject({ passed: true, message: 'artifact "clean.csv" has 120 data rows, as required' });
    const fewer = count(rows(119), { equals: 120 });
    expect(fewer).toMatchObject({ passed: false, message: 'artifact "clean.csv" has 119 data rows, expected exactly 120 (1 row fewer)' });
    expect(fewer.findings).toEqual([{ where: "row count", actual: "119", expected: "120", note: "1 row fewer" }]);
    expect(count(rows(121), { equals: 120 }).message).toContain("(1 row more)");
  });

  it("counts records, not lines: a quoted line break is inside one row; CRLF counts the same", () => {
    expect(count('id,note\n1,"two\nlines"\n2,x\n', { equals: 2 }).passed).toBe(true);
    expect(count(rows(3).replace(/\n/g, "\r\n"), { equals: 3 }).passed).toBe(true);
    expect(count(`${rows(3)}\n\n`, { equals: 3 }).passed).toBe(true);
  });

  it("passes an empty table only when equals 0 is said explicitly", () => {
    expect(count(rows(0), { equals: 0 }).passed).toBe(true);
    expect(count(rows(1), { equals: 0 }).passed).toBe(false);
  });
});

describe("row_count: min / max", () => {
  it("passes the edges of the range and fails one past them", () => {
    expect(count(rows(3), { min: 3, max: 5 }).passed).toBe(true);
    expect(count(rows(5), { min: 3, max: 5 }).passed).toBe(true);
    expect(count(rows(2), { min: 3, max: 5 })).toMatchObject({ passed: false, message: 'artifact "clean.csv" has 2 data rows, expected between 3 and 5: 1 fewer than the minimum 3' });
    expect(count(rows(6), { min: 3, max: 5 }).message).toContain("1 more than the maximum 5");
    expect(count(rows(10), { min: 10 }).passed).toBe(true);
    expect(count(rows(9), { min: 10 }).passed).toBe(false);
  });

  it("with only max, the minimum is 1: an empty table fails", () => {
    const r = count(rows(0), { max: 10 });
    expect(r).toMatchObject({ passed: false, message: 'artifact "clean.csv" has 0 data rows, expected between 1 (the default minimum) and 10: 1 fewer than the minimum 1' });
    expect(count(rows(1), { max: 10 }).passed).toBe(true);
    expect(count(rows(0), { min: 0, max: 10 }).passed).toBe(true);
  });
});

describe("row_count: equals_input", () => {
  const input = file("sales.csv", rows(300, "region,amount"));

  it("passes as many rows as the input and fails a dropped third, with a hint", () => {
    expect(count(rows(300), { equals_input: "sales.csv" }, [input])).toMatchObject({ passed: true, message: 'artifact "clean.csv" has 300 data rows; input file "sales.csv" has 300' });
    const r = count(rows(200), { equals_input: "sales.csv" }, [input]);
    expect(r.passed).toBe(false);
    expect(r.message).toBe('artifact "clean.csv" has 200 data rows, expected as many as input file "sales.csv" (300): 100 rows fewer; were rows dropped (a filter, a dropna, a failed parse)?');
    expect(r.findings).toEqual([{ where: "row count", actual: "200", expected: "300", note: "100 rows fewer; tolerance 0" }]);
    expect(count(rows(299), { equals_input: "sales.csv" }, [input]).passed).toBe(false);
    expect(count(rows(301), { equals_input: "sales.csv" }, [input]).passed).toBe(false);
  });

  it("allows tolerance_rows either way, and no more", () => {
    const t = { equals_input: "sales.csv", tolerance_rows: 2 };
    expect(count(rows(298), t, [input]).passed).toBe(true);
    expect(count(rows(302), t, [input]).passed).toBe(true);
    expect(count(rows(297), t, [input]).passed).toBe(false);
    expect(count(rows(303), t, [input]).passed).toBe(false);
  });

  it("reads the messy input leniently: ragged rows, stray quotes, blank lines, Latin-1", () => {
    const messy = Buffer.concat([Buffer.from('region,amount\nNorth,1\nSouth\n\nEa"st,3,extra\n'), Buffer.from([0x5a, 0xfc, 0x72, 0x69, 0x63, 0x68, 0x2c, 0x34, 0x0a])]);
    expect(count(rows(4), { equals_input: "raw.csv" }, [file("raw.csv", messy)]).passed).toBe(true);
    expect(count(rows(5), { equals_input: "raw.csv" }, [file("raw.csv", messy)]).passed).toBe(false);
  });

  it("takes the input's own delimiter", () => {
    const semi = file("eu.csv", "region;amount\nNorth;1,5\nSouth;2,5\n");
    expect(count(rows(2), { equals_input: "eu.csv", input_delimiter: ";" }, [semi]).passed).toBe(true);
    // Read with "," the input's decimal commas would still be one record per line.
    expect(count(rows(2), { equals_input: "eu.csv" }, [semi]).passed).toBe(true);
  });

  it("fails closed on a missing input, an input with no rows, and an unparsable input", () => {
    const missing = count(rows(3), { equals_input: "other.csv" }, [input]);
    expect(missing).toMatchObject({ passed: false, message: 'invalid check: input file "other.csv" is not among the goal\'s input files (input files: "sales.csv")' });
    expect(count(rows(0), { equals_input: "empty.csv" }, [file("empty.csv", "region,amount\n")]).message).toMatch(/has no data rows, so matching its row count would pass an empty output/);
    expect(count(rows(1), { equals_input: "bad.csv" }, [file("bad.csv", 'a\n"open\n1\n')]).message).toMatch(/^invalid check: input file "bad.csv" is not valid CSV: line 2: a quoted field is never closed/);
  });
});

describe("row_count: the produced file", () => {
  it("fails a missing artifact, an empty file, and an unparsable CSV", () => {
    expect(count(null, { equals: 1 })).toMatchObject({ passed: false, message: 'artifact "clean.csv" was not returned (no artifacts were returned)' });
    expect(count("", { min: 0 })).toMatchObject({ passed: false, message: 'artifact "clean.csv" is empty: expected a header row' });
    expect(count("id,amount\n1,2,3\n", { equals: 1 }).message).toBe('artifact "clean.csv" is not valid CSV: line 2: data row 1 has 3 fields, the header has 2');
  });

  it("shows models the same message as the client (nothing here is hidden)", () => {
    const r = count(rows(2), { equals: 3 });
    expect(r.publicMessage).toBe(r.message);
  });
});

describe("row_count: params", () => {
  it("rejects anything but exactly one way to count, and unknown keys", () => {
    const bad: Record<string, unknown>[] = [
      {},
      { equals: 3, min: 1 },
      { equals: 3, equals_input: "a.csv" },
      { min: 1, equals_input: "a.csv" },
      { min: 5, max: 4 },
      { max: 0 },
      { equals: -1 },
      { equals: 1.5 },
      { min: -1 },
      { equals: 3, tolerance_rows: 1 },
      { equals_input: "a.csv", tolerance_rows: -1 },
      { equals: 3, input_delimiter: ";" },
      { equals: 3, tolerance: 1 },
      { equals_input: "" },
      { equals: 3, delimiter: "ab" },
    ];
    for (const params of bad) expect(rowCount.params.safeParse({ artifact: "clean.csv", ...params }).success, JSON.stringify(params)).toBe(false);
    expect(rowCount.params.safeParse({ equals: 3 }).success).toBe(false);
    expect(rowCount.params.safeParse(rowCount.example).success).toBe(true);
  });
});

// Issue 18: the survivors of the mutation run, killed on behaviour.
describe("row_count: exact messages and params", () => {
  const input = file("sales.csv", rows(300, "region,amount"));

  it("min only, max only, a one-point range: the exact messages; no findings on a pass", () => {
    const pass = count(rows(10), { min: 10 });
    expect(pass).toEqual({ passed: true, message: 'artifact "clean.csv" has 10 data rows, at least 10', publicMessage: 'artifact "clean.csv" has 10 data rows, at least 10' });
    expect("findings" in pass).toBe(false);
    expect(count(rows(9), { min: 10 }).message).toBe('artifact "clean.csv" has 9 data rows, expected at least 10: 1 fewer than the minimum 10');
    expect(count(rows(6), { min: 3, max: 5 }).message).toBe('artifact "clean.csv" has 6 data rows, expected between 3 and 5: 1 more than the maximum 5');
    expect(count(rows(7), { max: 5 })).toMatchObject({ passed: false, message: 'artifact "clean.csv" has 7 data rows, expected between 1 (the default minimum) and 5: 2 more than the maximum 5' });
    expect(count(rows(4), { min: 4, max: 4 })).toMatchObject({ passed: true, message: 'artifact "clean.csv" has 4 data rows, between 4 and 4' });
    expect(count(rows(0), { min: 0, max: 0 }).passed).toBe(true);
    expect(count(rows(1), { min: 0, max: 0 }).passed).toBe(false);
    expect("findings" in count(rows(3), { equals: 3 })).toBe(false);
  });

  it("equals_input: the tolerance in the messages, the hint only for fewer rows", () => {
    const t = { equals_input: "sales.csv", tolerance_rows: 2 };
    expect(count(rows(298), t, [input]).message).toBe('artifact "clean.csv" has 298 data rows; input file "sales.csv" has 300 (within 2 rows)');
    expect(count(rows(303), t, [input]).message).toBe('artifact "clean.csv" has 303 data rows, expected as many as input file "sales.csv" (300) (within 2 rows): 3 rows more');
    expect(count(rows(301), { equals_input: "sales.csv", tolerance_rows: 1 }, [input]).message).toBe('artifact "clean.csv" has 301 data rows; input file "sales.csv" has 300 (within 1 row)');
    const more = count(rows(301), { equals_input: "sales.csv" }, [input]);
    expect(more.message).toBe('artifact "clean.csv" has 301 data rows, expected as many as input file "sales.csv" (300): 1 row more');
    expect(more.findings).toEqual([{ where: "row count", actual: "301", expected: "300", note: "1 row more; tolerance 0" }]);
  });

  it("an input with no data rows fails the check", () => {
    expect(count(rows(0), { equals_input: "empty.csv" }, [file("empty.csv", "region,amount\n")]).passed).toBe(false);
  });

  it("reads the artifact with delimiter, and the input with input_delimiter, else delimiter", () => {
    // Read with ",", this artifact's second line has two fields under a one-field header.
    expect(count("a;b\n1,5;2\n3;4\n", { equals: 2, delimiter: ";" }).passed).toBe(true);
    // A quoted line break is one record with ";" and two lines with "," (where the quote is stray).
    const quoted = file("q.csv", 'h1;h2\n1;"x\ny"\n');
    expect(count("a;b\n1;2\n", { equals_input: "q.csv", delimiter: ";" }, [quoted]).passed).toBe(true);
    expect(count("a,b\n1,2\n", { equals_input: "q.csv", input_delimiter: ";" }, [quoted]).passed).toBe(true);
    expect(count("a,b\n1,2\n", { equals_input: "q.csv" }, [quoted]).passed).toBe(false);
  });

  it("takes an input whose header names a column twice", () => {
    expect(count(rows(1), { equals_input: "dup.csv" }, [file("dup.csv", "a,a\n1,2\n")]).passed).toBe(true);
  });

  it("names each param issue with its code and path", () => {
    const issues = (params: Record<string, unknown>) =>
      rowCount.params.safeParse({ artifact: "clean.csv", ...params }).error?.issues.map((i) => ({ code: i.code, path: i.path, message: i.message }));
    expect(issues({})).toEqual([{ code: "custom", path: [], message: "give exactly one of: equals, min and/or max, equals_input" }]);
    expect(issues({ min: 5, max: 4 })).toEqual([{ code: "custom", path: ["min"], message: "min 5 is greater than max 4" }]);
    expect(issues({ max: 0 })).toEqual([{ code: "custom", path: ["max"], message: "max 0 with the default min 1 can never pass; for an empty table say equals: 0" }]);
    expect(issues({ equals: 3, tolerance_rows: 1 })).toEqual([{ code: "custom", path: ["tolerance_rows"], message: "only used with equals_input" }]);
    expect(issues({ equals: 3, input_delimiter: ";" })).toEqual([{ code: "custom", path: ["input_delimiter"], message: "only used with equals_input" }]);
    for (const ok of [{ min: 4, max: 4 }, { min: 0, max: 0 }, { min: 7 }, { max: 1 }]) expect(issues(ok), JSON.stringify(ok)).toBeUndefined();
  });
});
