import { createPublicKey, sign, type KeyObject } from "node:crypto";
import { z } from "zod";
import { canonicalJson, sha256Hex } from "./canonical";
import { transitionHash, type TapeRow } from "./chain";

/** Bumped whenever the receipt's fields or their meaning change; verifiers refuse formats they do not know. */
export const RECEIPT_FORMAT = "loopsmith-receipt/1";
export const RECEIPT_ALG = "Ed25519";
export const KEY_ID = /^[A-Za-z0-9._:-]{1,64}$/;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "a sha256 in lowercase hex");
const file = z.object({ name: z.string(), sha256 });

export const receiptCheck = z.object({
  id: z.string(),
  kind: z.enum(["deterministic", "judgement"]),
  source: z.string().describe("baseline, client or planner"),
  hidden: z.boolean(),
  params: z.record(z.string(), z.unknown()).nullable().describe("In full for visible checks; null for hidden ones (their params are material)."),
  params_sha256: sha256.describe("sha256 of the params' canonical JSON, for every check."),
  result: z
    .object({
      attempt: z.int(),
      passed: z.boolean(),
      message: z.string().nullable().describe("The verdict for visible checks; null for hidden ones."),
    })
    .nullable()
    .describe("The verified attempt's result; null for judgement checks (the inspector model reads those)."),
});

export const receiptSchema = z
  .object({
    format: z.literal(RECEIPT_FORMAT),
    alg: z.literal(RECEIPT_ALG),
    key_id: z.string().describe("Names the public key in /.well-known/loopsmith-receipt-keys."),
    goal_id: z.string(),
    tenant_id: z.string(),
    state: z.literal("verified"),
    verified_attempt: z.int(),
    objective_sha256: sha256,
    inputs: z.array(file),
    checker_files: z.array(file).describe("Hidden material: names and sha256 only."),
    checks: z.array(receiptCheck).describe("The frozen checks, in order, with the verified attempt's results."),
    deliverable: file.describe('The verified deliverable; name "program" when the program itself is the deliverable.'),
    artifacts: z.array(z.object({ name: z.string(), size: z.int(), sha256 })).describe("Every file the verified run wrote."),
    program: z.object({ filename: z.string(), sha256 }),
    image: z.object({
      id: z.string().describe("The image id (sha256 of its config): content-addressed, also for images built offline."),
      repo_digest: z.string().nullable().describe("The registry manifest digest (RepoDigest) when the image has one; null for images built by docker import."),
      runtime: z.string().nullable().optional().describe("The engine runtime the verified run's container ran under (runsc: gVisor; runc); absent in receipts issued before it was recorded."),
    }),
    model_calls: z.array(
      z.object({
        state: z.string(),
        attempt: z.int(),
        provider: z.string(),
        model: z.string(),
        system_sha256: sha256.nullable(),
        prompt_sha256: sha256.nullable(),
      }),
    ),
    tape: z
      .object({ length: z.int(), head: sha256, hashes: z.array(sha256) })
      .describe("The tape's hash chain: each row's hash covers the previous one (see the README)."),
    loopsmith_version: z.string().nullable(),
    issued_at: z.string().meta({ format: "date-time" }),
    signature: z.string().describe("Ed25519 over the canonical JSON of every other field, base64."),
  });
export type Receipt = z.infer<typeof receiptSchema>;
export type ReceiptPayload = Omit<Receipt, "signature">;

export class ReceiptError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReceiptError";
  }
}

/** What the runner reads from the database, as plain data: the receipt is a pure function of it. */
export interface ReceiptFacts {
  goalId: string;
  tenantId: string;
  objective: string;
  loopsmithVersion: string | null;
  attempt: number;
  inputs: { name: string; sha256: string }[];
  checkerFiles: { name: string; sha256: string }[];
  checks: {
    id: string;
    kind: "deterministic" | "judgement";
    source: string;
    hidden: boolean;
    params: Record<string, unknown>;
    result: { attempt: number; passed: boolean; message: string } | null;
  }[];
  /** The goal's deliverable: an artifact name, or null when the program is the deliverable. */
  deliverable: string | null;
  artifacts: { name: string; size: number; sha256: string }[];
  program: { filename: string; source: string };
  image: { id: string; repoDigest: string | null; runtime: string | null };
  modelCalls: { state: string; attempt: number; provider: string; model: string; systemSha256: string | null; promptSha256: string | null }[];
  /** The tape in seq order, each row with the hash stored beside it. */
  tape: (TapeRow & { hash: string | null })[];
  issuedAt: Date;
}

