// The JSON body parser. Stricter than Fastify's own, because what it lets through ends up in Postgres:
// invalid UTF-8 is refused (not silently replaced by U+FFFD), and so is a lone surrogate written as an
// escape ("\ud800": Postgres refuses it in jsonb and replaces it in text), NUL characters are refused
// where the value is stored as text or jsonb (Postgres cannot hold them; input file contents are stored as
// bytes and may hold anything), a key that appears twice in one object is refused (JSON.parse keeps the
// last one silently, so the client and the idempotency comparison would disagree on what was sent), and
// so is an integer JSON.parse would round.
// What a body costs the event loop grows with its number of values, not its bytes: JSON.parse of 10 MB of
// "[[[[..." built 5 million arrays (6 s, 1.2 GB) before any check could refuse it, and turning a 15 MiB
// integer literal into a BigInt took 22 s. So one linear scan of the text refuses nesting past MAX_DEPTH,
// more than MAX_VALUES values and number literals longer than MAX_NUMBER_LENGTH before JSON.parse runs
// (issue 25); the same scan finds duplicate keys and integers beyond 2^53 from the text, without BigInt.
import type { FastifyInstance } from "fastify";
import { LoopSmithError } from "@loopsmith/core";

export const MAX_DEPTH = 64;
/**
 * Values (objects, arrays, strings, numbers, literals; keys not counted) in one body. A goal is a few
 * hundred; the large parts of a body are strings (input files), one value each. At this bound, parsing
 * and checking a body of small values stays in the tens of milliseconds.
 */
export const MAX_VALUES = 100_000;
/** A double needs at most 17 significant digits and a 3-digit exponent; 400 characters is any sane literal. */
export const MAX_NUMBER_LENGTH = 400;
/** How much of a refused literal or key a message shows. */
const SHOWN = 40;

const decoder = new TextDecoder("utf-8", { fatal: true });

export interface BodyProblem {
  path: string;
  message: string;
}

function invalid(path: string, message: string): LoopSmithError {
  return new LoopSmithError("LS_ERR_VALIDATION", `The request body is invalid: ${message}.`, [{ path, message }]);
}

/** A piece of client text as a message or path shows it: at most SHOWN characters. */
export function clipped(text: string): string {
  return text.length > SHOWN ? `${text.slice(0, SHOWN)}…` : text;
}

/** Where a NUL may appear: the text of an input file, stored as bytes. */
const NUL_ALLOWED = /^body\.inputs\.\d+\.text$/;

/** With the u flag a surrogate pair is one code point: this matches only a surrogate standing alone. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

type Segment = string | number;
interface Visit {
  value: unknown;
  parent: Visit | null;
  key: Segment;
}

/** "body.a.0.b", built only for the one value a message is about. */
function pathOf(v: Visit): string {
  const keys: Segment[] = [];
  for (let at: Visit | null = v; at?.parent; at = at.parent) keys.push(at.key);
  return ["body", ...keys.reverse().map((k) => (typeof k === "number" ? String(k) : clipped(k)))].join(".");
}

/**
 * The first NUL or lone surrogate in a parsed body. Iterative, and paths are built only for what is
 * reported: a body of a hundred thousand values is checked without a string per value.
 */
export function findBodyProblem(root: unknown): BodyProblem | null {
  const stack: Visit[] = [{ value: root, parent: null, key: "" }];
  while (stack.length) {
    const visit = stack.pop()!;
    const value = visit.value;
    if (typeof value === "string") {
      if (value.includes("\u0000")) {
        const path = pathOf(visit);
        if (!NUL_ALLOWED.test(path)) return { path, message: "contains a NUL (\\u0000) character" };
      }
      if (LONE_SURROGATE.test(value)) return { path: pathOf(visit), message: "contains a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which is not a character" };
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) if (value[i] !== null && (typeof value[i] === "object" || typeof value[i] === "string")) stack.push({ value: value[i], parent: visit, key: i });
      continue;
    }
    for (const [k, v] of Object.entries(value)) {
      const at = { value: v, parent: visit, key: k };
      if (k.includes("\u0000")) return { path: pathOf(at).replace(/\u0000/g, "\\u0000"), message: "a key contains a NUL (\\u0000) character" };
      if (LONE_SURROGATE.test(k)) return { path: pathOf(at).replace(/[\ud800-\udfff]/gu, "\uFFFD"), message: "a key contains a lone UTF-16 surrogate" };
      stack.push(at);
    }
  }
  return null;
}

/** What one linear pass over a body's text finds. */
export interface TextScan {
  /** A reason to refuse the text before JSON.parse builds anything from it (too deep, too many values, too long a number). */
  refusal: BodyProblem | null;
  /** The first key that appears twice in one object. */
  duplicateKey: BodyProblem | null;
  /** The first integer literal beyond 2^53, which JSON.parse would round. */
  lossyInteger: BodyProblem | null;
}

const MAX_SAFE = String(Number.MAX_SAFE_INTEGER);

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/**
 * Scans a JSON text once, left to right, keeping only the open containers (at most MAX_DEPTH of them).
 * The text may not be JSON at all (this runs before JSON.parse): the scan then ends early or reports
 * nonsense, never throws or loops, and JSON.parse gives the real reason. duplicateKey and lossyInteger
 * are only meaningful for a text JSON.parse accepts.
 *
 * Strings are skipped with indexOf, so a body that is mostly one large file's text costs little.
 */
