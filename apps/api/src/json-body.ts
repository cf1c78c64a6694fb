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
import type { Readable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { LoopSmithError } from "@loopsmith/core";

export const MAX_DEPTH = 64;
/**
 * Values (objects, arrays, strings, numbers, literals; keys not counted) in one body. A goal is a few
 * hundred; the large parts of a body are strings (input files), one value each. Parsing and checking cost
 * grows with the values: a body of 100 000 empty objects took 60-85 ms of CPU here, so half that bound
 * keeps the worst accepted body near 40 ms of event loop.
 */
export const MAX_VALUES = 50_000;
/** A double needs at most 17 significant digits and a 3-digit exponent; 400 characters is any sane literal. */
export const MAX_NUMBER_LENGTH = 400;
/** How much of a refused literal or key a message shows. */
const SHOWN = 40;

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
 * reported: a body of fifty thousand values is checked without a string per value.
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

/** Where a container sits and what it has seen; paths and key sets are made only when needed. */
interface Frame {
  parent: Frame | null;
  /** Where this container sits in its parent. */
  at: Segment;
  object: boolean;
  /** The key being read (objects) or the index (arrays) of the current child. */
  key: string;
  index: number;
  /** Keys seen so far: the first alone until a second one comes (no Set for the many small objects). */
  first: string | undefined;
  keys: Set<string> | null;
}

/**
 * One left-to-right pass over a JSON text, fed in pieces as the body arrives (push), keeping only the
 * open containers (at most MAX_DEPTH of them), the number being read (at most MAX_NUMBER_LENGTH + 1
 * characters) and the key being read. push answers false once the text is refused: nothing more need be
 * read. The text may not be JSON at all (this runs before JSON.parse): the scan then stops early or
 * reports nonsense, never throws or loops, and JSON.parse gives the real reason; duplicateKey and
 * lossyInteger are only meaningful for a text JSON.parse accepts.
 *
 * String contents are skipped with indexOf, so a body that is mostly one large file's text costs little.
 */
export class JsonTextScanner {
  readonly result: TextScan = { refusal: null, duplicateKey: null, lossyInteger: null };
  private top: Frame | null = null;
  private depth = 0;
  private expectKey = false;
  private values = 0;
  /** Inside a string: whether it is a key (its pieces are kept), and the backslashes that ended the last piece. */
  private inString = false;
  private keyParts: string[] | null = null;
  private slashes = 0;
  /** The number being read, or null. */
  private number: string | null = null;
  private stopped = false;

  private pathTo(frame: Frame, last: Segment): string {
    const segs: Segment[] = [last];
    for (let f: Frame = frame; f.parent !== null; f = f.parent) segs.push(f.at);
    return ["body", ...segs.reverse().map((k) => (typeof k === "number" ? String(k) : clipped(k)))].join(".");
  }

  /** The path of the value starting (or being read) now. */
  private here(): string {
    const top = this.top;
    return top === null ? "body" : this.pathTo(top, top.object ? top.key : top.index);
  }

  private refuse(message: string): false {
    this.result.refusal = { path: this.here(), message };
    this.stopped = true;
    return false;
  }

  /** Counts a value starting here; false once the body holds too many. */
  private counted(): boolean {
    return ++this.values <= MAX_VALUES || this.refuse(`holds more than ${MAX_VALUES} JSON values; send large data as an input file or a checker file`);
  }

  private endNumber(): void {
    const literal = this.number!;
    this.number = null;
    if (this.result.lossyInteger !== null || literal.length < MAX_SAFE.length) return;
    const digits = literal.startsWith("-") ? literal.slice(1) : literal;
    // JSON has no leading zeros, so for digit strings a longer one is larger and equal lengths compare as text.
    if (/^\d+$/.test(digits) && (digits.length > MAX_SAFE.length || (digits.length === MAX_SAFE.length && digits > MAX_SAFE)))
      this.result.lossyInteger = {
        path: this.here(),
        message: `the integer ${clipped(literal)} (${digits.length} digits) is beyond 2^53 and would lose precision as a JSON number; put exact values in a checker file (checker_files), which checks read exactly`,
      };
  }

  private endKey(raw: string): void {
    const top = this.top!;
    let key = raw;
    if (key.includes("\\")) {
      try {
        key = JSON.parse(`"${raw}"`) as string;
      } catch {
        // A bad escape: not JSON, and JSON.parse will refuse the whole text.
      }
    }
    if (top.first === undefined) top.first = key;
    else {
      top.keys ??= new Set([top.first]);
      if (top.keys.has(key)) this.result.duplicateKey ??= { path: this.pathTo(top, key), message: `the key "${clipped(key)}" appears more than once in this object` };
      top.keys.add(key);
    }
    top.key = key;
    this.expectKey = false;
  }

  /** Scans the next piece of the text; false once the text is refused (see result.refusal). */
  push(text: string): boolean {
    if (this.stopped) return false;
    const n = text.length;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        // The closing quote: the next one not escaped, i.e. with an even run of backslashes before it
        // (a run that reaches back to the start of this piece continues the last piece's).
        let end = i - 1;
        for (;;) {
          end = text.indexOf('"', end + 1);
          if (end < 0) break;
          let run = 0;
          while (end - 1 - run >= i && text.charCodeAt(end - 1 - run) === 0x5c) run++;
          if (end - run === i) run += this.slashes;
          if (run % 2 === 0) break;
        }
        if (end < 0) {
          // The string goes on in the next piece: remember the backslashes this one ends with.
          let run = 0;
          while (n - 1 - run >= i && text.charCodeAt(n - 1 - run) === 0x5c) run++;
          this.slashes = n - run === i ? this.slashes + run : run;
          this.keyParts?.push(text.slice(i));
          return true;
        }
        this.inString = false;
        this.slashes = 0;
        if (this.keyParts) {
          this.keyParts.push(text.slice(i, end));
          const raw = this.keyParts.join("");
          this.keyParts = null;
          this.endKey(raw);
        }
        i = end + 1;
        continue;
      }
      if (this.number !== null) {
        // Read no further than the bound: a 15 MiB literal is refused after MAX_NUMBER_LENGTH + 1 characters.
        const limit = Math.min(n, i + MAX_NUMBER_LENGTH + 1 - this.number.length);
        let end = i;
        while (end < limit && isNumberChar(text.charCodeAt(end))) end++;
        this.number += text.slice(i, end);
        // Never converted, never echoed whole: its first digits say which one it is.
        if (this.number.length > MAX_NUMBER_LENGTH) return this.refuse(`a number literal (${clipped(this.number)}) is longer than ${MAX_NUMBER_LENGTH} characters`);
        if (end === n) return true; // it may go on in the next piece
        this.endNumber();
        i = end;
        continue;
      }
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        this.inString = true;
        this.slashes = 0;
        if (this.expectKey && this.top?.object) this.keyParts = [];
        else if (!this.counted()) return false;
      } else if (c === 0x7b || c === 0x5b) {
        if (!this.counted()) return false;
        if (this.depth >= MAX_DEPTH) return this.refuse(`nested deeper than ${MAX_DEPTH} levels`);
        const top = this.top;
        const at: Segment = top === null ? "" : top.object ? top.key : top.index;
        this.top = { parent: top, at, object: c === 0x7b, key: "", index: 0, first: undefined, keys: null };
        this.depth++;
        this.expectKey = c === 0x7b;
      } else if (c === 0x7d || c === 0x5d) {
        if (this.top !== null) {
          this.top = this.top.parent;
          this.depth--;
        }
        this.expectKey = false;
      } else if (c === 0x2c) {
        if (this.top?.object) this.expectKey = true;
        else if (this.top) this.top.index++;
      } else if ((c >= 0x30 && c <= 0x39) || c === 0x2d) {
        if (!this.counted()) return false;
        this.number = "";
        continue; // read by the number branch, from this character
      } else if (c === 0x74 || c === 0x66 || c === 0x6e) {
        // true, false, null: only their first letters are among these.
        if (!this.counted()) return false;
      }
      i++;
    }
    return true;
  }

  /** The text is complete: a number that ran to its end is finished. */
  end(): TextScan {
    if (!this.stopped && this.number !== null) this.endNumber();
    return this.result;
  }
}

