import { z } from "zod";
import { defineCheck } from "../define";
import { delimiterChar, delimiterParam, loadCsv, loadInputCsv, plural } from "../lib/csv";
import type { CheckResult } from "../types";

// The seed's failure mode: a cleaning script that silently drops a third of the rows. A row count is
// cheap to state and catches it. Thresholds that default to 0 are a known false-accept trap, so an
// empty table passes only when the client says so explicitly (equals 0 or min 0).

const count = z.number().int().nonnegative();

const params = z
  .strictObject({
    artifact: z.string().min(1).describe("The produced CSV, a path relative to the output directory."),
    equals: count.optional().describe("Exactly this many data rows."),
    min: count.optional().describe("At least this many data rows (default 1 when only max is given)."),
    max: count.optional().describe("At most this many data rows."),
    equals_input: z.string().min(1).optional().describe("As many data rows as this input file (a CSV)."),
    tolerance_rows: count.optional().describe("With equals_input: how many rows more or fewer are allowed (default 0)."),
    delimiter: delimiterParam,
    input_delimiter: delimiterChar.optional().describe("With equals_input: the input file's delimiter (default: delimiter)."),
  })
  .superRefine((p, ctx) => {
    const modes = [p.equals !== undefined, p.min !== undefined || p.max !== undefined, p.equals_input !== undefined].filter(Boolean).length;
    if (modes !== 1) ctx.addIssue({ code: "custom", message: "give exactly one of: equals, min and/or max, equals_input" });
    if ((p.min ?? 0) > (p.max ?? Infinity)) ctx.addIssue({ code: "custom", path: ["min"], message: `min ${p.min} is greater than max ${p.max}` });
    if (p.min === undefined && p.max === 0) ctx.addIssue({ code: "custom", path: ["max"], message: "max 0 with the default min 1 can never pass; for an empty table say equals: 0" });
    if (p.equals_input === undefined && p.tolerance_rows !== undefined) ctx.addIssue({ code: "custom", path: ["tolerance_rows"], message: "only used with equals_input" });
    if (p.equals_input === undefined && p.input_delimiter !== undefined) ctx.addIssue({ code: "custom", path: ["input_delimiter"], message: "only used with equals_input" });
  });

export const rowCount = defineCheck({
  description:
    'The number of data rows (header excluded) of a produced CSV. Params: artifact (required) and exactly one of: equals (an int >= 0); min and/or max (ints; when only max is given, min is 1: an empty table passes only with an explicit equals 0 or min 0); equals_input (an input file\'s name: the same number of data rows as that CSV, blank lines not counted) with tolerance_rows (default 0) and input_delimiter (default: delimiter). delimiter (default ",").',
  params,
  example: { artifact: "clean.csv", equals_input: "sales.csv" },
  publicParams: ["artifact", "equals", "min", "max", "equals_input", "tolerance_rows", "delimiter", "input_delimiter"],
  run(p, ctx) {
    const art = JSON.stringify(p.artifact);
    const loaded = loadCsv(ctx, p.artifact, { delimiter: p.delimiter });
    if (!loaded.ok) return publicResult(false, loaded.message);
    const rows = loaded.value.rowCount;
    const has = `artifact ${art} has ${plural(rows, "data row")}`;
    const finding = (expected: string, note: string) => [{ where: "row count", actual: String(rows), expected, note }];

    if (p.equals !== undefined) {
      if (rows === p.equals) return publicResult(true, `${has}, as required`);
      return publicResult(false, `${has}, expected exactly ${p.equals} (${difference(rows, p.equals)})`, finding(String(p.equals), difference(rows, p.equals)));
    }

    if (p.equals_input !== undefined) {
      const input = loadInputCsv(ctx, p.equals_input, { delimiter: p.input_delimiter ?? p.delimiter, lenient: true, uniqueHeader: false });
      if (!input.ok) return publicResult(false, `invalid check: ${input.message}`);
      const want = input.value.rowCount;
      const name = JSON.stringify(p.equals_input);
      if (want === 0) return publicResult(false, `invalid check: input file ${name} has no data rows, so matching its row count would pass an empty output`);
      const tolerance = p.tolerance_rows ?? 0;
      const allowed = tolerance === 0 ? "" : ` (within ${plural(tolerance, "row")})`;
      if (Math.abs(rows - want) <= tolerance) return publicResult(true, `${has}; input file ${name} has ${want}${allowed}`);
      return publicResult(
        false,
        // Stryker disable next-line EqualityOperator: equivalent, rows equal to want pass above (tolerance >= 0)
        `${has}, expected as many as input file ${name} (${want})${allowed}: ${difference(rows, want)}${rows < want ? "; were rows dropped (a filter, a dropna, a failed parse)?" : ""}`,
        finding(String(want), `${difference(rows, want)}; tolerance ${tolerance}`),
      );
    }

    const min = p.min ?? 1;
    const range = p.max === undefined ? `at least ${min}` : `between ${min}${p.min === undefined ? " (the default minimum)" : ""} and ${p.max}`;
    if (rows >= min && (p.max === undefined || rows <= p.max)) return publicResult(true, `${has}, ${range}`);
    // Stryker disable next-line EqualityOperator: equivalent, rows equal to min fail only above max, and the schema refuses min > max
    const note = rows < min ? `${min - rows} fewer than the minimum ${min}` : `${rows - (p.max ?? 0)} more than the maximum ${p.max}`;
    return publicResult(false, `${has}, expected ${range}: ${note}`, finding(range, note));
  },
});

function difference(actual: number, expected: number): string {
  // Stryker disable next-line EqualityOperator: equivalent, only called with actual !== expected
  return actual < expected ? `${plural(expected - actual, "row")} fewer` : `${plural(actual - expected, "row")} more`;
}

/** Nothing row_count reads is hidden material, so models see the same message as the client. */
function publicResult(passed: boolean, message: string, findings?: CheckResult["findings"]): CheckResult {
  return { passed, message, publicMessage: message, ...(findings !== undefined ? { findings } : {}) };
}
