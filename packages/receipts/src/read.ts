import { parseJsonExact, type Json } from "@loopsmith/core/json";

export type Read = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Reads a receipt, a keys document or a tape for verification (issue 25). JSON.parse keeps the last of two
 * duplicate keys, so a receipt holding `goal_id` twice verifies for one id while a person, or any reader
 * that keeps the first, sees the other: here a duplicate key is refused, as is text that is not UTF-8.
 *
 * Integers beyond 2^53 come back from the exact reader as bigints. Canonical JSON writes numbers as
 * JSON.stringify does, so such an integer is kept (as a number) only when its digits are exactly what
 * JSON.stringify prints for that number (2 ** 60 prints as 1152921504606847000): anything else would be
 * signed or hashed as a number it does not say.
 */
export function readJsonDocument(input: string | Uint8Array): Read {
  let text: string;
  if (typeof input === "string") text = input;
  else {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(input);
    } catch {
      return { ok: false, message: "not UTF-8 text" };
    }
  }
  const parsed = parseJsonExact(text);
  if (!parsed.ok) return { ok: false, message: parsed.message };
  const bad = plainNumbers(parsed.value, "");
  if (bad !== undefined) return { ok: false, message: `the integer ${bad.digits} at ${bad.at || "/"} is not one a JSON number can hold exactly` };
  return { ok: true, value: parsed.value };
}

/** Replaces each bigint in place by its number; the first that does not survive the trip, with its JSON Pointer. */
function plainNumbers(v: Json, at: string): { digits: string; at: string } | undefined {
  if (v === null || typeof v !== "object") return undefined;
  const entries: [string | number, Json][] = Array.isArray(v) ? v.map((x, i) => [i, x]) : Object.entries(v);
  for (const [k, x] of entries) {
    const where = `${at}/${String(k).replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (typeof x === "bigint") {
      const n = Number(x);
      if (String(n) !== x.toString()) return { digits: x.toString(), at: where };
      (v as Record<string | number, Json>)[k] = n;
    } else {
      const bad = plainNumbers(x, where);
      if (bad !== undefined) return bad;
    }
  }
  return undefined;
}
