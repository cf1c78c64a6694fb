// issue 14: the command check in real sandbox containers (the Node image for tsc / node --test / npm test,
// the Python image for pytest): correct work passes; a type error, a failing test, an early exit, zero
// tests, an edited locked test and an edited runner configuration all fail, with the command's output.
import { SUITE_RUNTIME } from "../../../packages/sandbox/test/support";
import { afterAll, describe, expect, it } from "vitest";
import { createDockerSandbox, dockerClient, nodeSandboxImageTag, routeSandbox, sandboxImageTag } from "@loopsmith/sandbox";
import type { CheckSpec } from "@loopsmith/schemas";
import { applyAttempt, planCheckRuns, runCheck, type Language, type VerifyContext, type WorkspaceFile } from "@loopsmith/verifier";

const docker = dockerClient();
const sandbox = routeSandbox(
  createDockerSandbox({ docker, image: sandboxImageTag(), runnerId: "command-check-test", ociRuntime: SUITE_RUNTIME }),
  createDockerSandbox({ docker, image: nodeSandboxImageTag(), runnerId: "command-check-test", runtime: "node", ociRuntime: SUITE_RUNTIME }),
);
afterAll(() => sandbox.close());

const f = (path: string, content: string): WorkspaceFile => ({ path, content: Buffer.from(content) });

