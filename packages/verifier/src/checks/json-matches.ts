import { z } from "zod";
import { artifactParam, checkerFileName, findCheckerFile, loadJson, parseJsonFile } from "../artifacts";
import { defineCheck } from "../define";
import { preview } from "../format";
import { jsonPointer, resolvePointer } from "../json-path";
import { toleranceParams } from "../lib/numbers";
import { compareJson, type Difference } from "../lib/values";
import type { Finding } from "../types";

export const maxFindingsParam = z.int().min(1).max(50).default(10).describe("How many differences to report.");

export function differenceFinding(d: Difference, base = ""): Finding {
  const where = `${base}${d.pointer}` || "(the whole value)";
  return {
    where: `${where}: ${d.what}`,
    ...(d.actual !== undefined ? { actual: preview(d.actual) } : {}),
    ...(d.expected !== undefined ? { expected: preview(d.expected) } : {}),
    ...(d.note !== undefined ? { note: d.note } : {}),
  };
}

export const jsonMatches = defineCheck({
  description:
    "A JSON artifact (or the part at `pointer`) equals an expected value: numbers within atol/rtol (integers exactly, also beyond 2^53), everything else exactly; arrays in order unless ignore_order. The expected value is inline (`expected`) or a checker file (`expected_file`, exact JSON).",
  params: z
    .strictObject({
      artifact: artifactParam,
      pointer: jsonPointer.default(""),
      expected: z.unknown().optional().describe("The expected JSON value (inline)."),
      expected_file: checkerFileName.optional(),
      ...toleranceParams,
      ignore_order: z.boolean().default(false).describe("Compare arrays as multisets, at every depth."),
      max_findings: maxFindingsParam,
    })
    .refine((p) => (p.expected === undefined) !== (p.expected_file === undefined), {
      message: "give exactly one of expected or expected_file",
      path: ["expected"],
    }),
  example: { artifact: "result.json", pointer: "/by_region", expected: { North: 10749.9, South: 8552.5 }, atol: 0.005 },
  publicParams: ["artifact", "pointer", "atol", "rtol", "ignore_order"],
  checkerFiles: (p) => (p.expected_file ? [p.expected_file] : []),
  run(p, ctx) {
    let expected: unknown = p.expected;
    if (p.expected_file !== undefined) {
      const file = findCheckerFile(ctx, p.expected_file);
      if (!file.ok) return { passed: false, message: file.message };
      const parsed = parseJsonFile(`checker file "${p.expected_file}"`, file.value);
      if (!parsed.ok) return { passed: false, message: parsed.message };
      expected = parsed.value;
    }
    const doc = loadJson(ctx, p.artifact);
    if (!doc.ok) return { passed: false, message: doc.message };
    const part = resolvePointer(doc.value, p.pointer);
    const at = p.pointer === "" ? `"${p.artifact}"` : `${p.pointer} of "${p.artifact}"`;
    if (!part.ok) return { passed: false, message: `in "${p.artifact}", ${part.message}` };
    const cmp = compareJson(part.value, expected, { tol: { atol: p.atol, rtol: p.rtol }, ignoreOrder: p.ignore_order }, p.max_findings);
    if (cmp.equal) return { passed: true, message: `${at} matches the expected value`, publicMessage: `${at} matches the expected value` };
    const findings = cmp.differences.map((d) => differenceFinding(d, p.pointer));
    const counted = `${cmp.count} difference${cmp.count === 1 ? "" : "s"}`;
    const first = findings
      .slice(0, 3)
      .map((f) => `${f.where}${f.expected !== undefined ? ` - expected ${f.expected}` : ""}${f.actual !== undefined ? `, found ${f.actual}` : ""}`)
      .join("; ");
    return {
      passed: false,
      message: `${at} differs from the expected value (${counted}): ${first}`,
      publicMessage: `${at} differs from the expected value (${counted}) at: ${findings.slice(0, 5).map((f) => f.where).join("; ")}`,
      findings,
    };
  },
});
