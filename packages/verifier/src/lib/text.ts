// Text comparison in the modes online judges use (DMOJ's identical / standard / floats / unordered
// checkers): a program's stdout or a text file against the expected text. Pure; the first differences are
// reported with line (and token) numbers, testlib style.
import { z } from "zod";
import { preview } from "../format";
import { numbersClose, parseNumber, differenceNote, type Tolerance } from "./numbers";

export const TEXT_MODES = ["exact", "lines", "tokens", "floats", "unordered_lines"] as const;
export type TextMode = (typeof TEXT_MODES)[number];

export const textModeParam = z
  .enum(TEXT_MODES)
  .default("lines")
  .describe(
    "exact: byte for byte; lines: line by line, trailing whitespace and trailing blank lines ignored; tokens: whitespace-separated tokens; floats: tokens, numbers within atol/rtol; unordered_lines: the same lines in any order",
  );

export interface TextDifference {
  where: string;
  actual?: string;
  expected?: string;
  note?: string;
}

export interface TextComparison {
  equal: boolean;
  differences: TextDifference[];
  count: number;
  /** Material-free summary of the size of the difference ("2 of 10 lines differ"). */
  summary: string;
}

const show = (s: string) => preview(s, 120);

function lines(text: string): string[] {
  const out = text.replace(/\r\n/g, "\n").split("\n").map((l) => l.replace(/[ \t\r\f\v]+$/, ""));
  // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent, out[-1] of an empty array is undefined, not ""
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out;
}

function tokens(text: string): string[] {
  // Stryker disable next-line Regex: equivalent, splitting on single whitespace leaves only empty tokens, which are dropped
  return text.split(/\s+/).filter((t) => t !== "");
}

export function compareText(actual: string, expected: string, opts: { mode: TextMode; tol: Tolerance; caseSensitive: boolean }, limit = 10): TextComparison {
  const fold = (s: string) => (opts.caseSensitive ? s : s.toLowerCase());
  const diffs: TextDifference[] = [];
  let count = 0;
  const add = (d: TextDifference) => {
    count++;
    if (diffs.length < limit) diffs.push(d);
  };
  const done = (summary: string): TextComparison => ({ equal: count === 0, differences: diffs, count, summary });

  switch (opts.mode) {
    case "exact": {
      const a = fold(actual);
      const e = fold(expected);
      if (a === e) return done("the text is identical");
      let at = 0;
      // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator: equivalent, past either end a[at] === e[at] is false (undefined against a character), and both ends at once means a === e, handled above
      while (at < a.length && at < e.length && a[at] === e[at]) at++;
      const line = a.slice(0, at).split("\n").length;
      add({
        where: `character ${at + 1} (line ${line})`,
        actual: show(actual.slice(at, at + 60)),
        expected: show(expected.slice(at, at + 60)),
        note: `lengths: ${actual.length} produced, ${expected.length} expected`,
      });
      return done(`the text differs from character ${at + 1} (line ${line}) on; ${actual.length} characters produced`);
    }
    case "lines": {
      const a = lines(actual);
      const e = lines(expected);
      for (let i = 0; i < Math.max(a.length, e.length); i++) {
        if (i >= a.length) add({ where: `line ${i + 1}`, actual: "(no such line)", expected: show(e[i]!), note: "a line is missing" });
        else if (i >= e.length) add({ where: `line ${i + 1}`, actual: show(a[i]!), note: "an extra line" });
        else if (fold(a[i]!) !== fold(e[i]!)) add({ where: `line ${i + 1}`, actual: show(a[i]!), expected: show(e[i]!) });
      }
      return done(count === 0 ? `all ${a.length} lines match` : `${count} line${count === 1 ? " differs" : "s differ"} (${a.length} line${a.length === 1 ? "" : "s"} produced)`);
    }
    case "tokens":
    case "floats": {
      const a = tokens(actual);
      const e = tokens(expected);
      for (let i = 0; i < Math.max(a.length, e.length); i++) {
        const at = a[i];
        const et = e[i];
        if (at === undefined) add({ where: `token ${i + 1}`, actual: "(no such token)", expected: show(et!), note: "a token is missing" });
        else if (et === undefined) add({ where: `token ${i + 1}`, actual: show(at), note: "an extra token" });
        else if (opts.mode === "floats") {
          const an = parseNumber(at);
          const en = parseNumber(et);
          if (an !== null && en !== null) {
            if (!numbersClose(an, en, opts.tol)) add({ where: `token ${i + 1}`, actual: show(at), expected: show(et), note: differenceNote(an, en, opts.tol) });
          } else if (fold(at) !== fold(et)) {
            add({ where: `token ${i + 1}`, actual: show(at), expected: show(et), note: an === null && en === null ? "text differs" : "a number against text" });
          }
        } else if (fold(at) !== fold(et)) add({ where: `token ${i + 1}`, actual: show(at), expected: show(et) });
      }
      return done(count === 0 ? `all ${a.length} tokens match` : `${count} token${count === 1 ? " differs" : "s differ"} (${a.length} token${a.length === 1 ? "" : "s"} produced)`);
    }
    case "unordered_lines": {
      const a = lines(actual).map(fold);
      const e = lines(expected).map(fold);
      const pool = new Map<string, number>();
      for (const l of a) pool.set(l, (pool.get(l) ?? 0) + 1);
      let missing = 0;
      for (const l of e) {
        const left = pool.get(l) ?? 0;
        if (left > 0) pool.set(l, left - 1);
        else {
          missing++;
          add({ where: "an expected line", expected: show(l), note: "no produced line matches it" });
        }
      }
      let extra = 0;
      for (const [l, left] of pool) {
        for (let k = 0; k < left; k++) {
          extra++;
          add({ where: "a produced line", actual: show(l), note: "matches no expected line" });
        }
      }
      return done(count === 0 ? `all ${a.length} lines match (in any order)` : `${missing} expected line${missing === 1 ? "" : "s"} missing, ${extra} produced line${extra === 1 ? "" : "s"} unmatched (${a.length} lines produced)`);
    }
  }
}
