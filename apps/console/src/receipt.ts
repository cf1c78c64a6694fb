// A goal's receipt checked in the page, against the keys the server publishes: the Ed25519 signature over
// the canonical JSON of the receipt without its signature, the key's validity window at issued_at, and the
// tape's hash chain against the transitions GET /goals/:id shows. The same rules as `receipt:verify`
// (docs/receipts.md), with the browser's WebCrypto.
import type { Goal } from "@loopsmith/client";
import { canonicalJson } from "@loopsmith/receipts/canonical-json";

export interface PublishedKey {
  key_id: string;
  alg: string;
  public_key_pem: string;
  created_at: string;
  not_before?: string;
  not_after?: string | null;
  revoked_at?: string | null;
}

/** A row of the goal's tape, as GET /goals/:id shows it. */
export type TapeRow = Pick<Goal["transitions"][number], "seq" | "from" | "to" | "at" | "detail">;

export interface ReceiptCheck {
  ok: boolean;
  signature: boolean;
  key: string;
  tape: boolean;
  problems: string[];
}

const bytesOf = (s: string) => new TextEncoder().encode(s);

function pemToDer(pem: string): Uint8Array<ArrayBuffer> {
  const b64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
}

async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytesOf(text)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function checkReceipt(receipt: Record<string, unknown>, keys: PublishedKey[], transitions: TapeRow[]): Promise<ReceiptCheck> {
  const problems: string[] = [];
  const { signature, ...signed } = receipt;
  const key = keys.find((k) => k.key_id === receipt.key_id);
  let signatureOk = false;
  if (!key) problems.push(`the key ${String(receipt.key_id)} is not among the published keys`);
  else if (typeof signature !== "string") problems.push("the receipt has no signature");
  else {
    try {
      const publicKey = await crypto.subtle.importKey("spki", pemToDer(key.public_key_pem), { name: "Ed25519" }, false, ["verify"]);
      const sig = Uint8Array.from(atob(signature), (c) => c.charCodeAt(0));
      signatureOk = await crypto.subtle.verify({ name: "Ed25519" }, publicKey, sig, bytesOf(canonicalJson(signed)));
      if (!signatureOk) problems.push("the signature does not match the receipt");
    } catch (e) {
      problems.push(`the signature could not be checked here: ${(e as Error).message}`);
    }
  }
  let keyProblem: string | null = null;
  if (key) {
    const issued = Date.parse(String(receipt.issued_at));
    const notBefore = key.not_before ?? key.created_at;
    if (Number.isNaN(issued)) keyProblem = "the receipt has no valid issued_at";
    else if (issued < Date.parse(notBefore)) keyProblem = `key ${key.key_id} is valid from ${notBefore}: the receipt was issued before`;
    else if (key.not_after && issued > Date.parse(key.not_after)) keyProblem = `key ${key.key_id} expired at ${key.not_after}: the receipt was issued after`;
    else if (key.revoked_at && issued >= Date.parse(key.revoked_at)) keyProblem = `key ${key.key_id} was revoked at ${key.revoked_at}: the receipt was issued at or after that`;
    if (keyProblem) problems.push(keyProblem);
  }
  const tape = receipt.tape as { hashes?: string[]; head?: string; length?: number } | undefined;
  let prev = "";
  let tapeOk = Array.isArray(tape?.hashes) && tape.hashes.length === transitions.length;
  if (tapeOk) {
    for (const [i, row] of transitions.entries()) {
      prev = await sha256Hex(canonicalJson({ prev, seq: row.seq, from: row.from, to: row.to, at: row.at, detail: row.detail }));
      if (prev !== tape!.hashes![i]) {
        tapeOk = false;
        problems.push(`tape row ${row.seq} does not hash to the receipt's hash ${i}`);
        break;
      }
    }
    if (tapeOk && prev !== tape!.head) {
      tapeOk = false;
      problems.push("the tape's last hash is not the receipt's head");
    }
  } else problems.push(`the receipt covers ${tape?.hashes?.length ?? 0} tape rows; the goal shows ${transitions.length}`);
  return { ok: problems.length === 0, signature: signatureOk, key: key ? (keyProblem ?? "valid at issue time") : "not published", tape: tapeOk, problems };
}