export function scanJsonText(text: string): TextScan {
  // Paths and key sets are made only when needed: a body of 100 000 small values is scanned without
  // a string or a Set per container.
  interface Frame {
    parent: Frame | null;
    /** Where this container sits in its parent. */
    at: Segment;
    object: boolean;
    /** The key being read (objects) or the index (arrays) of the current child. */
    key: string;
    index: number;
    /** Keys seen so far; the first key alone until a second one comes. */
    first: string | undefined;
    keys: Set<string> | null;
  }
  const out: TextScan = { refusal: null, duplicateKey: null, lossyInteger: null };
  let top: Frame | null = null;
  let depth = 0;
  let expectKey = false;
  let values = 0;
  const pathTo = (frame: Frame, last: Segment) => {
    const segs: Segment[] = [last];
    for (let f: Frame = frame; f.parent !== null; f = f.parent) segs.push(f.at);
    return ["body", ...segs.reverse().map((k) => (typeof k === "number" ? String(k) : clipped(k)))].join(".");
  };
  /** The path of the value starting at the current position. */
  const here = () => (top === null ? "body" : pathTo(top, top.object ? top.key : top.index));
  // Counts a value starting here; false once the body holds too many.
  const counted = () => {
    if (++values <= MAX_VALUES) return true;
    out.refusal = { path: here(), message: `holds more than ${MAX_VALUES} JSON values; send large data as an input file or a checker file` };
    return false;
  };
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end < 0) return out; // unterminated: JSON.parse says so
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      if (expectKey && top?.object) {
        let key = text.slice(i + 1, end);
        if (key.includes("\\")) {
          try {
            key = JSON.parse(text.slice(i, end + 1)) as string;
          } catch {
            // A bad escape: not JSON, and JSON.parse will refuse the whole text.
          }
        }
        if (top.first === undefined) top.first = key;
        else {
          top.keys ??= new Set([top.first]);
          if (top.keys.has(key)) out.duplicateKey ??= { path: pathTo(top, key), message: `the key "${clipped(key)}" appears more than once in this object` };
          top.keys.add(key);
        }
        top.key = key;
        expectKey = false;
      } else if (!counted()) return out;
      i = end;
    } else if (c === 0x7b || c === 0x5b) {
      if (!counted()) return out;
      if (depth >= MAX_DEPTH) {
        out.refusal = { path: here(), message: `nested deeper than ${MAX_DEPTH} levels` };
        return out;
      }
      const at: Segment = top === null ? "" : top.object ? top.key : top.index;
      top = { parent: top, at, object: c === 0x7b, key: "", index: 0, first: undefined, keys: null };
      depth++;
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      if (top !== null) {
        top = top.parent;
        depth--;
      }
      expectKey = false;
    } else if (c === 0x2c) {
      if (top?.object) expectKey = true;
      else if (top) top.index++;
    } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
      if (!counted()) return out;
      // Read no further than the bound: a 15 MiB literal is refused after MAX_NUMBER_LENGTH + 1 characters.
      const limit = Math.min(n, i + MAX_NUMBER_LENGTH + 1);
      let end = i + 1;
      while (end < limit && isNumberChar(text.charCodeAt(end))) end++;
      if (end - i > MAX_NUMBER_LENGTH) {
        // Never converted, never echoed whole: its first digits say which one it is.
        out.refusal = { path: here(), message: `a number literal (${clipped(text.slice(i, end))}) is longer than ${MAX_NUMBER_LENGTH} characters` };
        return out;
      }
      if (out.lossyInteger === null && end - i >= MAX_SAFE.length) {
        const literal = text.slice(i, end);
        const digits = literal.startsWith("-") ? literal.slice(1) : literal;
        // JSON has no leading zeros, so for digit strings a longer one is larger and equal lengths compare as text.
        if (/^\d+$/.test(digits) && (digits.length > MAX_SAFE.length || (digits.length === MAX_SAFE.length && digits > MAX_SAFE)))
          out.lossyInteger = {
            path: here(),
            message: `the integer ${clipped(literal)} (${digits.length} digits) is beyond 2^53 and would lose precision as a JSON number; put exact values in a checker file (checker_files), which checks read exactly`,
          };
      }
      i = end - 1;
    } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
      // true, false, null: only their first letters are among these.
      if (!counted()) return out;
    }
  }
  return out;
}

/** The first key that appears twice in one object of a JSON text (see scanJsonText). */
export function findDuplicateKey(text: string): BodyProblem | null {
  return scanJsonText(text).duplicateKey;
}

export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (req, body, done) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
    if (charset && charset !== "utf-8" && charset !== "utf8")
      return done(new LoopSmithError("LS_ERR_UNSUPPORTED_MEDIA_TYPE", `Send JSON as UTF-8, not ${charset}.`), undefined);
    const buf = body as Buffer;
    if (buf.length === 0) return done(null, null);
    let text: string;
    try {
      text = decoder.decode(buf);
    } catch {
      return done(invalid("body", "not valid UTF-8"), undefined);
    }
    const scan = scanJsonText(text);
    if (scan.refusal) return done(invalid(scan.refusal.path, scan.refusal.message), undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return done(invalid("body", `not valid JSON (${(e as Error).message})`), undefined);
    }
    const problem = findBodyProblem(parsed) ?? scan.duplicateKey ?? scan.lossyInteger;
    if (problem) return done(invalid(problem.path, problem.message), undefined);
    done(null, parsed);
  });
}
