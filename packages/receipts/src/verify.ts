import { createPublicKey, verify } from "node:crypto";
import { z } from "zod";
import { sha256Hex } from "./canonical";
import { transitionHash } from "./chain";
import { readJsonDocument } from "./read";
import { RECEIPT_ALG, RECEIPT_FORMAT, receiptSchema, signedBytes } from "./receipt";
import { compareInstants, instant, type Instant } from "./time";

const dateTime = z.string().meta({ format: "date-time" });

/** One entry of GET /.well-known/loopsmith-receipt-keys. */
export const receiptKey = z.object({
  key_id: z.string(),
  alg: z.literal(RECEIPT_ALG),
  public_key_pem: z.string(),
  created_at: dateTime.describe("When the key was first published."),
  not_before: dateTime.describe("The key's creation (created_at): a receipt issued before it does not verify."),
  not_after: dateTime.nullable().describe("A receipt issued after it does not verify; null: the key does not expire. The signer's RECEIPT_KEY_NOT_AFTER."),
  revoked_at: dateTime
    .nullable()
    .describe("A receipt issued at or after it does not verify; null: not revoked. Set by a runner's RECEIPT_KEYS_REVOKED, never lifted."),
});
export const receiptKeySet = z.object({ keys: z.array(receiptKey) });
export type ReceiptKey = z.infer<typeof receiptKey>;

// What a keys file must hold to verify with. Saved before issue 25, a file has no window: not_before falls
// back to created_at, and a missing not_after or revoked_at means none.
const when = z.string().refine((s) => instant(s) !== null, "not an RFC 3339 timestamp (like 2026-01-01T00:00:00Z)");
const keyFile = z.object({
  keys: z.array(
    z.object({
      key_id: z.string(),
      alg: z.literal(RECEIPT_ALG),
      public_key_pem: z.string(),
      created_at: when,
      not_before: when.optional(),
      not_after: when.nullish(),
      revoked_at: when.nullish(),
    }),
  ),
});
type KeyEntry = z.infer<typeof keyFile>["keys"][number];

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
  /** The transitions array of GET /goals/:id, parsed or as its JSON text. */
  tape?: unknown;
}

export interface Verification {
  ok: boolean;
  /** One line per thing that did not match, naming it. */
  problems: string[];
  /** What was checked and held. */
  checked: string[];
}

/** JSON text (a string, or UTF-8 bytes) is read exactly (see read.ts); anything else is taken as parsed. */
const isText = (v: unknown): v is string | Uint8Array => typeof v === "string" || v instanceof Uint8Array;

/**
 * Checks a receipt offline: its signature with the named key from `keys` (a saved well-known response),
 * that the key was valid when the receipt was issued, then each file and the tape given beside it. The
 * receipt, the keys and the tape may each be given as JSON text, which is then read exactly: pass the
 * text rather than JSON.parse's reading of it. Everything is reported, not only the first problem.
 */
export function verifyReceipt(receipt: unknown, keys: unknown, given: VerifyGiven = {}): Verification {
  const problems: string[] = [];
  const checked: string[] = [];
  const done = () => ({ ok: problems.length === 0, problems, checked });

  if (isText(receipt)) {
    const read = readJsonDocument(receipt);
    if (!read.ok) {
      problems.push(`receipt: not JSON that reads one way (${read.message})`);
      return done();
    }
    receipt = read.value;
  }
  if (isText(keys)) {
    const read = readJsonDocument(keys);
    if (!read.ok) problems.push(`keys file: not JSON that reads one way (${read.message})`);
    keys = read.ok ? read.value : undefined;
  }
  if (isText(given.tape)) {
    const read = readJsonDocument(given.tape);
    if (!read.ok) {
      problems.push(`tape: not JSON that reads one way (${read.message})`);
      given = { ...given, tape: undefined };
    } else given = { ...given, tape: read.value };
  }

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

  const set = keys === undefined ? undefined : keyFile.safeParse(Array.isArray(keys) ? { keys } : keys);
  if (set && !set.success) {
    problems.push("the keys file is not a {keys: [{key_id, alg, public_key_pem, created_at, not_before, not_after, revoked_at}]} document");
    for (const i of set.error.issues.slice(0, 5)) problems.push(`keys file field ${i.path.join(".") || "(root)"}: ${i.message}`);
  }
  const key = set?.success ? set.data.keys.find((k) => k.key_id === r.key_id) : undefined;
  if (set?.success && !key) problems.push(`key ${r.key_id} is not in the keys file`);
  if (key) {
    const window = keyWindowProblem(key, r.issued_at);
    if (window) problems.push(window);
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
 * Whether the key may have signed a receipt issued at `issuedAt`: not before the key existed, not after it
 * expired, not at or after it was revoked. A revocation is only as good as its time: whoever holds a stolen
 * key can date a receipt anything, so revoked_at should be the earliest moment the key may have leaked.
 */
function keyWindowProblem(key: KeyEntry, issuedAt: string): string | undefined {
  const issued = instant(issuedAt);
  if (issued === null) return `receipt field issued_at: ${JSON.stringify(issuedAt)} is not an RFC 3339 timestamp`;
  const at = (s: string) => instant(s) as Instant;
  const notBefore = key.not_before ?? key.created_at;
  if (compareInstants(issued, at(notBefore)) < 0) return `key ${key.key_id} is valid from ${notBefore} (not_before): the receipt was issued before, at ${issuedAt}`;
  if (key.not_after != null && compareInstants(issued, at(key.not_after)) > 0)
    return `key ${key.key_id} expired at ${key.not_after} (not_after): the receipt was issued after, at ${issuedAt}`;
  if (key.revoked_at != null && compareInstants(issued, at(key.revoked_at)) >= 0)
    return `key ${key.key_id} was revoked at ${key.revoked_at}: the receipt was issued at or after that, at ${issuedAt}`;
  return undefined;
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