/** scanJsonText over a whole text (see JsonTextScanner). */
export function scanJsonText(text: string): TextScan {
  const scanner = new JsonTextScanner();
  scanner.push(text);
  return scanner.end();
}

/** The first key that appears twice in one object of a JSON text (see scanJsonText). */
export function findDuplicateKey(text: string): BodyProblem | null {
  return scanJsonText(text).duplicateKey;
}

/** The body's largest size: the route's limit (Fastify's bodyLimit unless the route sets its own). */
function limitOf(req: FastifyRequest): number {
  return req.routeOptions.bodyLimit;
}

/**
 * The body is read as it arrives: each piece is decoded (strict UTF-8) and scanned at once, so the rest of
 * a body the scan refuses is neither kept, decoded nor scanned, and a large body is never copied into
 * one buffer nor decoded in one go.
 */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", (req: FastifyRequest, payload: Readable & { receivedEncodedLength?: number }, done: (err: Error | null, body?: unknown) => void) => {
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers["content-type"] ?? "")?.[1]?.toLowerCase();
    if (charset && charset !== "utf-8" && charset !== "utf8") return done(new LoopSmithError("LS_ERR_UNSUPPORTED_MEDIA_TYPE", `Send JSON as UTF-8, not ${charset}.`));
    const limit = limitOf(req);
    const declared = Number(req.headers["content-length"]);
    if (declared > limit) return done(tooLarge());
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const scanner = new JsonTextScanner();
    const pieces: string[] = [];
    let received = 0;
    let finished = false;
    const finish = (err: Error | null, body?: unknown) => {
      if (finished) return;
      finished = true;
      payload.removeListener("data", onData);
      payload.removeListener("end", onEnd);
      payload.removeListener("error", onError);
      done(err, body);
    };
    // A refused body is still read to its end, and only counted: answering at once and closing made
    // clients that send the whole body before reading get a connection reset (EPIPE) instead of the 400.
    // Reading and dropping the rest costs the event loop next to nothing; what the refusal saves is the
    // buffering, decoding, parsing and checking.
    let refused: Error | null = null;
    const refuse = (err: Error) => {
      refused = err;
      pieces.length = 0;
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) return finish(tooLarge());
      if (refused) return;
      let text: string;
      try {
        text = decoder.decode(bytes, { stream: true });
      } catch {
        return refuse(invalid("body", "not valid UTF-8"));
      }
      pieces.push(text);
      if (!scanner.push(text)) refuse(invalid(scanner.result.refusal!.path, scanner.result.refusal!.message));
    };
    const onError = (err: Error & { statusCode?: number }) => {
      if (!(typeof err.statusCode === "number" && err.statusCode >= 400)) err.statusCode = 400;
      finish(err);
    };
    const onEnd = () => {
      if (!Number.isNaN(declared) && (payload.receivedEncodedLength || received) !== declared)
        return finish(new LoopSmithError("LS_ERR_VALIDATION", "The request body's length differs from its Content-Length.", [{ path: "body", message: "length differs from Content-Length" }]));
      if (refused) return finish(refused);
      let last: string;
      try {
        last = decoder.decode(); // a character cut off at the end is invalid UTF-8 too
      } catch {
        return finish(invalid("body", "not valid UTF-8"));
      }
      pieces.push(last);
      if (!scanner.push(last)) return finish(invalid(scanner.result.refusal!.path, scanner.result.refusal!.message));
      const scan = scanner.end();
      const text = pieces.join("");
      if (text.length === 0) return finish(null, null);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (e) {
        return finish(invalid("body", `not valid JSON (${(e as Error).message})`));
      }
      const problem = findBodyProblem(parsed) ?? scan.duplicateKey ?? scan.lossyInteger;
      if (problem) return finish(invalid(problem.path, problem.message));
      finish(null, parsed);
    };
    payload.on("data", onData);
    payload.on("end", onEnd);
    payload.on("error", onError);
    payload.resume();
  });
}

function tooLarge(): Error {
  // Fastify's own error, which the error handler answers as 413 LS_ERR_PAYLOAD_TOO_LARGE with the limit.
  return Object.assign(new Error("Request body is too large"), { statusCode: 413, code: "FST_ERR_CTP_BODY_TOO_LARGE" });
}
