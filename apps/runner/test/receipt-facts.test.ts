// What a receipt covers is read in one statement inside the move to verified. This holds it to the reading
// it replaced (one Prisma query per table) on real goals: three attempts with the scripted model, check
// results with params, a hidden check that reads a checker file, best-of-N candidates' model calls. Any
// difference (an order, a timestamp's text, a JSON value) would sign something other than the stored tape.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resultMatchesParams, type Tx } from "@loopsmith/db";
import type { ReceiptFacts } from "@loopsmith/receipts";
import { frozenCheck, generatedCode } from "@loopsmith/schemas";
import { z } from "zod";
import { demoGoal, INSPECT_VERIFIED, program, SCRIPT_CORRECT, SCRIPT_CRASHES, scriptedGoal } from "../../../scripts/demo/scenario";
import { startLoop, type Loop } from "../../../tests/support/loop";
import { receiptFacts } from "../src/receipt";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

/** The reading the one statement replaced, query by query, as it was. */
async function referenceFacts(tx: Tx, goalId: string, at: Date): Promise<ReceiptFacts> {
  const goal = await tx.goal.findUniqueOrThrow({ where: { id: goalId }, include: { plan: true } });
  const attempt = goal.attempts;
  const [inputs, checkerFiles, results, exec, code, calls, tape] = await Promise.all([
    tx.goalInput.findMany({ where: { goalId }, orderBy: { name: "asc" }, select: { name: true, sha256: true } }),
    tx.goalCheckerFile.findMany({ where: { goalId }, orderBy: { name: "asc" }, select: { name: true, sha256: true } }),
    tx.checkResult.findMany({ where: { goalId, attempt }, orderBy: { createdAt: "asc" } }),
    tx.execution.findUniqueOrThrow({ where: { goalId_attempt: { goalId, attempt } } }),
    tx.transition.findFirstOrThrow({ where: { goalId, toState: "execute", fromState: { in: ["generate", "refine"] } }, orderBy: { seq: "desc" } }),
    tx.modelCall.findMany({ where: { goalId }, orderBy: [{ createdAt: "asc" }, { id: "asc" }], omit: { request: true, response: true } }),
    tx.transition.findMany({ where: { goalId }, orderBy: { seq: "asc" } }),
  ]);
  const checks = z.array(frozenCheck).parse(goal.plan?.checks ?? []);
  return {
    goalId,
    tenantId: goal.tenantId,
    objective: goal.objective,
    loopsmithVersion: goal.loopsmithVersion,
    attempt,
    inputs,
    checkerFiles,
    checks: checks.map((c) => {
      const r = results.find((row) => row.checkId === c.id && resultMatchesParams(row.params as Record<string, unknown>, c.params));
      return { id: c.id, kind: c.kind, source: c.source, hidden: c.hidden, params: c.params, result: r ? { attempt: r.attempt, passed: r.passed, message: r.message } : null };
    }),
    deliverable: goal.deliverable,
    artifacts: exec.artifacts as { name: string; size: number; sha256: string }[],
    program: { filename: generatedCode.parse((code.detail as { code?: unknown }).code).filename, source: exec.script },
    image: { id: exec.imageId, repoDigest: exec.imageDigest, runtime: exec.sandboxRuntime },
    modelCalls: calls.map((m) => ({ state: m.state, attempt: m.attempt, provider: m.provider, model: m.model, systemSha256: m.systemSha256, promptSha256: m.promptSha256 })),
    tape: tape.map((t) => ({ seq: t.seq, from: t.fromState, to: t.toState, at: t.at.toISOString(), detail: t.detail, hash: t.hash })),
    issuedAt: at,
  };
}

async function bothWays(goalId: string) {
  const at = new Date();
  return loop.prisma.$transaction(async (tx) => ({ read: await receiptFacts(tx, goalId, at), reference: await referenceFacts(tx, goalId, at) }));
}

describe("the receipt's facts, read in one statement", () => {
  it("are what the query-per-table reading gives, for a goal verified on its third attempt with a hidden check", async () => {
    const goal = await loop.run(
      demoGoal({
        checker_files: [{ name: "expected_top.json", text: '"North"' }],
        checks: [...(demoGoal().checks as unknown[]), { id: "json_matches", params: { artifact: "result.json", pointer: "/top_region", expected_file: "expected_top.json" } }],
      }),
    );
    expect(goal.state, goal.tape).toBe("verified");
    expect(goal.attempts).toBe(3);
    const { read, reference } = await bothWays(goal.id);
    expect(read).toStrictEqual(reference);
    // Not empty on the sides that matter: the comparison compares something.
    expect(read.tape.length).toBeGreaterThan(9);
    expect(read.checkerFiles).toHaveLength(1);
    expect(read.checks.filter((c) => c.result !== null).length).toBeGreaterThan(3);
    expect(read.modelCalls.length).toBeGreaterThan(6);
  });

  it("are what the query-per-table reading gives for best-of-N, whose calls share a turn", async () => {
    const goal = await loop.run(
      scriptedGoal({ generate: program(SCRIPT_CRASHES), generate_candidates: [program(SCRIPT_CORRECT)], inspect: [INSPECT_VERIFIED] }, { candidates: 2 }),
    );
    expect(goal.state, goal.tape).toBe("verified");
    const { read, reference } = await bothWays(goal.id);
    expect(read).toStrictEqual(reference);
    expect(read.modelCalls.filter((m) => m.state === "generate")).toHaveLength(2);
  });

  it("refuses, as the reading did, when the goal has no execution for its attempt", async () => {
    const res = await loop.post(demoGoal());
    const id = res.body.id as string;
    await expect(loop.prisma.$transaction((tx) => receiptFacts(tx, id, new Date()))).rejects.toThrow(/execution 0 is missing/);
  });
});