const TS_WORKSPACE = [
  f("package.json", JSON.stringify({ name: "ws", private: true, type: "module", scripts: { test: "node --test test/sum.test.ts" } })),
  f("tsconfig.json", JSON.stringify({ compilerOptions: { strict: true, noEmit: true, target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", allowImportingTsExtensions: true, types: [] }, include: ["src"] })),
  f("src/sum.ts", "export function sum(a: number, b: number): number {\n  return `${a}${b}`;\n}\n"),
  f("test/sum.test.ts", 'import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { sum } from "../src/sum.ts";\ntest("adds", () => assert.equal(sum(1, 2), 3));\ntest("adds negatives", () => assert.equal(sum(-1, -2), -3));\n'),
];
const FIXED = f("src/sum.ts", "export function sum(a: number, b: number): number {\n  return a + b;\n}\n");

async function check(spec: Omit<CheckSpec, "kind" | "description" | "params"> & { params: Record<string, unknown> }, opts: { original: WorkspaceFile[]; attempt: WorkspaceFile[]; locked?: string[]; language?: Language }) {
  const full: CheckSpec = { kind: "deterministic", description: "", ...spec };
  const program = { filename: opts.attempt[0]!.path, source: opts.attempt[0]!.content.toString() };
  const workspace = { original: opts.original, attempt: opts.attempt, locked: opts.locked ?? [] };
  const reqs = planCheckRuns(full, { program, checkerFiles: [], inputs: [], language: opts.language ?? "typescript", workspace });
  expect(reqs).toHaveLength(1);
  const runs = [];
  for (const r of reqs) {
    const { files, ...rest } = r;
    const res = await sandbox.run({ files: [], workFiles: files, ...rest, purpose: "check" });
    runs.push({ ...res, artifacts: res.artifacts.map((a) => ({ name: a.name, content: a.content })) });
  }
  const changed = applyAttempt(opts.original, opts.attempt, [], false).changed;
  const ctx: VerifyContext = { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 0, artifacts: [], artifactErrors: [], inputs: [], checkerFiles: [], program, runs: [], workspace: { changed, locked: opts.locked ?? [], original: opts.original.map((f) => f.path) } };
  return runCheck(full, ctx, runs);
}

describe("command check in the Node image", () => {
  it("tsc --noEmit: the type error fails with tsc's message; the fix passes", async () => {
    const bad = await check({ id: "command", params: { run: "tsc" } }, { original: TS_WORKSPACE, attempt: [TS_WORKSPACE[2]!] });
    expect(bad.passed).toBe(false);
    expect(bad.message).toMatch(/tsc --noEmit exited 2/);
    expect(bad.message).toMatch(/src\/sum\.ts\(2,3\): error TS2322/);
    const good = await check({ id: "command", params: { run: "tsc" } }, { original: TS_WORKSPACE, attempt: [FIXED] });
    expect(good, good.message).toMatchObject({ passed: true });
  }, 60_000);

  it("node --test over TypeScript: failing tests fail with the assertion; the fix passes with both tests counted", async () => {
    const params = { run: "node_test", args: ["test/sum.test.ts"], min_tests: 2 };
    const bad = await check({ id: "command", params }, { original: TS_WORKSPACE, attempt: [TS_WORKSPACE[2]!] });
    expect(bad.passed).toBe(false);
    expect(bad.message).toMatch(/2 tests: 0 passed, 2 failed/);
    expect(bad.findings[0]?.where).toMatch(/adds failed/);
    const good = await check({ id: "command", params }, { original: TS_WORKSPACE, attempt: [FIXED] });
    expect(good, good.message).toMatchObject({ passed: true, message: expect.stringContaining("2 tests: 2 passed") });
  }, 60_000);

  it("a program that exits 0 before the tests run, or a suite with no tests, fails", async () => {
    const params = { run: "node_test", args: ["test/sum.test.ts"] };
    const early = f("src/sum.ts", "process.exit(0);\nexport function sum(a: number, b: number): number {\n  return a + b;\n}\n");
    const res = await check({ id: "command", params }, { original: TS_WORKSPACE, attempt: [early] });
    expect(res.passed).toBe(false);
    expect(res.message).toMatch(/no tests of the client.s ran/);
    const empty = [...TS_WORKSPACE.slice(0, 3), f("test/sum.test.ts", "// no tests here\n")];
    const none = await check({ id: "command", params }, { original: empty, attempt: [FIXED] });
    expect(none.passed).toBe(false);
    expect(none.message).toMatch(/no tests of the client.s ran/);
  }, 60_000);

  it("an attempt that edits a locked test (or package.json) fails, and runs against the original", async () => {
    const gutted = f("test/sum.test.ts", 'import { test } from "node:test";\ntest("adds", () => {});\ntest("adds negatives", () => {});\n');
    const params = { run: "node_test", args: ["test/sum.test.ts"] };
    const res = await check({ id: "command", params }, { original: TS_WORKSPACE, attempt: [TS_WORKSPACE[2]!, gutted], locked: ["test/"] });
    expect(res.passed).toBe(false);
    expect(res.message).toMatch(/changed files it may not change \(test\/sum\.test\.ts\)/);
    // Restored: the client's tests ran, and failed against the unfixed sum.
    expect(res.message).toMatch(/2 failed/);
    const pkg = f("package.json", JSON.stringify({ name: "ws", type: "module", scripts: { test: "true" } }));
    const npm = await check({ id: "command", params: { run: "npm_test" } }, { original: TS_WORKSPACE, attempt: [FIXED, pkg] });
    expect(npm.passed).toBe(false);
    expect(npm.message).toMatch(/changed files it may not change \(package\.json\)/);
    // npm test's JUnit report came through NODE_OPTIONS: the restored suite passed.
    expect(npm.message).toMatch(/With them restored: passed/);
  }, 60_000);
});

describe("command check in the Python image", () => {
  const PY = [f("calc.py", "def add(a, b):\n    return a - b\n"), f("tests/test_calc.py", "from calc import add\n\ndef test_add():\n    assert add(2, 3) == 5\n")];
  it("pytest: failing test fails, the fix passes, a conftest.py the attempt adds is refused", async () => {
    const params = { run: "pytest", args: ["tests"] };
    const bad = await check({ id: "command", params }, { original: PY, attempt: [PY[0]!], language: "python" });
    expect(bad.passed).toBe(false);
    expect(bad.message).toMatch(/1 failed/);
    const fixed = f("calc.py", "def add(a, b):\n    return a + b\n");
    const good = await check({ id: "command", params }, { original: PY, attempt: [fixed], language: "python" });
    expect(good, good.message).toMatchObject({ passed: true });
    const conftest = f("conftest.py", "import pytest\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_call(item):\n    pass\n");
    const sneaky = await check({ id: "command", params }, { original: PY, attempt: [PY[0]!, conftest], language: "python" });
    expect(sneaky.passed).toBe(false);
    expect(sneaky.message).toMatch(/changed files it may not change \(conftest\.py\)/);
  }, 60_000);

  it("pytest: a client's passing unittest.TestCase suite passes, a failing one fails, neither is taken for tampering (issue 26)", async () => {
    // pytest 7.2 (the image's) replaces a unittest test's method at setup, after collection: the observer
    // must still see its body run, or an honest suite reads as a report of tests that never ran.
    const unit = [f("calc.py", "def add(a, b):\n    return a - b\n"), f("tests/test_calc.py", "import unittest\nfrom calc import add\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n")];
    const params = { run: "pytest", args: ["tests"], min_tests: 2 };
    const fixed = f("calc.py", "def add(a, b):\n    return a + b\n");
    const good = await check({ id: "command", params }, { original: unit, attempt: [fixed], language: "python" });
    expect(good.tampered, good.message).toBeUndefined();
    expect(good, good.message).toMatchObject({ passed: true, message: expect.stringContaining("2 tests: 2 passed") });
    const bad = await check({ id: "command", params }, { original: unit, attempt: [unit[0]!], language: "python" });
    expect(bad.tampered, bad.message).toBeUndefined();
    expect(bad.message).toMatch(/2 tests: 1 passed, 1 failed/);
  }, 60_000);
});
