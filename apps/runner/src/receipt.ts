// The receipt of a verified goal: read inside the transaction that moves the goal to `verified` (after its
// tape row and the INSPECT step's check results are written), signed, and stored with the goal. A goal is
// therefore never verified without its receipt, and the receipt covers the whole tape, `verified` included.
import { resultMatchesParams, type Tx } from "@loopsmith/db";
import { buildReceiptPayload, signReceipt, type ReceiptFacts } from "@loopsmith/receipts";
import { frozenCheck, generatedCode } from "@loopsmith/schemas";
import { z } from "zod";
import { assertSignable, type ReceiptSigner } from "./receipt-key";

export async function issueReceipt(tx: Tx, goalId: string, signer: ReceiptSigner, at: Date): Promise<void> {
  // Past the key's expiry the move to verified fails (and is retried, then parked) rather than carry a
  // receipt that cannot verify.
  assertSignable(signer, at);
  const facts = await receiptFacts(tx, goalId, at);
  const receipt = signReceipt(buildReceiptPayload(facts, signer.keyId), signer.privateKey);
  await tx.goal.update({ where: { id: goalId }, data: { receipt: JSON.stringify(receipt) } });
}

async function receiptFacts(tx: Tx, goalId: string, at: Date): Promise<ReceiptFacts> {
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
      return {
        id: c.id,
        kind: c.kind,
        source: c.source,
        hidden: c.hidden,
        params: c.params,
        result: r ? { attempt: r.attempt, passed: r.passed, message: r.message } : null,
      };
    }),
    deliverable: goal.deliverable,
    artifacts: exec.artifacts as { name: string; size: number; sha256: string }[],
    // The file name from the tape row that carried the program; the bytes from the execution that ran them.
    program: { filename: generatedCode.parse((code.detail as { code?: unknown }).code).filename, source: exec.script },
    image: { id: exec.imageId, repoDigest: exec.imageDigest, runtime: exec.sandboxRuntime },
    modelCalls: calls.map((m) => ({
      state: m.state,
      attempt: m.attempt,
      provider: m.provider,
      model: m.model,
      systemSha256: m.systemSha256,
      promptSha256: m.promptSha256,
    })),
    tape: tape.map((t) => ({ seq: t.seq, from: t.fromState, to: t.toState, at: t.at.toISOString(), detail: t.detail, hash: t.hash })),
    issuedAt: at,
  };
}
