// A move is one SQL statement (issue 29): the CAS, the tape row and the move's rows land together or not
// at all, and what is stored reads back as it was given (bytes, text, big numbers, JSON).
import { randomBytes } from "node:crypto";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { beforeAll, describe, expect, it } from "vitest";
import { chainHashes } from "@loopsmith/receipts";
import { testDatabase } from "./support/database";

const test = await testDatabase();
const db = test.db;
const { advanceGoal, createGoal, executionRow, artifactRow, checkRunRow, checkResultRow, planRow } = db;
let prisma: typeof test.prisma;
let tenantId: string;

beforeAll(async () => {
  prisma = test.prisma;
  tenantId = (await prisma.tenant.create({ data: { name: "t" } })).id;
});

const goal = () =>
  createGoal(prisma, { tenantId, objective: "o", success: null, checks: [], inputs: [], maxAttempts: 3, budgets: {}, model: null });

/** Walks a new goal to execute (plan, generate), the plan row written with the first move. */
async function atExecute(): Promise<string> {
  const { id } = await goal();
  await advanceGoal(prisma, { goalId: id, fromVersion: 0, from: "plan", to: "generate", detail: { n: 1 }, rows: [planRow({ goalId: id, objective: "o", approach: ["a", { b: 1 }], outputContract: "c", checks: [{ id: "x" }] })] });
  await advanceGoal(prisma, { goalId: id, fromVersion: 1, from: "generate", to: "execute", detail: { code: "print(1)" } });
  return id;
}

function executionOf(goalId: string, stdout: string) {
  return executionRow({
    goalId,
    attempt: 1,
    exitCode: 3,
    stdout,
    stderr: "é\n",
    stdoutTruncated: 2 ** 40 + 1,
    stderrTruncated: 0,
    durationMs: 12,
    timedOut: false,
    oomKilled: true,
    artifacts: [{ name: "a.bin", size: 256, sha256: "s" }],
    imageId: "img",
    imageDigest: null,
    sandboxRuntime: "runc",
    scriptSha256: "h",
    limits: { memory_mb: 512 },
    script: "print('x')",
  });
}

describe("advanceGoal", () => {
  it("writes the move, its tape row (chained) and its rows, and they read back as given", async () => {
    const id = await atExecute();
    const bytes = new Uint8Array(Array.from({ length: 256 }, (_, i) => i));
    const evidence = new Uint8Array(randomBytes(1000));
    const exec = executionOf(id, "naïve ✓ 😀\ttab");
    const { version } = await advanceGoal(prisma, {
      goalId: id,
      fromVersion: 2,
      from: "execute",
      to: "inspect",
      detail: { attempt: 1, nested: { list: [1, "two", null, true] } },
      patch: { attempts: 1 },
      rows: [
        exec.row,
        artifactRow({ goalId: id, executionId: exec.id, name: "a.bin", sha256: "s", size: 256, content: bytes }),
        artifactRow({ goalId: id, executionId: exec.id, name: "b.txt", sha256: "t", size: 0, content: new Uint8Array() }),
        checkRunRow({ goalId: id, executionId: exec.id, attempt: 1, checkIndex: 0, checkId: "cases", evidence }),
        checkResultRow({ goalId: id, executionId: exec.id, attempt: 1, checkId: "c1", params: { k: [1] }, passed: false, message: "m", feedback: "f", hidden: true, findings: [{ row: 2 }], flaky: null }),
        checkResultRow({ goalId: id, executionId: exec.id, attempt: 1, checkId: "c2", params: {}, passed: true, message: "ok", feedback: "", hidden: false, findings: [], flaky: { runs: 3, passed: 2 } }),
      ],
    });
    expect(version).toBe(3);

    const g = await prisma.goal.findUniqueOrThrow({ where: { id } });
    expect([g.state, g.version, g.attempts]).toEqual(["inspect", 3, 1]);
    const plan = await prisma.plan.findUniqueOrThrow({ where: { goalId: id } });
    expect([plan.objective, plan.approach, plan.outputContract, plan.checks]).toEqual(["o", ["a", { b: 1 }], "c", [{ id: "x" }]]);
    const e = await prisma.execution.findUniqueOrThrow({ where: { id: exec.id } });
    expect(e).toMatchObject({ goalId: id, attempt: 1, exitCode: 3, stdout: "naïve ✓ 😀\ttab", stderr: "é\n", durationMs: 12, timedOut: false, oomKilled: true, imageDigest: null, sandboxRuntime: "runc", limits: { memory_mb: 512 } });
    expect(e.stdoutTruncated).toBe(BigInt(2 ** 40 + 1));
    const arts = await prisma.artifact.findMany({ where: { goalId: id }, orderBy: { name: "asc" } });
    expect(arts.map((a) => [a.name, a.executionId, Buffer.from(a.content).toString("hex")])).toEqual([
      ["a.bin", exec.id, Buffer.from(bytes).toString("hex")],
      ["b.txt", exec.id, ""],
    ]);
    const run = await prisma.checkRun.findFirstOrThrow({ where: { goalId: id } });
    expect(Buffer.from(run.evidence).equals(Buffer.from(evidence))).toBe(true);
    const results = await prisma.checkResult.findMany({ where: { goalId: id }, orderBy: { checkId: "asc" } });
    expect(results.map((r) => [r.checkId, r.params, r.passed, r.hidden, r.findings, r.flaky])).toEqual([
      ["c1", { k: [1] }, false, true, [{ row: 2 }], null],
      ["c2", {}, true, false, [], { runs: 3, passed: 2 }],
    ]);

    // The chain holds over what is stored (the hash was computed before the row was written).
    const tape = await prisma.transition.findMany({ where: { goalId: id }, orderBy: { seq: "asc" } });
    const rows = tape.map((t) => ({ seq: t.seq, from: t.fromState, to: t.toState, at: t.at.toISOString(), detail: t.detail }));
    expect(tape.map((t) => t.hash)).toEqual(chainHashes(rows));
    expect(tape.at(-1)!.detail).toEqual({ attempt: 1, nested: { list: [1, "two", null, true] } });
    expect(g.updatedAt.getTime()).toBe(tape.at(-1)!.at.getTime());
  });

  it("a stale move throws LS_ERR_STALE_VERSION and writes nothing: no tape row, no rows", async () => {
    const id = await atExecute();
    const exec = executionOf(id, "out");
    // Version 1 is behind the goal (2); state generate is not its state either.
    for (const [fromVersion, from] of [[1, "execute"], [2, "generate"]] as const) {
      await expect(
        advanceGoal(prisma, { goalId: id, fromVersion, from, to: from === "execute" ? "inspect" : "execute", detail: {}, rows: [exec.row] }),
      ).rejects.toMatchObject({ code: "LS_ERR_STALE_VERSION" });
    }
    expect(await prisma.execution.count({ where: { goalId: id } })).toBe(0);
    expect(await prisma.transition.count({ where: { goalId: id } })).toBe(3);
    expect((await prisma.goal.findUniqueOrThrow({ where: { id } })).version).toBe(2);
  });

  it("a row the database refuses (NUL in text) fails the whole move: the goal stays where it was", async () => {
    const id = await atExecute();
    await expect(
      advanceGoal(prisma, { goalId: id, fromVersion: 2, from: "execute", to: "inspect", detail: {}, patch: { attempts: 1 }, rows: [executionOf(id, "a\u0000b").row] }),
    ).rejects.toThrow();
    const g = await prisma.goal.findUniqueOrThrow({ where: { id } });
    expect([g.state, g.version, g.attempts]).toEqual(["execute", 2, 0]);
    expect(await prisma.transition.count({ where: { goalId: id } })).toBe(3);
  });

  it("a move to failed writes its failure report and reason in the same transaction", async () => {
    const id = await atExecute();
    await advanceGoal(prisma, { goalId: id, fromVersion: 2, from: "execute", to: "inspect", detail: {}, patch: { attempts: 1 }, rows: [executionOf(id, "o").row] });
    await advanceGoal(prisma, { goalId: id, fromVersion: 3, from: "inspect", to: "failed", detail: {}, reason: "budget_attempts", failure: { message: "out of attempts" } });
    const g = await prisma.goal.findUniqueOrThrow({ where: { id } });
    expect([g.state, g.failureReason, g.finishedAt !== null]).toEqual(["failed", "budget_attempts", true]);
    expect(g.failureReport).toMatchObject({ reason: "budget_attempts", message: "out of attempts" });
    const last = await prisma.transition.findFirstOrThrow({ where: { goalId: id }, orderBy: { seq: "desc" } });
    expect(last.detail).toEqual({ reason: "budget_attempts" });
  });
});

