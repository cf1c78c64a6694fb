// Canonical JSON without Node's modules, so that a browser (the console) hashes and checks exactly what
// the runner signed.

/**
 * Canonical JSON: object keys sorted (by UTF-16 code units, as Array.prototype.sort does), no whitespace,
 * strings and numbers exactly as JSON.stringify writes them. Two parties holding the same data get the
 * same bytes whatever key order their JSON arrived in, so a hash or a signature can be checked by anyone.
 *
 * The value is first put through JSON.stringify/JSON.parse, so that what is hashed is what a JSON column
 * stores and a client reads back: undefined properties dropped, undefined in arrays and NaN/Infinity as
 * null, toJSON applied (Dates as ISO strings). A stored tape row therefore hashes the same after a
 * round trip through Postgres jsonb and an HTTP response.
 */
export function canonicalJson(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError("canonicalJson: the value has no JSON form");
  return encode(JSON.parse(text) as unknown);
}

function encode(v: unknown): string {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(encode).join(",")}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${encode(o[k])}`)
    .join(",")}}`;
}
