// An exact JSON reader for what programs write. JSON.parse turns 9007199254740993 into 9007199254740992
// and keeps the last of two duplicate keys; a verifier must not. Integers outside the safe range come back
// as bigint, duplicate keys and nesting past a limit are errors, and positions are reported as line:column.
// No imports: @loopsmith/receipts reads receipts and keys documents with it (as @loopsmith/core/json)
// without loading the rest of core.

/** A parsed JSON value: JSON.parse's shapes, except that integers beyond 2^53 are bigints. */
export type Json = null | boolean | number | bigint | string | Json[] | { [key: string]: Json };

export const MAX_JSON_DEPTH = 256;

export type Parsed = { ok: true; value: Json } | { ok: false; message: string };

class JsonError extends Error {}

/** Parses `text` exactly (see above); never throws. */
export function parseJsonExact(text: string, maxDepth = MAX_JSON_DEPTH): Parsed {
  let i = 0;
  const n = text.length;

  const where = (at: number) => {
    let line = 1;
    let col = 1;
    // No failure is reported past the end: at <= n.
    for (let k = 0; k < at; k++) {
      if (text.charCodeAt(k) === 10) {
        line++;
        col = 1;
      } else col++;
    }
    return `line ${line}, column ${col}`;
  };
  const fail = (msg: string, at = i): never => {
    throw new JsonError(`${msg} at ${where(at)}`);
  };
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
  };

  const parseString = (): string => {
    // text[i] is the opening quote
    i++;
    let out = "";
    let start = i;
    for (;;) {
      // Stryker disable next-line EqualityOperator: equivalent, one past the end reads NaN (no quote), fails there, and is reported at the same column
      if (i >= n) fail("unterminated string");
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        return out;
      }
      if (c < 0x20) fail("control character in string");
      if (c === 0x5c) {
        out += text.slice(start, i);
        const e = text[i + 1];
        i += 2;
        switch (e) {
          case '"':
            out += '"';
            break;
          case "\\":
            out += "\\";
            break;
          case "/":
            out += "/";
            break;
          case "b":
            out += "\b";
            break;
          case "f":
            out += "\f";
            break;
          case "n":
            out += "\n";
            break;
          case "r":
            out += "\r";
            break;
          case "t":
            out += "\t";
            break;
          case "u": {
            const hex = text.slice(i, i + 4);
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail("bad \\u escape", i - 2);
            out += String.fromCharCode(parseInt(hex, 16));
            i += 4;
            break;
          }
          default:
            fail("bad escape", i - 2);
        }
        start = i;
        continue;
      }
      i++;
    }
  };

  const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y;
  const parseNumber = (): number | bigint => {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) return fail("invalid number");
    const literal = m[0];
    i += literal.length;
    if (m[1] === undefined && m[2] === undefined) {
      const value = Number(literal);
      return Number.isSafeInteger(value) ? value : BigInt(literal);
    }
    const value = Number(literal);
    if (!Number.isFinite(value)) fail(`number ${literal.slice(0, 40)} is out of range`, i - literal.length);
    return value;
  };

  const parseValue = (depth: number): Json => {
    ws();
    if (i >= n) fail("unexpected end of input");
    const c = text[i]!;
    if (c === "{" || c === "[") {
      if (depth >= maxDepth) fail(`nested deeper than ${maxDepth} levels`);
      return c === "{" ? parseObject(depth + 1) : parseArray(depth + 1);
    }
    if (c === '"') return parseString();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    // Before numbers, or "-Infinity" would be called an invalid number.
    if (text.startsWith("NaN", i) || text.startsWith("Infinity", i) || text.startsWith("-Infinity", i)) {
      fail("NaN or Infinity is not JSON (Python's json.dump writes them unless allow_nan=False)");
    }
    if (c === "-" || (c >= "0" && c <= "9")) return parseNumber();
    return fail(`unexpected character ${JSON.stringify(c)}`);
  };

  const parseArray = (depth: number): Json[] => {
    i++;
    const out: Json[] = [];
    ws();
    if (text[i] === "]") {
      i++;
      return out;
    }
    for (;;) {
      out.push(parseValue(depth));
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") {
        i++;
        return out;
      }
      fail("expected , or ] in array");
    }
  };

  const parseObject = (depth: number): { [key: string]: Json } => {
    i++;
    // A null-prototype object: "__proto__" is an ordinary key here, not the prototype.
    const out = Object.create(null) as { [key: string]: Json };
    ws();
    if (text[i] === "}") {
      i++;
      return out;
    }
    for (;;) {
      ws();
      if (text[i] !== '"') fail("expected a string key");
      const keyAt = i;
      const key = parseString();
      if (Object.hasOwn(out, key)) fail(`duplicate key ${JSON.stringify(key.slice(0, 60))}`, keyAt);
      ws();
      if (text[i] !== ":") fail("expected : after key");
      i++;
      out[key] = parseValue(depth);
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") {
        i++;
        return out;
      }
      fail("expected , or } in object");
    }
  };

  try {
    // A UTF-8 BOM is not JSON, but some writers add one; it carries no meaning.
    if (text.charCodeAt(0) === 0xfeff) i = 1;
    const value = parseValue(0);
    ws();
    if (i < n) fail("unexpected data after the JSON value");
    return { ok: true, value };
  } catch (e) {
    if (e instanceof JsonError) return { ok: false, message: e.message };
    if (e instanceof RangeError) return { ok: false, message: `too deeply nested to read (${e.message})` };
    throw e;
  }
}

/** A JSON value of this reader as JSON text (bigints as their exact digits). */
export function stringifyJson(value: unknown): string {
  if (typeof value === "bigint") return value.toString();
  if (Array.isArray(value)) return `[${value.map(stringifyJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.entries(value)
      .map(([k, v]) => `${JSON.stringify(k)}:${stringifyJson(v)}`)
      .join(",")}}`;
  }
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value) ?? "undefined";
}

/** How deep a JSON value nests (a scalar is 0), without recursion. */
export function jsonDepth(value: unknown, limit = Infinity): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    const depth = d + 1;
    // Stryker disable next-line EqualityOperator: equivalent, >= assigns the same value
    if (depth > max) max = depth;
    if (max > limit) return max;
    for (const child of Object.values(v)) stack.push([child, depth]);
  }
  return max;
}
