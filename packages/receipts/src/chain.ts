import { canonicalJson, sha256Hex } from "./canonical";

/** A tape row as GET /goals/:id shows it (`at` in ISO 8601 with milliseconds, as stored). */
export interface TapeRow {
  seq: number;
  from: string | null;
  to: string;
  at: string;
  detail: unknown;
}

/**
 * The hash of a tape row: sha256 of the canonical JSON of {prev, seq, from, to, at, detail}, where prev is
 * the previous row's hash ("" for row 0). Each hash covers the one before it, so editing, dropping or
 * reordering any row changes every hash from there on, the head included.
 */
export function transitionHash(prev: string, row: TapeRow): string {
  return sha256Hex(canonicalJson({ prev, seq: row.seq, from: row.from, to: row.to, at: row.at, detail: row.detail }));
}

/** Every row's hash, in order. */
export function chainHashes(rows: readonly TapeRow[]): string[] {
  const hashes: string[] = [];
  for (const row of rows) hashes.push(transitionHash(hashes[hashes.length - 1] ?? "", row));
  return hashes;
}
