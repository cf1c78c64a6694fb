// The receipt of a verified goal: read inside the transaction that moves the goal to `verified` (after its
// tape row and the INSPECT step's check results are written), signed, and stored with the goal. A goal is
// therefore never verified without its receipt, and the receipt covers the whole tape, `verified` included.
import { resultMatchesParams, sendStatement, type Tx } from "@loopsmith/db";
import { buildReceiptPayload, signReceipt, type ReceiptFacts } from "@loopsmith/receipts";
import { frozenCheck, generatedCode } from "@loopsmith/schemas";
import { z } from "zod";
import { assertSignable, type ReceiptSigner } from "./receipt-key";
import { missing } from "./states/evidence";

export async function issueReceipt(tx: Tx, goalId: string, signer: ReceiptSigner, at: Date): Promise<void> {
  // Past the key's expiry the move to verified fails (and is retried, then parked) rather than carry a
  // receipt that cannot verify.
  assertSignable(signer, at);
  const facts = await receiptFacts(tx, goalId, at);
  const receipt = signReceipt(buildReceiptPayload(facts, signer.keyId), signer.privateKey);
  await tx.goal.update({ where: { id: goalId }, data: { receipt: JSON.stringify(receipt) } });
}

/**
 * Everything the receipt covers, read in one statement inside the move's transaction (it sees the tape row
 * and check results the move wrote). One round trip instead of ten: each statement of an interactive
 * transaction waits for the one before, and this transaction holds the goal's row meanwhile.
 */
const FACTS_SQL = `SELECT json_build_object(
  'goal', (SELECT json_build_object('tenant_id', g.tenant_id, 'objective', g.objective, 'loopsmith_version', g.loopsmith_version,
      'attempts', g.attempts, 'deliverable', g.deliverable, 'checks', p.checks)
    FROM goals g LEFT JOIN plans p ON p.goal_id = g.id WHERE g.id = $1::uuid),
  'inputs', (SELECT coalesce(json_agg(json_build_object('name', i.name, 'sha256', i.sha256) ORDER BY i.name), '[]') FROM goal_inputs i WHERE i.goal_id = $1::uuid),
  'checker_files', (SELECT coalesce(json_agg(json_build_object('name', f.name, 'sha256', f.sha256) ORDER BY f.name), '[]') FROM goal_checker_files f WHERE f.goal_id = $1::uuid),
  'results', (SELECT coalesce(json_agg(json_build_object('check_id', r.check_id, 'params', r.params, 'attempt', r.attempt, 'passed', r.passed, 'message', r.message) ORDER BY r.created_at, r.id), '[]')
    FROM check_results r JOIN goals g ON g.id = r.goal_id AND r.attempt = g.attempts WHERE r.goal_id = $1::uuid),
  'exec', (SELECT json_build_object('artifacts', e.artifacts, 'script', e.script, 'image_id', e.image_id, 'image_digest', e.image_digest, 'sandbox_runtime', e.sandbox_runtime)
    FROM executions e JOIN goals g ON g.id = e.goal_id AND e.attempt = g.attempts WHERE e.goal_id = $1::uuid),
  'code', (SELECT json_build_object('code', t.detail -> 'code') FROM transitions t
    WHERE t.goal_id = $1::uuid AND t.to_state = 'execute' AND t.from_state IN ('generate', 'refine') ORDER BY t.seq DESC LIMIT 1),
  'calls', (SELECT coalesce(json_agg(json_build_object('state', m.state, 'attempt', m.attempt, 'provider', m.provider, 'model', m.model,
      'system_sha256', m.system_sha256, 'prompt_sha256', m.prompt_sha256) ORDER BY m.created_at, m.id), '[]') FROM model_calls m WHERE m.goal_id = $1::uuid),
  'tape', (SELECT coalesce(json_agg(json_build_object('seq', t.seq, 'from', t.from_state, 'to', t.to_state,
      'at', to_char(t.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'detail', t.detail, 'hash', t.hash) ORDER BY t.seq), '[]')
    FROM transitions t WHERE t.goal_id = $1::uuid)
)::text AS facts`;

interface StoredFacts {
  goal: { tenant_id: string; objective: string; loopsmith_version: string | null; attempts: number; deliverable: string | null; checks: unknown } | null;
  inputs: { name: string; sha256: string }[];
  checker_files: { name: string; sha256: string }[];
  results: { check_id: string; params: Record<string, unknown>; attempt: number; passed: boolean; message: string }[];
  exec: { artifacts: unknown; script: string; image_id: string; image_digest: string | null; sandbox_runtime: string | null } | null;
  code: { code: unknown } | null;
  calls: { state: string; attempt: number; provider: string; model: string; system_sha256: string | null; prompt_sha256: string | null }[];
  tape: { seq: number; from: string; to: string; at: string; detail: unknown; hash: string | null }[];
}

export async function receiptFacts(tx: Tx, goalId: string, at: Date): Promise<ReceiptFacts> {
  const [row] = await sendStatement<{ facts: string }>(tx, FACTS_SQL, [goalId]);
  const f = JSON.parse(row!.facts) as StoredFacts;
  if (!f.goal) missing("the goal", goalId);
  if (!f.exec) missing(`execution ${f.goal.attempts}`, goalId);
  if (!f.code) missing("the generated code", goalId);
  const checks = z.array(frozenCheck).parse(f.goal.checks ?? []);
  return {
    goalId,
    tenantId: f.goal.tenant_id,
    objective: f.goal.objective,
    loopsmithVersion: f.goal.loopsmith_version,
    attempt: f.goal.attempts,
    inputs: f.inputs,
    checkerFiles: f.checker_files,
    checks: checks.map((c) => {
      const r = f.results.find((row) => row.check_id === c.id && resultMatchesParams(row.params, c.params));
      return {
        id: c.id,
        kind: c.kind,
        source: c.source,
        hidden: c.hidden,
        params: c.params,
        result: r ? { attempt: r.attempt, passed: r.passed, message: r.message } : null,
      };
    }),
    deliverable: f.goal.deliverable,
    artifacts: f.exec.artifacts as { name: string; size: number; sha256: string }[],
    // The file name from the tape row that carried the program; the bytes from the execution that ran them.
    program: { filename: generatedCode.parse(f.code.code).filename, source: f.exec.script },
    image: { id: f.exec.image_id, repoDigest: f.exec.image_digest, runtime: f.exec.sandbox_runtime },
    modelCalls: f.calls.map((m) => ({
      state: m.state,
      attempt: m.attempt,
      provider: m.provider,
      model: m.model,
      systemSha256: m.system_sha256,
      promptSha256: m.prompt_sha256,
    })),
    tape: f.tape,
    issuedAt: at,
  };
}
