import { createHash, timingSafeEqual } from "node:crypto";

/** The bearer token of an Authorization header, or undefined. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== "string") return undefined;
  return /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
}

/** Compares digests, so the time taken says nothing about the token's length or bytes. */
export function tokenMatches(given: string | undefined, want: string): boolean {
  if (given === undefined) return false;
  const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();
  return timingSafeEqual(digest(given), digest(want));
}
