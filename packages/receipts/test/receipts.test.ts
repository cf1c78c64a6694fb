import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  buildReceiptPayload,
  canonicalJson,
  readJsonDocument,
  chainHashes,
  keyIdFor,
  ReceiptError,
  sha256Hex,
  signReceipt,
  transitionHash,
  verifyReceipt,
  type Receipt,
  type ReceiptFacts,
  type TapeRow,
} from "../src/index";

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const keyId = keyIdFor(publicKey);
const keys = { keys: [{ key_id: keyId, alg: "Ed25519", public_key_pem: publicKey.export({ type: "spki", format: "pem" }).toString(), created_at: "2026-01-01T00:00:00.000Z" }] };

const program = "print('hi')\n";
const artifact = Buffer.from("a,b\n1,2\n");
const rows: TapeRow[] = [
  { seq: 0, from: null, to: "plan", at: "2026-01-01T00:00:00.000Z", detail: {} },
  { seq: 1, from: "plan", to: "generate", at: "2026-01-01T00:00:01.000Z", detail: { plan: { objective: "x" } } },
  { seq: 2, from: "generate", to: "execute", at: "2026-01-01T00:00:02.000Z", detail: { code: { source: program } } },
  { seq: 3, from: "execute", to: "inspect", at: "2026-01-01T00:00:03.000Z", detail: { exit_code: 0, duration_ms: 12.5 } },
  { seq: 4, from: "inspect", to: "verified", at: "2026-01-01T00:00:04.000Z", detail: { checks_passed: true } },
];
const tape = (() => {
  const hashes = chainHashes(rows);
  return rows.map((r, i) => ({ ...r, hash: hashes[i]! }));
})();

function facts(over: Partial<ReceiptFacts> = {}): ReceiptFacts {
  return {
    goalId: "00000000-0000-4000-8000-000000000001",
    tenantId: "00000000-0000-4000-8000-000000000002",
    objective: "Clean the CSV.",
    loopsmithVersion: "git:abc",
    attempt: 1,
    inputs: [{ name: "in.csv", sha256: sha256Hex("x") }],
    checkerFiles: [{ name: "expected.csv", sha256: sha256Hex("secret") }],
    checks: [
      { id: "exits_clean", kind: "deterministic", source: "baseline", hidden: false, params: {}, result: { attempt: 1, passed: true, message: "exit 0" } },
      { id: "csv_matches", kind: "deterministic", source: "client", hidden: true, params: { expected_file: "expected.csv", artifact: "clean.csv" }, result: { attempt: 1, passed: true, message: "secret detail" } },
    ],
    deliverable: "clean.csv",
    artifacts: [{ name: "clean.csv", size: artifact.length, sha256: sha256Hex(artifact) }],
    program: { filename: "solution.py", source: program },
    image: { id: "sha256:" + "1".repeat(64), repoDigest: null, runtime: "runsc" },
    modelCalls: [{ state: "plan", attempt: 0, provider: "scripted", model: "scripted", systemSha256: sha256Hex("s"), promptSha256: sha256Hex("p") }],
    tape,
    issuedAt: new Date("2026-01-01T00:00:05.000Z"),
    ...over,
  };
}

const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const signed = () => signReceipt(buildReceiptPayload(facts(), keyId), privateKey);
const given = { artifacts: [{ name: "clean.csv", content: artifact }], program: Buffer.from(program), tape };

describe("canonical JSON", () => {
  it("sorts keys at every depth, drops undefined, writes no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: null, y: "é" }], c: undefined } })).toBe('{"a":{"d":[1,{"y":"é","z":null}]},"b":1}');
    expect(canonicalJson({ x: 0.1 + 0.2, n: NaN, when: new Date(0) })).toBe('{"n":null,"when":"1970-01-01T00:00:00.000Z","x":0.30000000000000004}');
  });
  it("gives one text for one value whatever the key order", () => {
    expect(canonicalJson(JSON.parse('{"a":1,"b":[{"c":2,"d":3}]}'))).toBe(canonicalJson(JSON.parse('{"b":[{"d":3,"c":2}],"a":1}')));
  });
});

