import { createPublicKey, verify } from "node:crypto";
import { z } from "zod";
import { sha256Hex } from "./canonical";
import { transitionHash } from "./chain";
import { RECEIPT_ALG, RECEIPT_FORMAT, receiptSchema, signedBytes } from "./receipt";

/** One entry of GET /.well-known/loopsmith-receipt-keys. */
export const receiptKey = z.object({
  key_id: z.string(),
  alg: z.literal(RECEIPT_ALG),
  public_key_pem: z.string(),
  created_at: z.string().meta({ format: "date-time" }),
});
export const receiptKeySet = z.object({ keys: z.array(receiptKey) });
export type ReceiptKey = z.infer<typeof receiptKey>;

const tapeRow = z.object({
  seq: z.int(),
  from: z.string().nullable(),
  to: z.string(),
  at: z.string(),
  detail: z.record(z.string(), z.unknown()),
  hash: z.string().nullable().optional(),
});

export interface VerifyGiven {
  /** Files given beside the receipt, by the name the receipt lists them under. */
  artifacts?: { name: string; content: Uint8Array }[];
  program?: Uint8Array;
  /** The transitions array of GET /goals/:id. */
  tape?: unknown;
}

export interface Verification {
  ok: boolean;
  /** One line per thing that did not match, naming it. */
  problems: string[];
  /** What was checked and held. */
  checked: string[];
}

/**
 * Checks a receipt offline: its signature with the named key from `keys` (a saved well-known response),
 * then each file and the tape given beside it. Everything is reported, not only the first problem.
 */
export function verifyReceipt(receipt: unknown, keys: unknown, given: VerifyGiven = {}): Verification {
  const problems: string[] = [];
  const checked: string[] = [];
  const done = () => ({ ok: problems.length === 0, problems, checked });

  const format = (receipt as { format?: unknown } | null)?.format;
  if (format !== RECEIPT_FORMAT) {
    problems.push(`receipt format ${JSON.stringify(format)} is not ${RECEIPT_FORMAT}`);
    return done();
  }
  const parsed = receiptSchema.safeParse(receipt);
  if (!parsed.success) {
    for (const i of parsed.error.issues) problems.push(`receipt field ${i.path.join(".") || "(root)"}: ${i.message}`);
    return done();
  }
  const r = parsed.data;

  const set = receiptKeySet.safeParse(Array.isArray(keys) ? { keys } : keys);
  if (!set.success) problems.push("the keys file is not a {keys: [{key_id, alg, public_key_pem, created_at}]} document");
  const key = set.success ? set.data.keys.find((k) => k.key_id === r.key_id) : undefined;
  if (set.success && !key) problems.push(`key ${r.key_id} is not in the keys file`);
  if (key) {
    // Only the one encoding of the 64 bytes counts: base64 decoders ignore stray characters and padding bits.
    const sig = Buffer.from(r.signature, "base64");
    let good = false;
    try {
      good = sig.length === 64 && sig.toString("base64") === r.signature && verify(null, signedBytes(receipt as Record<string, unknown>), createPublicKey(key.public_key_pem), sig);
    } catch {
      good = false;
    }
    if (good) checked.push(`signature (key ${r.key_id})`);
    else problems.push(`signature does not verify with key ${r.key_id}`);
  }
  if (r.tape.hashes.length !== r.tape.length || r.tape.hashes[r.tape.hashes.length - 1] !== r.tape.head)
    problems.push("receipt tape: length and head do not match its list of hashes");

  const listed = new Map(r.artifacts.map((a) => [a.name, a.sha256]));
  if (!listed.has(r.deliverable.name)) listed.set(r.deliverable.name, r.deliverable.sha256);
  for (const a of given.artifacts ?? []) {
    const expected = listed.get(a.name);
    const actual = sha256Hex(a.content);
    if (expected === undefined) problems.push(`artifact ${a.name}: not in the receipt`);
    else if (actual !== expected) problems.push(`artifact ${a.name}: sha256 ${actual} expected ${expected}`);
    else checked.push(`artifact ${a.name}`);
  }
  if (given.program !== undefined) {
    const actual = sha256Hex(given.program);
    if (actual !== r.program.sha256) problems.push(`program: sha256 ${actual} expected ${r.program.sha256}`);
    else checked.push(`program ${r.program.filename}`);
  }
  if (given.tape !== undefined) verifyTape(given.tape, r.tape.hashes, problems, checked);
  return done();
}

/**
 * Each row is hashed on top of the receipt's hash of the row before it, so an edited row is named alone
 * instead of breaking every row after it.
 */
function verifyTape(tape: unknown, hashes: string[], problems: string[], checked: string[]): void {
  if (!Array.isArray(tape)) {
    problems.push("tape: not an array of transitions");
    return;
  }
  const before = problems.length;
  if (tape.length !== hashes.length) problems.push(`tape: ${tape.length} rows given, the receipt covers ${hashes.length}`);
  tape.forEach((raw, i) => {
    const row = tapeRow.safeParse(raw);
    if (!row.success) {
      problems.push(`tape row ${i}: not a transition (${row.error.issues[0]?.path.join(".")}: ${row.error.issues[0]?.message})`);
      return;
    }
    const expected = hashes[i];
    if (expected === undefined) return;
    const actual = transitionHash(i === 0 ? "" : hashes[i - 1]!, row.data);
    if (row.data.seq !== i || actual !== expected || (row.data.hash != null && row.data.hash !== expected)) problems.push(`tape row ${i}: hash mismatch`);
  });
  if (problems.length === before) checked.push(`tape (${tape.length} rows, head ${hashes[hashes.length - 1]})`);
}
