// `npm run demo -- --language typescript` (issue 14): a small TypeScript workspace whose definition of done
// is `tsc --noEmit` and its `node --test` suite. src/sum.ts has a type error and a wrong sum; the scripted
// generator's first attempt fixes the type error only (tsc passes, the tests still fail), the refinement
// fixes the sum. Everything runs offline in the Node sandbox image.
import { packWorkspace } from "@loopsmith/verifier";

const file = (path: string, content: string) => ({ path, content: Buffer.from(content) });

export const TS_SUM_BROKEN = 'export function sum(values: number[]): number {\n  let total: number = "0";\n  for (const v of values) total -= v;\n  return total;\n}\n';
export const TS_SUM_TYPED = "export function sum(values: number[]): number {\n  let total = 0;\n  for (const v of values) total -= v;\n  return total;\n}\n";
export const TS_SUM_FIXED = "export function sum(values: number[]): number {\n  let total = 0;\n  for (const v of values) total += v;\n  return total;\n}\n";

export const TS_FILES = [
  file("package.json", JSON.stringify({ name: "sum-lib", private: true, type: "module", scripts: { test: "node --test test/sum.test.ts" } }, null, 2) + "\n"),
  file(
    "tsconfig.json",
    JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", allowImportingTsExtensions: true, types: [] }, include: ["src"] }, null, 2) + "\n",
  ),
  file("src/sum.ts", TS_SUM_BROKEN),
  file(
    "test/sum.test.ts",
    'import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { sum } from "../src/sum.ts";\n\ntest("sums a list", () => assert.equal(sum([1, 2, 3]), 6));\ntest("an empty list sums to 0", () => assert.equal(sum([]), 0));\ntest("negatives", () => assert.equal(sum([-1, -2]), -3));\n',
  ),
];

export const TS_EXPECTED_TAPE = "plan → generate → execute → inspect → refine → execute → inspect → verified";

const no = { verified: false, failing_checks: ["command"], diagnosis: "see the failing command's output", fix_hint: "" };
const yes = { verified: true, failing_checks: [], diagnosis: "tsc and the tests pass", fix_hint: "" };

export async function typescriptDemoGoal(opts: { max_attempts?: number; model?: unknown } = {}) {
  return {
    objective: "Make src/sum.ts type-check and pass the test suite in test/.",
    success: "tsc --noEmit exits 0 and every test in test/sum.test.ts passes; the tests and the configuration stay as they are.",
    language: "typescript",
    workspace: { archive_base64: (await packWorkspace(TS_FILES)).toString("base64"), locked: ["test/", "package.json", "tsconfig.json"] },
    checks: [
      { id: "command", params: { run: "tsc" }, description: "tsc --noEmit passes" },
      { id: "command", params: { run: "npm_test", min_tests: 3 }, description: "npm test (node --test) passes all 3 tests" },
    ],
    max_attempts: opts.max_attempts ?? 5,
    model: opts.model ?? {
      provider: "scripted",
      script: {
        plan: { objective: "fix src/sum.ts", approach: ["fix the type error", "fix the sum"], output_contract: "src/sum.ts changed; tests untouched", checks: [] },
        generate: { filename: "src/sum.ts", language: "typescript", source: TS_SUM_TYPED, notes: "typed the accumulator" },
        inspect: [no, yes],
        refine: [{ filename: "src/sum.ts", language: "typescript", source: TS_SUM_FIXED, notes: "add, do not subtract" }],
      },
    },
  };
}
