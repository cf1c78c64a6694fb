// issue 25: `npm run receipt:verify` (scripts/receipt-verify.ts) refuses a receipt whose key was revoked
// before it was issued, and a receipt file with a duplicate key, where it used to print "receipt OK".
import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildReceiptPayload, chainHashes, keyIdFor, sha256Hex, signReceipt, type TapeRow } from "../src/index";

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const keyId = keyIdFor(publicKey);
const key = {
  key_id: keyId,
  alg: "Ed25519",
  public_key_pem: publicKey.export({ type: "spki", format: "pem" }).toString(),
  created_at: "2026-01-01T00:00:00.000Z",
  not_before: "2026-01-01T00:00:00.000Z",
  not_after: null,
  revoked_at: null,
};
const rows: TapeRow[] = [
  { seq: 0, from: null, to: "plan", at: "2026-01-01T00:00:00.000Z", detail: {} },
  { seq: 1, from: "inspect", to: "verified", at: "2026-01-01T00:00:01.000Z", detail: {} },
];
const hashes = chainHashes(rows);
const receipt = signReceipt(
  buildReceiptPayload(
    {
      goalId: "00000000-0000-4000-8000-000000000001",
      tenantId: "00000000-0000-4000-8000-000000000002",
      objective: "o",
      loopsmithVersion: null,
      attempt: 1,
      inputs: [],
      checkerFiles: [],
      checks: [],
      deliverable: null,
      artifacts: [],
      program: { filename: "solution.py", source: "print(1)\n" },
      image: { id: "sha256:" + "1".repeat(64), repoDigest: null, runtime: "runsc" },
      modelCalls: [],
      tape: rows.map((r, i) => ({ ...r, hash: hashes[i]! })),
      issuedAt: new Date("2026-01-01T00:00:05.000Z"),
    },
    keyId,
  ),
  privateKey,
);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "receipt-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function verify(receiptText: string, keys: unknown): Promise<{ code: number; stdout: string; stderr: string }> {
  const receiptFile = path.join(dir, `receipt-${sha256Hex(receiptText).slice(0, 8)}.json`);
  const keysFile = path.join(dir, `keys-${sha256Hex(JSON.stringify(keys)).slice(0, 8)}.json`);
  await writeFile(receiptFile, receiptText);
  await writeFile(keysFile, JSON.stringify(keys));
  return promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/receipt-verify.ts", receiptFile, "--keys", keysFile], { cwd: repoRoot }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe("npm run receipt:verify (issue 25)", () => {
  it("accepts the receipt with its key valid, refuses it once the key was revoked at or before its issue", async () => {
    const ok = await verify(JSON.stringify(receipt, null, 2), { keys: [key] });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(`receipt OK\n  signature (key ${keyId})\n`);
    const revoked = await verify(JSON.stringify(receipt), { keys: [{ ...key, revoked_at: "2026-01-01T00:00:04.000Z" }] });
    expect(revoked.code).toBe(1);
    expect(revoked.stderr).toBe(
      `receipt FAILED\n  key ${keyId} was revoked at 2026-01-01T00:00:04.000Z: the receipt was issued at or after that, at 2026-01-01T00:00:05.000Z\n`,
    );
  });

  it("refuses a receipt file holding goal_id twice", async () => {
    const text = JSON.stringify(receipt);
    const twice = `{"goal_id":"00000000-0000-4000-8000-00000000beef",${text.slice(1)}`;
    const res = await verify(twice, { keys: [key] });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^receipt FAILED\n {2}receipt \S+: not JSON that reads one way \(duplicate key "goal_id" at line 1, column \d+\)\n$/);
  });
});