/**
 * The receipt's contents. Refuses (throws) rather than sign something that does not hold together: a
 * tape whose stored hashes disagree with its rows, a deliverable the verified run did not write.
 */
export function buildReceiptPayload(facts: ReceiptFacts, keyId: string): ReceiptPayload {
  const hashes: string[] = [];
  facts.tape.forEach((row, i) => {
    if (row.seq !== i) throw new ReceiptError(`tape row ${i} has seq ${row.seq}`);
    const h = transitionHash(hashes[i - 1] ?? "", row);
    // A null hash is a row written before the chain existed; a different one is an edited row.
    if (row.hash !== null && row.hash !== h) throw new ReceiptError(`tape row ${i}: the stored hash does not match the row`);
    hashes.push(h);
  });
  const head = hashes[hashes.length - 1];
  if (head === undefined) throw new ReceiptError("the tape is empty");
  const programSha = sha256Hex(facts.program.source);
  let deliverable: { name: string; sha256: string };
  if (facts.deliverable === null) deliverable = { name: "program", sha256: programSha };
  else {
    const artifact = facts.artifacts.find((a) => a.name === facts.deliverable);
    if (!artifact) throw new ReceiptError(`the verified run wrote no ${facts.deliverable}`);
    deliverable = { name: artifact.name, sha256: artifact.sha256 };
  }
  return {
    format: RECEIPT_FORMAT,
    alg: RECEIPT_ALG,
    key_id: keyId,
    goal_id: facts.goalId,
    tenant_id: facts.tenantId,
    state: "verified",
    verified_attempt: facts.attempt,
    objective_sha256: sha256Hex(facts.objective),
    inputs: facts.inputs.map((f) => ({ name: f.name, sha256: f.sha256 })),
    checker_files: facts.checkerFiles.map((f) => ({ name: f.name, sha256: f.sha256 })),
    checks: facts.checks.map((c) => ({
      id: c.id,
      kind: c.kind,
      source: c.source,
      hidden: c.hidden,
      // Hidden params are the check's material (expected values, cases): their hash binds them, their
      // content stays out of a document meant to be handed around.
      params: c.hidden ? null : c.params,
      params_sha256: sha256Hex(canonicalJson(c.params)),
      result: c.result && { attempt: c.result.attempt, passed: c.result.passed, message: c.hidden ? null : c.result.message },
    })),
    deliverable,
    artifacts: facts.artifacts.map((a) => ({ name: a.name, size: a.size, sha256: a.sha256 })),
    program: { filename: facts.program.filename, sha256: programSha },
    image: { id: facts.image.id, repo_digest: facts.image.repoDigest, runtime: facts.image.runtime },
    model_calls: facts.modelCalls.map((m) => ({
      state: m.state,
      attempt: m.attempt,
      provider: m.provider,
      model: m.model,
      system_sha256: m.systemSha256,
      prompt_sha256: m.promptSha256,
    })),
    tape: { length: hashes.length, head, hashes },
    loopsmith_version: facts.loopsmithVersion,
    issued_at: facts.issuedAt.toISOString(),
  };
}

/** The bytes a signature covers: the canonical JSON of the receipt without its signature. */
export function signedBytes(receipt: Record<string, unknown>): Buffer {
  const rest = Object.fromEntries(Object.entries(receipt).filter(([k]) => k !== "signature"));
  return Buffer.from(canonicalJson(rest), "utf8");
}

export function signReceipt(payload: ReceiptPayload, privateKey: KeyObject): Receipt {
  if (privateKey.asymmetricKeyType !== "ed25519") throw new ReceiptError(`a receipt key must be Ed25519, not ${privateKey.asymmetricKeyType}`);
  const signature = sign(null, signedBytes(payload), privateKey).toString("base64");
  return { ...payload, signature };
}

/** A key id derived from the public key, for keys configured without one (and generated ones). */
export function keyIdFor(key: KeyObject): string {
  const der = (key.type === "public" ? key : createPublicKey(key)).export({ type: "spki", format: "der" });
  return `ed25519-${sha256Hex(der).slice(0, 16)}`;
}
