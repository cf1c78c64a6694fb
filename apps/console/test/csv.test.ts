// The console's CSV reader, which shows a CSV artifact as a table: RFC 4180 quoting, line ends, and the
// row cap that keeps a large file from freezing the page.
import { describe, expect, it } from "vitest";
import { parseCsv } from "../src/csv";

describe("parseCsv", () => {
  it("reads quoted cells with commas, doubled quotes and line breaks", () => {
    expect(parseCsv('id,note\n1,"a, b"\n2,"say ""hi"""\n3,"two\nlines"\n').rows).toEqual([
      ["id", "note"],
      ["1", "a, b"],
      ["2", 'say "hi"'],
      ["3", "two\nlines"],
    ]);
  });

  it("takes CRLF and a missing final line end, and keeps empty cells", () => {
    expect(parseCsv("a,b\r\n1,\r\n,2").rows).toEqual([
      ["a", "b"],
      ["1", ""],
      ["", "2"],
    ]);
  });

  it("stops after the row cap and says it did", () => {
    const text = `n\n${Array.from({ length: 20 }, (_, i) => String(i)).join("\n")}\n`;
    const { rows, truncated } = parseCsv(text, 5);
    expect(truncated).toBe(true);
    expect(rows).toHaveLength(6);
    expect(rows[5]).toEqual(["4"]);
    expect(parseCsv(text, 21).truncated).toBe(false);
  });
});