describe("the tape's hash chain", () => {
  it("chains each row to the one before it, from an empty string", () => {
    const hashes = chainHashes(rows);
    expect(hashes[0]).toBe(sha256Hex(canonicalJson({ prev: "", seq: 0, from: null, to: "plan", at: rows[0]!.at, detail: {} })));
    expect(hashes[1]).toBe(transitionHash(hashes[0]!, rows[1]!));
    // Editing one row changes its hash and every later one.
    const edited = chainHashes(rows.map((r) => (r.seq === 2 ? { ...r, detail: { code: { source: "print('bye')\n" } } } : r)));
    expect(edited.slice(0, 2)).toEqual(hashes.slice(0, 2));
    for (let i = 2; i < rows.length; i++) expect(edited[i]).not.toBe(hashes[i]);
  });
});

describe("receipts", () => {
  it("a signed receipt verifies with its key, its files and its tape", () => {
    const r = signed();
    expect(r.checks[1]).toMatchObject({ hidden: true, params: null, result: { passed: true, message: null } });
    expect(r.checks[1]!.params_sha256).toBe(sha256Hex(canonicalJson({ artifact: "clean.csv", expected_file: "expected.csv" })));
    expect(JSON.stringify(r)).not.toContain("secret detail");
    expect(r.deliverable).toEqual({ name: "clean.csv", sha256: sha256Hex(artifact) });
    expect(r.tape).toEqual({ length: 5, head: tape[4]!.hash, hashes: tape.map((t) => t.hash) });
    const v = verifyReceipt(JSON.parse(JSON.stringify(r)), keys, given);
    expect(v).toEqual({ ok: true, problems: [], checked: [`signature (key ${keyId})`, "artifact clean.csv", "program solution.py", `tape (5 rows, head ${tape[4]!.hash})`] });
  });

  it("a program deliverable is the program", () => {
    const r = signReceipt(buildReceiptPayload(facts({ deliverable: null, artifacts: [] }), keyId), privateKey);
    expect(r.deliverable).toEqual({ name: "program", sha256: sha256Hex(program) });
    expect(verifyReceipt(r, keys, { artifacts: [{ name: "program", content: Buffer.from(program) }] }).ok).toBe(true);
  });

  it("refuses to sign a tape whose stored hash disagrees with its row, or a missing deliverable", () => {
    const bad = tape.map((t) => (t.seq === 3 ? { ...t, detail: { exit_code: 1 } } : t));
    expect(() => buildReceiptPayload(facts({ tape: bad }), keyId)).toThrow(new ReceiptError("tape row 3: the stored hash does not match the row"));
    expect(() => buildReceiptPayload(facts({ artifacts: [] }), keyId)).toThrow(/wrote no clean.csv/);
  });

  // An edited receipt need not be a valid one: "note" is a field no receipt has.
  const tampered: [string, (r: Receipt & { note?: string }) => void, string][] = [
    ["a check result", (r) => (r.checks[0]!.result!.passed = false), `signature does not verify with key ${keyId}`],
    ["a check message", (r) => (r.checks[0]!.result!.message += "!"), `signature does not verify with key ${keyId}`],
    ["the objective hash", (r) => (r.objective_sha256 = sha256Hex("another objective")), `signature does not verify with key ${keyId}`],
    ["an added field", (r) => (r.note = "trust me"), `signature does not verify with key ${keyId}`],
    ["the signature", (r) => (r.signature = r.signature.slice(0, 10) + (r.signature[10] === "A" ? "B" : "A") + r.signature.slice(11)), `signature does not verify with key ${keyId}`],
    // The last character before "==" carries 2 bits of the signature and 4 padding bits, which decoders ignore.
    ["the signature's padding bits", (r) => (r.signature = r.signature.slice(0, 85) + B64[B64.indexOf(r.signature[85]!) ^ 1] + "=="), `signature does not verify with key ${keyId}`],
    ["the key id", (r) => (r.key_id = "k-unknown"), "key k-unknown is not in the keys file"],
  ];
  it.each(tampered)("changing %s fails the signature", (_what, edit, message) => {
    const r = JSON.parse(JSON.stringify(signed())) as Receipt;
    edit(r);
    expect(verifyReceipt(r, keys, given)).toMatchObject({ ok: false, problems: [message] });
  });

  it("a byte changed in an artifact, the program or a tape row is named", () => {
    const r = signed();
    const flipped = Buffer.from(artifact);
    flipped[0] = flipped[0]! ^ 1;
    expect(verifyReceipt(r, keys, { artifacts: [{ name: "clean.csv", content: flipped }] }).problems).toEqual([
      `artifact clean.csv: sha256 ${sha256Hex(flipped)} expected ${sha256Hex(artifact)}`,
    ]);
    expect(verifyReceipt(r, keys, { artifacts: [{ name: "other.csv", content: artifact }] }).problems).toEqual(["artifact other.csv: not in the receipt"]);
    expect(verifyReceipt(r, keys, { program: Buffer.from(program + " ") }).problems).toEqual([`program: sha256 ${sha256Hex(program + " ")} expected ${sha256Hex(program)}`]);
    const editedTape = JSON.parse(JSON.stringify(tape));
    editedTape[3].detail.exit_code = 1;
    expect(verifyReceipt(r, keys, { tape: editedTape }).problems).toEqual(["tape row 3: hash mismatch"]);
    const retimed = JSON.parse(JSON.stringify(tape));
    retimed[1].at = "2026-01-01T00:00:01.001Z";
    expect(verifyReceipt(r, keys, { tape: retimed }).problems).toEqual(["tape row 1: hash mismatch"]);
    expect(verifyReceipt(r, keys, { tape: tape.slice(0, 4) }).problems).toEqual(["tape: 4 rows given, the receipt covers 5"]);
  });

  it("a key from another signer does not verify it", () => {
    const other = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString();
    expect(verifyReceipt(signed(), { keys: [{ ...keys.keys[0]!, public_key_pem: other }] }).problems).toEqual([`signature does not verify with key ${keyId}`]);
  });
});

