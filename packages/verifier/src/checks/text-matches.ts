import { z } from "zod";
import { artifactName, checkerFileName, decodeUtf8, findArtifact, findCheckerFile } from "../artifacts";
import { defineCheck } from "../define";
import { toleranceParams } from "../lib/numbers";
import { compareText, textModeParam } from "../lib/text";
import type { CheckResult } from "../types";
import { maxFindingsParam } from "./json-matches";

export const MAX_EXPECTED_TEXT = 1024 * 1024;

export const textMatches = defineCheck({
  description:
    "The program's stdout (`artifact` omitted) or a text artifact equals the expected text (inline `expected` or checker file `expected_file`), DMOJ-style modes: exact, lines (default: trailing whitespace and trailing blank lines ignored), tokens, floats (numbers within atol/rtol), unordered_lines.",
  params: z
    .strictObject({
      artifact: artifactName.optional().describe("A text artifact; the program's stdout when omitted."),
      expected: z.string().max(MAX_EXPECTED_TEXT).optional().describe("The expected text (inline)."),
      expected_file: checkerFileName.optional(),
      mode: textModeParam,
      ...toleranceParams,
      case_sensitive: z.boolean().default(true),
      max_findings: maxFindingsParam,
    })
    .refine((p) => (p.expected === undefined) !== (p.expected_file === undefined), {
      message: "give exactly one of expected or expected_file",
      path: ["expected"],
    }),
  example: { artifact: "answer.txt", expected_file: "expected.txt", mode: "floats", atol: 1e-6 },
  publicParams: ["artifact", "mode", "atol", "rtol", "case_sensitive"],
  checkerFiles: (p) => (p.expected_file ? [p.expected_file] : []),
  run(p, ctx): CheckResult {
    let expected = p.expected;
    if (p.expected_file !== undefined) {
      const file = findCheckerFile(ctx, p.expected_file);
      if (!file.ok) return { passed: false, message: file.message };
      const text = decodeUtf8(`checker file "${p.expected_file}"`, file.value);
      if (!text.ok) return { passed: false, message: text.message };
      expected = text.value;
    }
    let actual: string;
    const what = p.artifact === undefined ? "stdout" : `artifact "${p.artifact}"`;
    if (p.artifact === undefined) {
      // The sandbox clips very long stdout in the middle; a clipped stdout cannot be compared honestly.
      if (/\n…\[clipped \d+ bytes\]…\n/.test(ctx.stdout)) return { passed: false, message: "stdout was clipped by the sandbox's output limit, so it cannot be compared; write long output to a file under OUTPUT_DIR" };
      actual = ctx.stdout;
    } else {
      const found = findArtifact(ctx, p.artifact);
      if (!found.ok) return { passed: false, message: found.message };
      const text = decodeUtf8(what, found.value);
      if (!text.ok) return { passed: false, message: text.message };
      actual = text.value;
    }
    // Stryker disable next-line all: unreachable, the params' refine requires expected or expected_file
    if (expected === undefined) return { passed: false, message: "no expected text" };
    const cmp = compareText(actual, expected, { mode: p.mode, tol: { atol: p.atol, rtol: p.rtol }, caseSensitive: p.case_sensitive }, p.max_findings);
    if (cmp.equal) return { passed: true, message: `${what} matches the expected text (${p.mode}): ${cmp.summary}`, publicMessage: `${what} matches (${p.mode})` };
    const first = cmp.differences
      .slice(0, 3)
      .map((d) => `${d.where}: expected ${d.expected ?? "(nothing)"}, found ${d.actual ?? "(nothing)"}`)
      .join("; ");
    return {
      passed: false,
      message: `${what} differs from the expected text (${p.mode}): ${cmp.summary}; ${first}`,
      publicMessage: `${what} differs from the expected text (${p.mode}): ${cmp.summary}`,
      findings: cmp.differences.map((d) => ({ where: d.where, ...(d.actual !== undefined ? { actual: d.actual } : {}), ...(d.expected !== undefined ? { expected: d.expected } : {}), ...(d.note !== undefined ? { note: d.note } : {}) })),
    };
  },
});
