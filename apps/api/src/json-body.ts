// The JSON body parser. Stricter than Fastify's own, because what it lets through ends up in Postgres:
// invalid UTF-8 is refused (not silently replaced by U+FFFD), NUL characters are refused where the value
// is stored as text or jsonb (Postgres cannot hold them; input file contents are stored as bytes and may
// hold anything), and nesting deeper than MAX_DEPTH is refused before any code walks it recursively.
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

/** The first NUL or over-deep spot in a parsed body; iterative, so any depth is safe to inspect. */
export function findBodyProblem(root: unknown): { path: string; message: string } | null {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: "body", depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value === "string") {
      if (value.includes("\u0000") && !NUL_ALLOWED.test(path)) return { path, message: "contains a NUL (\\u0000) character" };
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_DEPTH) return { path, message: `nested deeper than ${MAX_DEPTH} levels` };
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, path: `${path}.${i}`, depth: depth + 1 }));
    else
      for (const [k, v] of Object.entries(value)) {
        if (k.includes("\u0000")) return { path: `${path}.${k.replace(/\u0000/g, "\\u0000")}`, message: "a key contains a NUL (\\u0000) character" };
        stack.push({ value: v, path: `${path}.${k}`, depth: depth + 1 });
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
    const problem = findBodyProblem(parsed) ?? findLossyInteger(text);
    if (problem) return done(invalid(problem.path, problem.message), undefined);
    done(null, parsed);
  });
}