describe("what a statement leaves behind", () => {
  // Prisma keeps the arguments of its last 100 debug calls (on or off), and for $queryRawUnsafe that was
  // the statement's text and every parameter: a process held the payloads of its last hundred goals and
  // moves (up to 100 bodies of 16 MB in the API). A statement goes past Prisma (sendStatement), so what it
  // carried is garbage once it returns.
  it("a goal's files and a move's artifacts are not held once their statements returned", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const heapAfterGc = () => {
      gc();
      gc();
      // Strings Prisma decoded from its query compiler live outside the JS heap (external).
      const m = process.memoryUsage();
      return m.heapUsed + m.external;
    };
    const MB = 1 << 20;
    const warm = await atExecute(); // the statements' shapes compiled, the pool's connections open
    await advanceGoal(prisma, { goalId: warm, fromVersion: 2, from: "execute", to: "inspect", detail: {}, rows: [executionOf(warm, "o").row] });
    const before = heapAfterGc();
    for (let i = 0; i < 8; i++) {
      const content = randomBytes(2 * MB);
      const { id } = await createGoal(prisma, { tenantId, objective: "o", success: null, checks: [], inputs: [{ name: "in.bin", content, sha256: "s" }], maxAttempts: 3, budgets: {}, model: null });
      await advanceGoal(prisma, { goalId: id, fromVersion: 0, from: "plan", to: "generate", detail: {} });
      await advanceGoal(prisma, { goalId: id, fromVersion: 1, from: "generate", to: "execute", detail: {} });
      const exec = executionOf(id, "o");
      const artifact = artifactRow({ goalId: id, executionId: exec.id, name: "a.bin", sha256: "s", size: 2 * MB, content: randomBytes(2 * MB) });
      await advanceGoal(prisma, { goalId: id, fromVersion: 2, from: "execute", to: "inspect", detail: {}, rows: [exec.row, artifact] });
      // And a Prisma query carrying as much (as a model call's prompt or a webhook's payload does).
      await prisma.goal.updateMany({ where: { id: "00000000-0000-4000-8000-000000000000" }, data: { objective: randomBytes(MB).toString("hex") } });
    }
    // 48 MiB went through as parameters (more as Prisma's text of them); what stays is the client's own growth.
    const grewMb = (heapAfterGc() - before) / MB;
    expect(grewMb).toBeLessThan(6);
  });
});
