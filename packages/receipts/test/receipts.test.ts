import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  buildReceiptPayload,
  canonicalJson,
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
    image: { id: "sha256:" + "1".repeat(64), repoDigest: null },
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