describe("issue 25: receipts and keys are read exactly", () => {
  it("a receipt with a second goal_id is refused, where JSON.parse would verify it for the other id", () => {
    const text = JSON.stringify(signed());
    // The signed goal_id comes last, where JSON.parse looks; a reader that keeps the first sees "forged".
    const twice = `{"goal_id":"forged",${text.slice(1)}`;
    expect(verifyReceipt(JSON.parse(twice), keys).ok).toBe(true);
    const v = verifyReceipt(twice, keys);
    expect(v.ok).toBe(false);
    expect(v.problems).toEqual([`receipt: not JSON that reads one way (duplicate key "goal_id" at line 1, column ${twice.lastIndexOf('"goal_id"') + 1})`]);
    expect(verifyReceipt(Buffer.from(text), keys).ok).toBe(true);
  });

  it("a keys document with a key listed under two key_ids is refused", () => {
    const entry = JSON.stringify(keys.keys[0]);
    const twice = `{"keys":[{"key_id":"other",${entry.slice(1)}]}`;
    expect(verifyReceipt(signed(), twice).problems).toEqual([expect.stringMatching(/^keys file: not JSON that reads one way \(duplicate key "key_id" at line 1/)]);
    expect(verifyReceipt(signed(), JSON.stringify(keys)).ok).toBe(true);
  });

  it("a tape given as text is read exactly too, and bytes that are not UTF-8 are refused", () => {
    const row = JSON.stringify(tape[3]);
    const twice = JSON.stringify(tape).replace(row, `{"detail":{"exit_code":1},${row.slice(1)}`);
    expect(verifyReceipt(signed(), keys, { tape: JSON.parse(twice) }).ok).toBe(true);
    expect(verifyReceipt(signed(), keys, { tape: twice }).problems).toEqual([expect.stringMatching(/^tape: not JSON that reads one way \(duplicate key "detail"/)]);
    expect(verifyReceipt(Buffer.from([0x7b, 0xff, 0x7d]), keys).problems).toEqual(["receipt: not JSON that reads one way (not UTF-8 text)"]);
  });

  it("keeps an integer beyond 2^53 only in the digits JSON.stringify writes for it", () => {
    const big = signReceipt(buildReceiptPayload(facts({ checks: [{ ...facts().checks[0]!, params: { at_least: 2 ** 60 } }] }), keyId), privateKey);
    const text = JSON.stringify(big);
    expect(text).toContain('"at_least":1152921504606847000');
    expect(verifyReceipt(text, keys).problems).toEqual([]);
    expect(readJsonDocument(text)).toMatchObject({ ok: true, value: { checks: [{ params: { at_least: 2 ** 60 } }] } });
    // 2^60 + 1 reads as 2^60 to JSON.parse: the signature would hold for a number the text does not say.
    const off = text.replace("1152921504606847000", "1152921504606846977");
    expect(verifyReceipt(JSON.parse(off), keys).ok).toBe(true);
    expect(verifyReceipt(off, keys).problems).toEqual([
      "receipt: not JSON that reads one way (the integer 1152921504606846977 at /checks/0/params/at_least is not one a JSON number can hold exactly)",
    ]);
  });
});

describe("issue 25: a key's validity window", () => {
  // The receipt was issued at 2026-01-01T00:00:05.000Z (facts().issuedAt).
  const ISSUED = "2026-01-01T00:00:05.000Z";
  const withKey = (window: Record<string, string | null | undefined>) => ({ keys: [{ ...keys.keys[0]!, ...window }] });
  const problems = (window: Record<string, string | null | undefined>) => verifyReceipt(signed(), withKey(window)).problems;

  it("not_before: a receipt issued at the key's creation verifies, one issued a millisecond before it does not", () => {
    expect(problems({ not_before: ISSUED })).toEqual([]);
    expect(problems({ not_before: "2026-01-01T00:00:05.001Z" })).toEqual([
      `key ${keyId} is valid from 2026-01-01T00:00:05.001Z (not_before): the receipt was issued before, at ${ISSUED}`,
    ]);
    // A keys file saved before not_before existed: the key's creation is created_at.
    expect(problems({ created_at: ISSUED })).toEqual([]);
    expect(problems({ created_at: "2026-01-01T00:00:05.001Z" })).toEqual([
      `key ${keyId} is valid from 2026-01-01T00:00:05.001Z (not_before): the receipt was issued before, at ${ISSUED}`,
    ]);
  });

  it("not_after: a receipt issued at the expiry verifies, one issued a millisecond after it does not", () => {
    expect(problems({ not_after: ISSUED })).toEqual([]);
    expect(problems({ not_after: null })).toEqual([]);
    expect(problems({ not_after: "2026-01-01T00:00:04.999Z" })).toEqual([
      `key ${keyId} expired at 2026-01-01T00:00:04.999Z (not_after): the receipt was issued after, at ${ISSUED}`,
    ]);
  });

  it("revoked_at: a receipt issued just before the revocation verifies, one issued at it does not", () => {
    expect(problems({ revoked_at: "2026-01-01T00:00:05.001Z" })).toEqual([]);
    expect(problems({ revoked_at: null })).toEqual([]);
    expect(problems({ revoked_at: ISSUED })).toEqual([`key ${keyId} was revoked at ${ISSUED}: the receipt was issued at or after that, at ${ISSUED}`]);
    expect(problems({ revoked_at: "2026-01-01T00:00:04.999Z" })).toHaveLength(1);
  });

  it("compares timestamps exactly, whatever their offset or precision", () => {
    // The same instants written another way.
    expect(problems({ not_before: "2026-01-01T02:00:05+02:00", not_after: "2025-12-31t19:00:05.000000-05:00" })).toEqual([]);
    expect(problems({ revoked_at: "2026-01-01T00:00:05.0000001Z" })).toEqual([]);
    expect(problems({ revoked_at: "2026-01-01T00:00:05.0000000Z" })).toHaveLength(1);
    expect(problems({ not_after: "2026-01-01T00:00:04.9999999Z" })).toHaveLength(1);
  });

  it("a keys file with a timestamp that is not RFC 3339 is refused, naming the field", () => {
    expect(problems({ not_after: "2026-02-30T00:00:00Z" })).toEqual([
      "the keys file is not a {keys: [{key_id, alg, public_key_pem, created_at, not_before, not_after, revoked_at}]} document",
      "keys file field keys.0.not_after: not an RFC 3339 timestamp (like 2026-01-01T00:00:00Z)",
    ]);
    expect(problems({ revoked_at: "yesterday" })[1]).toBe("keys file field keys.0.revoked_at: not an RFC 3339 timestamp (like 2026-01-01T00:00:00Z)");
  });
});
