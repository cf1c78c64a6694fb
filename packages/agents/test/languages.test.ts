// issue 14: the generator and refiner state the contract of the goal's language, and a workspace goal's
// prompt lists the workspace (locked files marked) and asks for full files, applied to the original.
import { describe, expect, it } from "vitest";
import { describeWorkspace, generatorRequest, refinerRequest, scriptContract } from "../src/index";

const plan = { objective: "fix sum", approach: ["fix it"], output_contract: "the patch", checks: [] };
const workspace = {
  files: [
    { path: "src/sum.ts", content: Buffer.from("export const sum = (a: number, b: number) => a - b;\n") },
    { path: "test/sum.test.ts", content: Buffer.from("test('adds', () => {});\n") },
    { path: "node_modules/x/index.js", content: Buffer.from("module.exports = 1;\n") },
  ],
  locked: ["test/"],
};

describe("language contracts", () => {
  it("the same variables and output directory in every language, each with its own interpreter", () => {
    const py = scriptContract("result.json", "python");
    const js = scriptContract("result.json", "javascript");
    const ts = scriptContract("result.json", "typescript");
    for (const c of [py, js, ts]) for (const v of ["INPUT_PATH", "INPUT_PATHS", "INPUT_DIR", "OUTPUT_DIR", "Exit with status 0"]) expect(c).toContain(v);
    expect(py).toContain("python3 <filename>");
    expect(js).toContain("node <filename>");
    expect(js).toContain('path.join(process.env.OUTPUT_DIR, "result.json")');
    expect(ts).toMatch(/node --import <TypeScript loader> <filename>.*TypeScript 5\.9/s);
    expect(ts).toMatch(/types are stripped, not checked/);
    // The Python contract is the one every earlier goal was told, word for word.
    expect(scriptContract("result.json")).toBe(py);
  });

  it("a TypeScript workspace goal's generator sees the workspace and is asked for full files", () => {
    const req = generatorRequest({ plan, checks: [], inputs: [], deliverable: "workspace.patch", language: "typescript", workspace });
    expect(req.system).toContain("one complete TypeScript program");
    expect(req.system).toMatch(/FULL new\s+content/);
    expect(req.system).toMatch(/applied to the ORIGINAL workspace/);
    expect(req.system).not.toContain("must write its deliverable");
    expect(req.prompt).toContain("- test/sum.test.ts (24 bytes) [locked]");
    expect(req.prompt).toContain("- node_modules/ (1 files, not shown)");
    expect(req.prompt).toContain("export const sum = (a: number, b: number) => a - b;");
    expect(req.prompt).not.toContain("module.exports = 1;");
  });

  it("the refiner sees the attempt's other files in the goal's language", () => {
    const req = refinerRequest({
      plan,
      code: { filename: "src/sum.ts", language: "typescript", source: "export const sum = 1;", notes: "", files: [{ path: "src/util.ts", content: "export const u = 2;" }] },
      run: { attempt: 1, exitCode: 0, timedOut: false, oomKilled: false, durationMs: 1, stdout: "", stderr: "", artifacts: [], deliverable: null },
      failed: [],
      inspection: { verified: false, failing_checks: [], diagnosis: "d", fix_hint: "h" },
      deliverable: "workspace.patch",
      language: "typescript",
      workspace,
    });
    expect(req.prompt).toContain("```typescript\nexport const sum = 1;");
    expect(req.prompt).toContain("Also changed by that attempt, src/util.ts:");
    expect(req.prompt).toContain("The original workspace:");
    expect(req.system).toContain("node --import <TypeScript loader>");
    expect(describeWorkspace([], [])).toBe("");
  });
});
