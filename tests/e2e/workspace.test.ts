// issue 14: goals over a code workspace, in TypeScript, JavaScript and Python, through the public API with
// the scripted model. The sandbox really runs every program and every command check (tsc, node --test,
// pytest) in the language's image; the patch and the changed files are stored as the goal's artifacts.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { deflateRawSync } from "node:zlib";
import * as tar from "tar-stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packWorkspace } from "@loopsmith/verifier";
import { startLoop, type Loop } from "../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

const file = (path: string, content: string) => ({ path, content: Buffer.from(content) });
const archive = async (files: { path: string; content: Buffer }[]) => (await packWorkspace(files)).toString("base64");

const SUM_BROKEN = 'export function sum(a: number, b: number): number {\n  const label: number = "sum";\n  return a - b;\n}\n';
const SUM_FIXED = "export function sum(a: number, b: number): number {\n  return a + b;\n}\n";
const TS_FILES = [
  file("package.json", JSON.stringify({ name: "ws", private: true, type: "module", scripts: { test: "node --test test/sum.test.ts" } })),
  file("tsconfig.json", JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", allowImportingTsExtensions: true, types: [] }, include: ["src"] })),
  file("src/sum.ts", SUM_BROKEN),
  file("test/sum.test.ts", 'import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { sum } from "../src/sum.ts";\ntest("adds", () => assert.equal(sum(1, 2), 3));\ntest("adds negatives", () => assert.equal(sum(-1, -2), -3));\n'),
];
const TS_CHECKS = [
  { id: "command", params: { run: "tsc" } },
  { id: "command", params: { run: "node_test", args: ["test/sum.test.ts"], min_tests: 2 } },
];
const inspectNo = { verified: false, failing_checks: [], diagnosis: "see the checks", fix_hint: "" };
const inspectYes = { verified: true, failing_checks: [], diagnosis: "all checks pass", fix_hint: "" };
const plan = { objective: "fix the workspace", approach: ["fix it"], output_contract: "the patch", checks: [] };

describe("a TypeScript workspace", () => {
  it("with a type error and a failing node --test suite is verified once the refinement fixes both; the patch is the deliverable", async () => {
    const goal = await loop.run(
      {
        objective: "Make tsc and the tests pass.",
        language: "typescript",
        workspace: { archive_base64: await archive(TS_FILES), locked: ["test/", "tsconfig.json", "package.json"] },
        checks: TS_CHECKS,
        max_attempts: 3,
        model: {
          provider: "scripted",
          script: {
            plan,
            // Attempt 1 changes nothing that matters: both checks fail on the real output.
            generate: { filename: "src/sum.ts", language: "typescript", source: SUM_BROKEN.replace("a - b", "a - b /* todo */"), notes: "" },
            inspect: [inspectNo, inspectYes],
            refine: [{ filename: "src/sum.ts", language: "typescript", source: SUM_FIXED, notes: "types and logic", files: [{ path: "src/util.ts", content: "export const one = 1;\n" }] }],
          },
        },
      },
      240_000,
    );
    expect(goal.state, `${goal.tape}: ${JSON.stringify(goal.checks.map((c) => c.latest?.message))}`).toBe("verified");
    expect(goal.attempts).toBe(2);
    expect(goal.language).toBe("typescript");
    expect(goal.workspace).toMatchObject({ files: 4, locked: ["test/", "tsconfig.json", "package.json"] });
    const first = goal.transitions.filter((t) => t.from === "inspect")[0]!.detail.checks as { id: string; passed: boolean; message: string }[];
    expect(first.filter((c) => c.id === "command").map((c) => c.passed)).toEqual([false, false]);
    expect(first.find((c) => /tsc/.test(c.message))!.message).toMatch(/error TS2322/);
    expect(first.find((c) => /node --test/.test(c.message))!.message).toMatch(/2 failed/);
    // The tape: each attempt's files and its patch against the original.
    const executed = goal.transitions.filter((t) => t.from === "execute").map((t) => t.detail.workspace as { changed: string[]; patch: string });
    expect(executed[1]!.changed).toEqual(["src/sum.ts", "src/util.ts"]);
    expect(executed[1]!.patch).toContain('-  const label: number = "sum";\n-  return a - b;\n+  return a + b;\n');
    expect(goal.deliverable).toMatchObject({ name: "workspace.patch", artifact: { attempt: 2, name: "workspace.patch" } });
    const stored = await loop.prisma.artifact.findMany({ where: { goalId: goal.id, execution: { attempt: 2 } }, orderBy: { name: "asc" } });
    expect(stored.map((a) => a.name)).toEqual(["workspace.patch", "workspace/src/sum.ts", "workspace/src/util.ts"]);
    expect(Buffer.from(stored[1]!.content).toString()).toBe(SUM_FIXED);
  }, 300_000);

  it("an attempt that edits a locked test file to make it pass is not verified", async () => {
    const goal = await loop.run(
      {
        objective: "Make the tests pass.",
        language: "typescript",
        workspace: { archive_base64: await archive(TS_FILES), locked: ["test/"] },
        checks: [TS_CHECKS[1]],
        max_attempts: 1,
        model: {
          provider: "scripted",
          script: {
            plan,
            generate: {
              filename: "src/sum.ts",
              language: "typescript",
              source: SUM_BROKEN,
              notes: "",
              files: [{ path: "test/sum.test.ts", content: 'import { test } from "node:test";\ntest("adds", () => {});\ntest("adds negatives", () => {});\n' }],
            },
            inspect: [inspectYes],
          },
        },
      },
      180_000,
    );
    expect(goal.state, goal.tape).toBe("failed");
    const check = goal.checks.find((c) => c.id === "command")!;
    expect(check.latest?.passed).toBe(false);
    expect(check.latest?.message).toMatch(/changed files it may not change \(test\/sum\.test\.ts\)/);
  }, 240_000);
});

describe("a JavaScript program goal and a Python workspace goal", () => {
  it("a JavaScript program runs in the Node image under the same contract (OUTPUT_DIR, INPUT_PATH)", async () => {
    const source = 'const fs = require("node:fs");\nconst path = require("node:path");\nconst rows = fs.readFileSync(process.env.INPUT_PATH, "utf8").trim().split("\\n").slice(1);\nfs.writeFileSync(path.join(process.env.OUTPUT_DIR, "result.json"), JSON.stringify({ total: rows.reduce((n, r) => n + Number(r.split(",")[1]), 0) }));\n';
    const goal = await loop.run({
      objective: "Sum the b column.",
      language: "javascript",
      inputs: [{ name: "data.csv", text: "a,b\nx,1\ny,2\n" }],
      checks: [{ id: "json_matches", params: { expected: { total: 3 } } }],
      max_attempts: 1,
      model: { provider: "scripted", script: { plan, generate: { filename: "sum.js", language: "javascript", source, notes: "" }, inspect: [inspectYes] } },
    });
    expect(goal.state, JSON.stringify(goal.checks.map((c) => c.latest?.message))).toBe("verified");
    expect(goal.report).toEqual({ total: 3 });
  }, 180_000);

  it("a Python workspace with a failing pytest suite is verified by the fix", async () => {
    const goal = await loop.run({
      objective: "Fix add.",
      workspace: {
        archive_base64: await archive([file("calc.py", "def add(a, b):\n    return a - b\n"), file("tests/test_calc.py", "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")]),
        locked: ["tests/"],
      },
      checks: [{ id: "command", params: { run: "pytest", args: ["tests"] } }],
      max_attempts: 1,
      model: { provider: "scripted", script: { plan, generate: { filename: "calc.py", language: "python", source: "def add(a, b):\n    return a + b\n", notes: "" }, inspect: [inspectYes] } },
    });
    expect(goal.state, JSON.stringify(goal.checks.map((c) => c.latest?.message))).toBe("verified");
    expect(goal.language).toBe("python");
    expect(goal.deliverable.name).toBe("workspace.patch");
  }, 180_000);
});

describe("issue 25: a large rewrite in a workspace goal", () => {
  it("is diffed within the work limit (the tape names the file written as one replacement), and the stored patch recreates every file byte-exact with GNU patch, a new empty one included", async () => {
    // Lines drawn at random from eight values on both sides: Myers' worst case (before issue 25 the diff
    // of such a file kept a copy of its V map per edit distance on the runner's thread).
    let seed = 25;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
    const few = ["", "}", "  }", "    return x;", "    x += 1;", "  if (x) {", "    y();", "else"];
    const draw = () => `${Array.from({ length: 4000 }, () => few[Math.floor(rnd() * few.length)]!).join("\n")}\n`;
    const [before, after] = [draw(), draw()];
    const original = [file("calc.py", "def add(a, b):\n    return a - b\n"), file("data.txt", before), file("tests/test_calc.py", "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")];
    const goal = await loop.run({
      objective: "Fix add.",
      workspace: { archive_base64: await archive(original), locked: ["tests/"] },
      checks: [{ id: "command", params: { run: "pytest", args: ["tests"] } }],
      max_attempts: 1,
      model: {
        provider: "scripted",
        script: {
          plan,
          generate: { filename: "calc.py", language: "python", source: "def add(a, b):\n    return a + b\n", notes: "", files: [{ path: "data.txt", content: after }, { path: "pkg/__init__.py", content: "" }] },
          inspect: [inspectYes],
        },
      },
    });
    expect(goal.state, JSON.stringify(goal.checks.map((c) => c.latest?.message))).toBe("verified");
    const executed = goal.transitions.find((t) => t.from === "execute")!.detail.workspace as { changed: string[]; patch_not_minimal?: string[] };
    expect(executed.changed).toEqual(["calc.py", "data.txt", "pkg/__init__.py"]);
    expect(executed.patch_not_minimal).toEqual(["data.txt"]);
    const [patch] = await loop.prisma.artifact.findMany({ where: { goalId: goal.id, name: "workspace.patch" } });
    const dir = mkdtempSync(join(tmpdir(), "ws-e2e-patch-"));
    try {
      for (const f of original) {
        mkdirSync(dirname(join(dir, f.path)), { recursive: true });
        writeFileSync(join(dir, f.path), f.content);
      }
      writeFileSync(join(dir, "p.diff"), Buffer.from(patch!.content));
      execFileSync("patch", ["-p1", "--batch", "--silent", "-i", "p.diff"], { cwd: dir });
      expect(readFileSync(join(dir, "data.txt"), "utf8") === after).toBe(true);
      expect(readFileSync(join(dir, "calc.py"), "utf8")).toBe("def add(a, b):\n    return a + b\n");
      expect(readFileSync(join(dir, "pkg/__init__.py"), "utf8")).toBe("");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});

describe("hostile archives", () => {
  async function hostile(entries: { name: string; type?: "file" | "symlink"; linkname?: string }[]) {
    const pack = tar.pack();
    const chunks: Buffer[] = [];
    pack.on("data", (c) => chunks.push(c as Buffer));
    const done = new Promise<void>((r) => pack.on("end", () => r()));
    for (const e of entries) pack.entry({ name: e.name, type: e.type ?? "file", linkname: e.linkname }, e.type === "symlink" ? "" : "x");
    pack.finalize();
    await done;
    return Buffer.concat(chunks).toString("base64");
  }
  it.each([
    [[{ name: "src/ok.ts" }, { name: "../../etc/cron.d/evil" }], "../../etc/cron.d/evil"],
    [[{ name: "/etc/passwd" }], "/etc/passwd"],
    [[{ name: "src/link", type: "symlink", linkname: "../../../root/.ssh/id_rsa" }], "src/link"],
  ] as const)("refuses %j with a 400 naming the entry", async (entries, entry) => {
    const res = await loop.post({
      objective: "x",
      workspace: { archive_base64: await hostile([...entries]) },
      checks: [{ id: "command", params: { run: "pytest" } }],
      model: { provider: "scripted", script: { plan, generate: { filename: "a.py", language: "python", source: "pass", notes: "" }, inspect: [inspectNo] } },
    });
    expect(res.status).toBe(400);
    const error = res.body.error as { code: string; message: string; details: { path: string; entry: string }[] };
    expect(error.code).toBe("LS_ERR_WORKSPACE_ARCHIVE");
    expect(error.details[0]).toMatchObject({ path: "body.workspace.archive_base64", entry });
    expect(error.message).toContain(JSON.stringify(entry));
  });

  /** A one-entry zip of deflated bytes whose directory declares `declared` bytes unpacked. */
  function zipBomb(name: string, deflated: Buffer, declared: number): string {
    const n = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(deflated.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(n.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(deflated.length, 20);
    central.writeUInt32LE(declared, 24);
    central.writeUInt16LE(n.length, 28);
    central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(1, 8);
    end.writeUInt16LE(1, 10);
    end.writeUInt32LE(46 + n.length, 12);
    end.writeUInt32LE(30 + n.length + deflated.length, 16);
    return Buffer.concat([local, n, deflated, central, n, end]).toString("base64");
  }

  it("refuses a zip bomb with a 400 naming the entry, whether its directory tells the truth or lies (issue 28)", async () => {
    // 64 MiB of zeros, 64 KiB deflated: four times what a workspace may hold unpacked.
    const zeros = deflateRawSync(Buffer.alloc(64 << 20));
    for (const [declared, why] of [
      [64 << 20, "the files exceed 16777216 bytes unpacked"],
      [1024, "its size does not match the archive's directory"],
    ] as const) {
      const res = await loop.post({
        objective: "x",
        workspace: { archive_base64: zipBomb("bomb.txt", zeros, declared) },
        checks: [{ id: "command", params: { run: "pytest" } }],
        model: { provider: "scripted", script: { plan, generate: { filename: "a.py", language: "python", source: "pass", notes: "" }, inspect: [inspectNo] } },
      });
      expect(res.status).toBe(400);
      const error = res.body.error as { code: string; details: { entry: string; message: string }[] };
      expect(error.code).toBe("LS_ERR_WORKSPACE_ARCHIVE");
      expect(error.details[0]).toMatchObject({ entry: "bomb.txt", message: `workspace entry "bomb.txt": ${why}` });
    }
  });
});
