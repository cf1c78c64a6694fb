// The JSON body parser. Stricter than Fastify's own, because what it lets through ends up in Postgres:
// invalid UTF-8 is refused (not silently replaced by U+FFFD), and so is a lone surrogate written as an
// escape ("\ud800": Postgres refuses it in jsonb and replaces it in text), NUL characters are refused
// where the value is stored as text or jsonb (Postgres cannot hold them; input file contents are stored as
// bytes and may hold anything), a key that appears twice in one object is refused (JSON.parse keeps the
// last one silently, so the client and the idempotency comparison would disagree on what was sent), and
// nesting deeper than MAX_DEPTH is refused before any code walks it recursively.
import type { FastifyInstance } from "fastify";
import { LoopSmithError } from "@loopsmith/core";
import { parseJsonExact } from "@loopsmith/verifier";

export const MAX_DEPTH = 64;
const decoder = new TextDecoder("utf-8", { fatal: true });

function invalid(path: string, message: string): LoopSmithError {
  return new LoopSmithError("LS_ERR_VALIDATION", `The request body is invalid: ${message}.`, [{ path, message }]);
}

/** Where a NUL may appear: the text of an input file, stored as bytes. */
const NUL_ALLOWED = /^body\.inputs\.\d+\.text$/;

/** With the u flag a surrogate pair is one code point: this matches only a surrogate standing alone. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/** The first NUL, lone surrogate or over-deep spot in a parsed body; iterative, so any depth is safe to inspect. */
export function findBodyProblem(root: unknown): { path: string; message: string } | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: "body", depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === "string") {
      if (value.includes("\u0000") && !NUL_ALLOWED.test(path)) return { path, message: "contains a NUL (\\u0000) character" };
      if (LONE_SURROGATE.test(value)) return { path, message: "contains a lone UTF-16 surrogate (an escape such as \\ud800 without its pair), which is not a character" };
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_DEPTH) return { path, message: `nested deeper than ${MAX_DEPTH} levels` };
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, path: `${path}.${i}`, depth: depth + 1 }));
    else
      for (const [k, v] of Object.entries(value)) {
        if (k.includes("\u0000")) return { path: `${path}.${k.replace(/\u0000/g, "\\u0000")}`, message: "a key contains a NUL (\\u0000) character" };
        if (LONE_SURROGATE.test(k)) return { path: `${path}.${k.replace(/[\ud800-\udfff]/gu, "\uFFFD")}`, message: "a key contains a lone UTF-16 surrogate" };
        stack.push({ value: v, path: `${path}.${k}`, depth: depth + 1 });
      }
  }
  return null;
}

/**
 * The first key that appears twice in one object of a JSON text JSON.parse has already accepted (so the
 * text is valid JSON and the scan can be simple). One pass; a string is skipped with indexOf, so a body
 * that is mostly one large file's text costs little.
 */
export function findDuplicateKey(text: string): { path: string; message: string } | null {
  type Frame = { path: string; keys: Set<string> | null; key: string; index: number };
  const stack: Frame[] = [];
  let expectKey = false;
  const childPath = () => {
    const top = stack[stack.length - 1];
    if (!top) return "body";
    return top.keys ? `${top.path}.${top.key}` : `${top.path}.${top.index}`;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      let end = i;
      for (;;) {
        end = text.indexOf('"', end + 1);
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        if (slashes % 2 === 0) break;
      }
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes("\\") ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.keys.has(key)) return { path: `${top.path}.${key}`, message: `the key "${key}" appears more than once in this object` };
        top.keys.add(key);
        top.key = key;
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b) {
      stack.push({ path: childPath(), keys: new Set(), key: "", index: 0 });
      expectKey = true;
    } else if (c === 0x5b) {
      stack.push({ path: childPath(), keys: null, key: "", index: 0 });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.index++;
    }
  }
  return null;
}

/**
 * An integer literal JSON.parse would round (beyond 2^53): refused with its path rather than stored
 * rounded, since an expected value of 9007199254740993 would silently become 9007199254740992. Exact
 * values go in a checker file, which the checks read exactly.
 */
export function findLossyInteger(text: string): { path: string; message: string } | null {
  // Cheap first: no run of 16 digits, no integer that large.
  if (!/\d{16}/.test(text)) return null;
  const exact = parseJsonExact(text, MAX_DEPTH + 1);
  if (!exact.ok) return null;
  const stack: { value: unknown; path: string }[] = [{ value: exact.value, path: "body" }];
  while (stack.length) {
    const { value, path } = stack.pop()!;
    if (typeof value === "bigint") {
      return { path, message: `the integer ${value} is beyond 2^53 and would lose precision as a JSON number; put exact values in a checker file (checker_files), which checks read exactly` };
    }
    if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: `${path}.${k}` });
  }
  return null;
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
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return done(invalid("body", `not valid JSON (${(e as Error).message})`), undefined);
    }
    const problem = findBodyProblem(parsed) ?? findDuplicateKey(text) ?? findLossyInteger(text);
    if (problem) return done(invalid(problem.path, problem.message), undefined);
    done(null, parsed);
  });
}
