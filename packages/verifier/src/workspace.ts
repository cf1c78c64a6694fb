// issue 14: a goal's workspace (a directory tree the client sends as a tar, tar.gz or zip archive), the
// files an attempt changes in it, and the patch between the two. Pure: buffers in, data out. The API
// unpacks an archive once (refusing what cannot be placed safely under /work) and stores the files as
// a normalized tar of regular files; the runner reads them back, applies an attempt's files and diffs.
import { gunzipSync, inflateRawSync } from "node:zlib";
import { WORKSPACE_PATCH, workspacePathProblem } from "@loopsmith/schemas";
import * as tar from "tar-stream";
import * as yauzl from "yauzl";

export interface WorkspaceFile {
  /** Relative to the workspace root (the program's working directory), '/'-separated. */
  path: string;
  content: Buffer;
}

export interface WorkspaceLimits {
  /** Bytes of all files together, unpacked. */
  maxBytes: number;
  /** Archive entries (directories included). */
  maxEntries: number;
}

export const DEFAULT_WORKSPACE_LIMITS: Readonly<WorkspaceLimits> = Object.freeze({ maxBytes: 16 * 1024 * 1024, maxEntries: 5000 });

/** The patch artifact of a workspace goal, and the prefix its changed files are stored under. */
export { WORKSPACE_PATCH };
export const WORKSPACE_FILES_PREFIX = "workspace/";

export { workspacePathProblem };

export type UnpackResult = { ok: true; files: WorkspaceFile[]; format: "tar" | "tar.gz" | "zip" } | { ok: false; entry: string; message: string };

/** What a refused archive says: the entry (as named in the archive) and why. */
const refuse = (entry: string, message: string): UnpackResult => ({ ok: false, entry, message });

interface RawEntry {
  name: string;
  kind: "file" | "directory" | "symlink" | "hardlink" | "other";
  /** For links: the target as written in the archive. */
  target?: string;
  /** The entry's type in the archive's words, for messages. */
  type: string;
  content: Buffer;
}

/**
 * Unpacks a workspace archive (tar, gzip'd tar, or zip, told apart by their first bytes). Refused, with
 * the entry named: absolute paths, `..`, links that point outside the workspace (or at nothing in it),
 * devices, fifos, paths under inputs/ or out/, an entry given twice, a file where a directory is, and
 * archives over the limits. A link to a file inside the workspace becomes a copy of that file (the
 * sandbox places regular files only).
 */
export async function unpackWorkspace(archive: Buffer, limits: WorkspaceLimits = DEFAULT_WORKSPACE_LIMITS): Promise<UnpackResult> {
  let entries: RawEntry[];
  let format: "tar" | "tar.gz" | "zip";
  try {
    if (archive.length >= 4 && archive.readUInt32LE(0) === 0x04034b50) {
      format = "zip";
      entries = await readZip(archive, limits);
      // gzip's magic (a buffer too short for it reads undefined there).
    } else if (archive[0] === 0x1f && archive[1] === 0x8b) {
      format = "tar.gz";
      // Bounded: a small archive must not inflate into gigabytes on the API host.
      entries = await readTar(gunzipSync(archive, { maxOutputLength: limits.maxBytes + limits.maxEntries * 1024 + 1024 }), limits);
    } else {
      format = "tar";
      entries = await readTar(archive, limits);
    }
  } catch (e) {
    if (e instanceof Refusal) return refuse(e.entry, e.message);
    return refuse("(archive)", `not a readable tar, tar.gz or zip archive: ${(e as Error).message}`);
  }
  return place(entries, limits, format);
}

class Refusal extends Error {
  constructor(
    readonly entry: string,
    message: string,
  ) {
    super(message);
  }
}

function normalize(name: string): string {
  // "./src/a.ts" and "src/" (a directory) name the same places as "src/a.ts" and "src".
  let n = name;
  while (n.startsWith("./")) n = n.slice(2);
  return n.endsWith("/") ? n.slice(0, -1) : n;
}

function place(entries: RawEntry[], limits: WorkspaceLimits, format: "tar" | "tar.gz" | "zip"): UnpackResult {
  // Stryker disable next-line all: unreachable, readTar and readZip refuse more entries before they return (kept for other readers)
  if (entries.length > limits.maxEntries) return refuse("(archive)", `more than ${limits.maxEntries} entries`);
  const files = new Map<string, Buffer>();
  const dirs = new Set<string>();
  const links: { path: string; target: string; entry: string }[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const e of entries) {
    const path = normalize(e.name);
    if (path === "" || path === ".") {
      if (e.kind === "directory") continue;
      return refuse(e.name, "names the workspace root itself");
    }
    if (e.name.includes("\\")) return refuse(e.name, "contains a backslash");
    const problem = workspacePathProblem(path);
    if (problem) return refuse(e.name, `the path ${problem}`);
    if (e.kind === "other") return refuse(e.name, `is a ${e.type}: only files, directories and links inside the workspace are accepted`);
    if (e.kind === "directory") {
      if (files.has(path)) return refuse(e.name, "is a directory and a file");
      dirs.add(path);
      continue;
    }
    if (seen.has(path)) return refuse(e.name, "is given twice");
    seen.add(path);
    if (e.kind === "symlink" || e.kind === "hardlink") {
      const target = e.target ?? "";
      // A hard link names its target from the root (an absolute one stays absolute, which the path check refuses).
      const resolved = e.kind === "hardlink" ? normalize(target) : resolveLink(path, target);
      if (resolved === null || workspacePathProblem(resolved) !== null) {
        return refuse(e.name, `is a link to ${JSON.stringify(target)}, outside the workspace`);
      }
      links.push({ path, target: resolved, entry: e.name });
      continue;
    }
    total += e.content.length;
    // Stryker disable next-line all: unreachable, readTar and readZip refuse these bytes while reading (the links below are counted only here)
    if (total > limits.maxBytes) return refuse(e.name, `the files exceed ${limits.maxBytes} bytes unpacked`);
    files.set(path, e.content);
  }
  // Links last: their targets may come after them in the archive. A link to a link is followed (bounded).
  // issue 25: by a map (a search of the list per hop took up to 1.3 s of the API's thread for 5,000 entries).
  // Paths are unique (a second entry is refused above), so the map finds what the search found.
  const linkAt = new Map(links.map((l) => [l.path, l]));
  for (const l of links) {
    let target = l.target;
    for (let hops = 0; !files.has(target) && hops < 8; hops++) {
      const next = linkAt.get(target);
      if (!next) break;
      target = next.target;
    }
    const content = files.get(target);
    if (content === undefined) return refuse(l.entry, `is a link to ${JSON.stringify(l.target)}, which is not a file in the workspace`);
    total += content.length;
    if (total > limits.maxBytes) return refuse(l.entry, `the files exceed ${limits.maxBytes} bytes unpacked`);
    files.set(l.path, content);
  }
  // A file where another entry needs a directory cannot be placed.
  for (const path of files.keys()) {
    const segments = path.split("/");
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join("/");
      if (files.has(dir)) return refuse(path, `needs ${dir} to be a directory, but it is a file`);
    }
    if (dirs.has(path)) return refuse(path, "is a directory and a file");
  }
  const out = [...files].map(([path, content]) => ({ path, content })).sort(byPath);
  return { ok: true, files: out, format };
}

/** Sorts files by path (code unit order). Paths are unique (they come from a Map), so none compare equal. */
// Stryker disable next-line EqualityOperator: equivalent; no two paths are equal, so < and <= sort alike
const byPath = (a: WorkspaceFile, b: WorkspaceFile) => (a.path < b.path ? -1 : 1);

/** A symlink's target as a workspace path, or null when it leaves the workspace. */
function resolveLink(linkPath: string, target: string): string | null {
  if (target.startsWith("/") || target === "") return null;
  const parts = linkPath.split("/").slice(0, -1);
  for (const seg of target.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(seg);
  }
  // Stryker disable next-line ConditionalExpression: equivalent here; the caller's path check refuses "" (the root) as well
  return parts.length === 0 ? null : parts.join("/");
}

async function readTar(buf: Buffer, limits: WorkspaceLimits): Promise<RawEntry[]> {
  const entries: RawEntry[] = [];
  const extract = tar.extract();
  extract.end(buf);
  let total = 0;
  for await (const entry of extract) {
    const h = entry.header;
    const chunks: Buffer[] = [];
    for await (const c of entry as AsyncIterable<Buffer>) {
      total += c.length;
      if (total > limits.maxBytes) throw new Refusal(h.name, `the files exceed ${limits.maxBytes} bytes unpacked`);
      chunks.push(c);
    }
    if (entries.length >= limits.maxEntries) throw new Refusal(h.name, `more than ${limits.maxEntries} entries`);
    const kind = h.type === "file" || h.type === "contiguous-file" ? "file" : h.type === "directory" ? "directory" : h.type === "symlink" ? "symlink" : h.type === "link" ? "hardlink" : "other";
    entries.push({ name: h.name, kind, type: h.type ?? "unknown", ...(h.linkname ? { target: h.linkname } : {}), content: Buffer.concat(chunks) });
  }
  return entries;
}

/**
 * A zip's entries, read by yauzl (stored and deflated entries, zip64 too; no encryption). What yauzl leaves
 * to its caller is judged here, in the central directory's order: the entry count before any entry is read,
 * encryption, the file type (Unix zips keep it in the external attributes' high bits), the declared sizes
 * summed before an entry is inflated (a bomb's directory gives it away), and each entry inflated no
 * further than its declared size (a bomb that lies about its size).
 */
async function readZip(buf: Buffer, limits: WorkspaceLimits): Promise<RawEntry[]> {
  // decodeStrings false: names stay bytes, decoded as UTF-8 here and judged by place(), which names the
  // entry (yauzl's own name checks refuse `..` or an absolute path with an error that names none).
  // validateEntrySizes false: readEntryContent holds each entry to its declared size, naming the entry.
  const zip = await yauzl.fromBufferPromise(buf, { decodeStrings: false, validateEntrySizes: false });
  if (zip.entryCount > limits.maxEntries) throw new Refusal("(archive)", `more than ${limits.maxEntries} entries`);
  const entries: RawEntry[] = [];
  let total = 0;
  for await (const entry of zip.eachEntry()) {
    const name = entry.fileNameRaw.toString("utf8");
    if (entry.isEncrypted()) throw new Refusal(name, "is encrypted");
    const mode = entry.versionMadeBy >> 8 === 3 ? entry.externalFileAttributes >>> 16 : 0;
    const ftype = mode & 0o170000;
    total += entry.uncompressedSize;
    if (total > limits.maxBytes) throw new Refusal(name, `the files exceed ${limits.maxBytes} bytes unpacked`);
    if (name.endsWith("/") || ftype === 0o040000) {
      // Stryker disable next-line StringLiteral: equivalent; an entry's type is read only in the refusal of kind "other"
      entries.push({ name, kind: "directory", type: "directory", content: Buffer.alloc(0) });
      continue;
    }
    if (!entry.canDecodeFileData()) throw new Refusal(name, `uses compression method ${entry.compressionMethod} (only stored and deflated entries are read)`);
    const content = await readEntryContent(zip, entry, name, buf);
    // Stryker disable next-line StringLiteral: equivalent; an entry's type is read only in the refusal of kind "other" (and utf8 is toString's default)
    if (ftype === 0o120000) entries.push({ name, kind: "symlink", type: "symlink", target: content.toString("utf8"), content: Buffer.alloc(0) });
    else if (ftype !== 0 && ftype !== 0o100000) entries.push({ name, kind: "other", type: "special file", content: Buffer.alloc(0) });
    else {
      // Stryker disable next-line StringLiteral: equivalent; place() takes every kind but directories, links and "other" as a file, and reads type only for "other"
      entries.push({ name, kind: "file", type: "file", content });
    }
  }
  return entries;
}

/**
 * An entry's bytes, refused as soon as they pass its declared size. yauzl finds them (its local header and
 * bounds checks included); zlib's one-shot inflater, whose output cap stops it at the declared size,
 * inflates them. yauzl's own read streams (an inflate stream per entry) took 1.2 s of the API thread's CPU
 * for 5,000 small entries here, this 0.3 s (issue 28).
 */
async function readEntryContent(zip: yauzl.ZipFile, entry: yauzl.Entry, name: string, buf: Buffer): Promise<Buffer> {
  let raw: Buffer;
  try {
    const { fileDataStart } = await zip.readLocalFileHeaderPromise(entry, { minimal: true });
    raw = buf.subarray(fileDataStart, fileDataStart + entry.compressedSize);
  } catch (e) {
    throw new Error(`${name}: ${(e as Error).message}`);
  }
  let content: Buffer;
  if (entry.compressionMethod === 0) content = Buffer.from(raw);
  else {
    try {
      // zlib takes no cap below 1: an entry declared empty gets 1, and a byte out fails the size check below.
      // An output chunk the entry's size (zlib's least is 64 bytes): the default 16 KiB per entry made a
      // 5,000-file zip about 30% slower, most of it garbage collection.
      content = inflateRawSync(raw, { maxOutputLength: Math.max(1, entry.uncompressedSize), chunkSize: Math.min(16_384, Math.max(64, entry.uncompressedSize)) });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") throw new Refusal(name, "its size does not match the archive's directory");
      throw new Error(`${name}: ${(e as Error).message}`);
    }
  }
  if (content.length !== entry.uncompressedSize) throw new Refusal(name, "its size does not match the archive's directory");
  return content;
}

/** The normalized tar a workspace is stored as: regular files only, sorted, fixed metadata. */
export async function packWorkspace(files: WorkspaceFile[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    // Stryker disable next-line StringLiteral: equivalent; packing buffers in memory does not fail
    pack.on("error", reject);
  });
  for (const f of files) {
    await new Promise<void>((resolve, reject) =>
      // Stryker disable next-line StringLiteral: equivalent; tar-stream writes a regular file's type flag for an empty type
      pack.entry({ name: f.path, size: f.content.length, mode: 0o644, mtime: new Date(0), type: "file" }, f.content, (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** Reads back what packWorkspace stored. */
export async function readStoredWorkspace(stored: Buffer): Promise<WorkspaceFile[]> {
  // Stryker disable next-line ObjectLiteral: equivalent; with {} every limit is undefined, and a comparison with undefined is false: no limits either
  const res = await unpackWorkspace(stored, { maxBytes: Number.MAX_SAFE_INTEGER, maxEntries: Number.MAX_SAFE_INTEGER });
  if (!res.ok) throw new Error(`stored workspace is unreadable: ${res.entry}: ${res.message}`);
  return res.files;
}

/** Whether a path is locked: listed exactly, or under a listed directory ("tests/" or "tests"). */
export function isLocked(path: string, locked: readonly string[]): boolean {
  return locked.some((l) => {
    const dir = l.endsWith("/") ? l.slice(0, -1) : l;
    return path === dir || path.startsWith(`${dir}/`);
  });
}

export interface AppliedWorkspace {
  /** The workspace with the attempt's files in place (locked paths as the original has them, when restoring). */
  files: WorkspaceFile[];
  /** Paths the attempt changed or added (content differs from the original), sorted. */
  changed: string[];
  /** The changed paths that are locked. */
  lockedChanged: string[];
  /** Attempt files left out because a file and a directory would share their path (the original's stay). */
  conflicts: string[];
}

/**
 * An attempt's files over the original workspace. Each attempt is applied to the original, never to the
 * previous attempt. With `restoreLocked`, locked paths keep the original's content (or stay absent).
 */
export function applyAttempt(original: WorkspaceFile[], attempt: WorkspaceFile[], locked: readonly string[], restoreLocked: boolean): AppliedWorkspace {
  const merged = new Map(original.map((f) => [f.path, f.content]));
  const before = new Map(merged);
  const changed: string[] = [];
  const conflicts: string[] = [];
  const dirs = new Set(original.flatMap((f) => f.path.split("/").slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join("/"))));
  for (const f of attempt) {
    // A file where the workspace has a directory, or under a path that is a file, cannot be placed.
    const parents = f.path.split("/").slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join("/"));
    if (dirs.has(f.path) || parents.some((p) => merged.has(p))) {
      conflicts.push(f.path);
      continue;
    }
    parents.forEach((p) => dirs.add(p));
    const old = before.get(f.path);
    if (old !== undefined && old.equals(f.content)) continue;
    changed.push(f.path);
    if (restoreLocked && isLocked(f.path, locked)) continue;
    merged.set(f.path, f.content);
  }
  changed.sort();
  const files = [...merged].map(([path, content]) => ({ path, content })).sort(byPath);
  return { files, changed, lockedChanged: changed.filter((p) => isLocked(p, locked)), conflicts };
}

// ------------------------------------------------------------------------------------------ diff
//
// issue 25: the diff is bounded. It once kept a copy of Myers' V map per edit distance: a 4,000-line file
// rewritten whole took 79 s and 2.3 GiB on the runner's own thread, long enough for heartbeats and BullMQ
// locks to lapse. Now: the common head and tail are cut off, lines found on one side only are set aside
// (they can be in no common subsequence, so the script stays shortest), and linear-space Myers (the middle
// snake, divide and conquer) runs on what is left under a work limit. Past the limit the changed middle is
// written as one replacement: not the shortest patch, still an exact one.
//
// The limit counts steps (diagonals visited, lines compared), not milliseconds, and it runs on the calling
// thread. A clock would make the patch, whose sha256 is on the tape and in receipts, depend on how busy the
// machine was; a thread would cost a start-up (a thread loads the verifier through tsx first: the check pool
// allows that 60 s) and a copy of every file, for a job that, bounded, takes tens of milliseconds.
// bench/workspace-diff.ts prints what a step costs here.

/**
 * Steps one file's diff may take before its changed middle is written as one replacement: 30-45 ms of CPU
 * on this 2-core machine (bench/workspace-diff.ts; the first call, not yet compiled, costs more). A whole
 * rewrite of an 8,000-line file whose blank lines and braces move takes 1.2 million; of 16,000, 4.6.
 */
export const DIFF_WORK_PER_FILE = 3_000_000;
/** Steps all the files of one patch may take together; the files after that are written as replacements. */
export const DIFF_WORK_PER_PATCH = 30_000_000;

function lines(text: string): string[] {
  // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent; "".split gives [""], which the pop below empties
  if (text === "") return [];
  const parts = text.split("\n");
  if (parts.at(-1) === "") parts.pop();
  return parts;
}

/** Lines with the last one marked when it has no newline (it differs from the same line with one, as in diff). */
function marked(text: string): string[] {
  const ls = lines(text);
  if (ls.length > 0 && !text.endsWith("\n")) ls[ls.length - 1] += NO_EOL;
  return ls;
}

/** Which lines a shortest edit script deletes from a and inserts from b; `minimal` false when the work limit ran out. */
interface Changes {
  deleted: Uint8Array;
  inserted: Uint8Array;
  minimal: boolean;
  /** Steps taken (the limit's unit). */
  work: number;
}

function changes(a: string[], b: string[], limit: number): Changes {
  const n = a.length;
  const m = b.length;
  const deleted = new Uint8Array(n);
  const inserted = new Uint8Array(m);
  let head = 0;
  while (head < n && head < m && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < n - head && tail < m - head && a[n - 1 - tail] === b[m - 1 - tail]) tail++;
  // Lines as numbers, keeping only those found on both sides (the others are deleted or inserted outright).
  const ids = new Map<string, number>();
  for (let j = head; j < m - tail; j++) if (!ids.has(b[j]!)) ids.set(b[j]!, ids.size);
  const inA = new Uint8Array(ids.size);
  // The kept lines' numbers (xs, ys) and where they are in a and b (xAt, yAt).
  const xs = new Int32Array(n - head - tail);
  const xAt = new Int32Array(xs.length);
  let nx = 0;
  for (let i = head; i < n - tail; i++) {
    const id = ids.get(a[i]!);
    if (id === undefined) deleted[i] = 1;
    else {
      inA[id] = 1;
      xs[nx] = id;
      xAt[nx++] = i;
    }
  }
  const ys = new Int32Array(m - head - tail);
  const yAt = new Int32Array(ys.length);
  let ny = 0;
  for (let j = head; j < m - tail; j++) {
    const id = ids.get(b[j]!)!;
    if (inA[id] === 0) inserted[j] = 1;
    else {
      ys[ny] = id;
      yAt[ny++] = j;
    }
  }
  const xDel = new Uint8Array(nx);
  const yIns = new Uint8Array(ny);
  const { work, complete } = middleSnakes(xs.subarray(0, nx), ys.subarray(0, ny), xDel, yIns, limit);
  // Reading and numbering the lines counts too: a patch's limit then also bounds its linear work.
  const total = work + n + m;
  if (!complete) {
    deleted.fill(1, head, n - tail);
    inserted.fill(1, head, m - tail);
    return { deleted, inserted, minimal: false, work: total };
  }
  xDel.forEach((d, k) => (deleted[xAt[k]!] = d));
  yIns.forEach((d, k) => (inserted[yAt[k]!] = d));
  return { deleted, inserted, minimal: true, work: total };
}

const FAR = 0x7fffffff;

/**
 * Myers' linear-space shortest edit script (the middle snake, as in GNU diff's diffseq.h without its
 * speed-ups that give up minimality): marks the deleted xs and inserted ys. Stops, incomplete, as soon
 * as the steps taken pass `limit`.
 */
function middleSnakes(xv: Int32Array, yv: Int32Array, xDel: Uint8Array, yIns: Uint8Array, limit: number): { work: number; complete: boolean } {
  const n = xv.length;
  const m = yv.length;
  // The furthest x on each diagonal k = x - y, forward and backward, at index k + m + 1 (k runs -m-1 .. n+1).
  const fd = new Int32Array(n + m + 3);
  const bd = new Int32Array(n + m + 3);
  const o = m + 1;
  let work = 0;
  const todo: number[] = [0, n, 0, m];
  while (todo.length > 0) {
    let ylim = todo.pop()!;
    let yoff = todo.pop()!;
    let xlim = todo.pop()!;
    let xoff = todo.pop()!;
    while (xoff < xlim && yoff < ylim && xv[xoff] === yv[yoff]) {
      xoff++;
      yoff++;
    }
    while (xoff < xlim && yoff < ylim && xv[xlim - 1] === yv[ylim - 1]) {
      xlim--;
      ylim--;
    }
    work += xlim - xoff + ylim - yoff;
    if (xoff === xlim) {
      yIns.fill(1, yoff, ylim);
      continue;
    }
    if (yoff === ylim) {
      xDel.fill(1, xoff, xlim);
      continue;
    }
    // Search from both corners, one edit at a time, until the paths meet: the meeting point is on a
    // shortest path, and each side of it is solved the same way.
    const dmin = xoff - ylim;
    const dmax = xlim - yoff;
    const fmid = xoff - yoff;
    const bmid = xlim - ylim;
    let fmin = fmid;
    let fmax = fmid;
    let bmin = bmid;
    let bmax = bmid;
    const odd = ((fmid - bmid) & 1) !== 0;
    fd[fmid + o] = xoff;
    bd[bmid + o] = xlim;
    let xmid = -1;
    let ymid = -1;
    search: for (;;) {
      if (fmin > dmin) fd[--fmin - 1 + o] = -1;
      else ++fmin;
      if (fmax < dmax) fd[++fmax + 1 + o] = -1;
      else --fmax;
      for (let d = fmax; d >= fmin; d -= 2) {
        const k = d + o;
        const lo = fd[k - 1]!;
        const hi = fd[k + 1]!;
        const x0 = lo < hi ? hi : lo + 1;
        let x = x0;
        let y = x0 - d;
        while (x < xlim && y < ylim && xv[x] === yv[y]) {
          x++;
          y++;
        }
        fd[k] = x;
        work += 1 + x - x0;
        if (odd && bmin <= d && d <= bmax && bd[k]! <= x) {
          xmid = x;
          ymid = y;
          break search;
        }
        if (work > limit) return { work, complete: false };
      }
      if (bmin > dmin) bd[--bmin - 1 + o] = FAR;
      else ++bmin;
      if (bmax < dmax) bd[++bmax + 1 + o] = FAR;
      else --bmax;
      for (let d = bmax; d >= bmin; d -= 2) {
        const k = d + o;
        const lo = bd[k - 1]!;
        const hi = bd[k + 1]!;
        const x0 = lo < hi ? lo : hi - 1;
        let x = x0;
        let y = x0 - d;
        while (xoff < x && yoff < y && xv[x - 1] === yv[y - 1]) {
          x--;
          y--;
        }
        bd[k] = x;
        work += 1 + x0 - x;
        if (!odd && fmin <= d && d <= fmax && x <= fd[k]!) {
          xmid = x;
          ymid = y;
          break search;
        }
        if (work > limit) return { work, complete: false };
      }
    }
    todo.push(xoff, xmid, yoff, ymid, xmid, xlim, ymid, ylim);
  }
  return { work, complete: true };
}

export interface FileDiff {
  /** The file's part of the patch ("" when equal). */
  text: string;
  /** False when the work limit ran out and the changed middle was written as one replacement. */
  minimal: boolean;
  /** Steps taken, counted against the limit. */
  work: number;
}

/**
 * One file's unified diff (3 lines of context) within `workLimit` steps. `before` null: a new file. A new
 * empty file, which a plain unified diff cannot express (it would have no hunk), gets git's header for
 * one (`new file mode`), which git apply and GNU patch both create the file from.
 */
export function diffFile(path: string, before: string | null, after: string, workLimit: number = DIFF_WORK_PER_FILE): FileDiff {
  if (before === after) return { text: "", minimal: true, work: 0 };
  if (before === null && after === "") return { text: `diff --git a/${path} b/${path}\nnew file mode 100644\n`, minimal: true, work: 0 };
  const a = marked(before ?? "");
  const b = marked(after);
  const { deleted, inserted, minimal, work } = changes(a, b, workLimit);
  // The script, deletions before insertions within a change: 0 keeps a line, 1 deletes one, 2 inserts one.
  const ops = new Uint8Array(a.length + b.length);
  let len = 0;
  for (let i = 0, j = 0; i < a.length || j < b.length; ) {
    if (i < a.length && deleted[i] === 1) {
      ops[len++] = 1;
      i++;
    } else if (j < b.length && inserted[j] === 1) {
      ops[len++] = 2;
      j++;
    } else {
      ops[len++] = 0;
      i++;
      j++;
    }
  }
  const header = `--- ${before === null ? "/dev/null" : `a/${path}`}\n+++ b/${path}\n`;
  const CONTEXT = 3;
  const out: string[] = [header];
  // Walk the script, cutting it into hunks around the changes; ai and bi are the lines of a and b before row r.
  let ai = 0;
  let bi = 0;
  let r = 0;
  while (r < len) {
    if (ops[r] === 0) {
      r++;
      ai++;
      bi++;
      continue;
    }
    const start = Math.max(0, r - CONTEXT);
    let end = r;
    // Extend while the next change is within 2*CONTEXT unchanged lines.
    for (;;) {
      while (end < len && ops[end] !== 0) end++;
      let next = end;
      while (next < len && ops[next] === 0) next++;
      if (next < len && next - end <= 2 * CONTEXT) end = next;
      else break;
    }
    end = Math.min(len, end + CONTEXT);
    const lead = r - start;
    let aLen = lead;
    let bLen = lead;
    for (let k = r; k < end; k++) {
      if (ops[k] !== 2) aLen++;
      if (ops[k] !== 1) bLen++;
    }
    const aStart = ai - lead;
    const bStart = bi - lead;
    out.push(`@@ -${aLen === 0 ? aStart : aStart + 1},${aLen} +${bLen === 0 ? bStart : bStart + 1},${bLen} @@\n`);
    ai = aStart;
    bi = bStart;
    // A run of rows with the same operation at a time: one join per run, not a string per line, keeps a
    // large patch from churning the heap.
    for (let k = start; k < end; ) {
      const op = ops[k]!;
      let e = k + 1;
      while (e < end && ops[e] === op) e++;
      if (op === 2) out.push(run("+", b, bi, (bi += e - k)));
      else out.push(run(op === 0 ? " " : "-", a, ai, (ai += e - k)));
      if (op === 0) bi += e - k;
      k = e;
    }
    r = end;
  }
  return { text: out.join(""), minimal, work };
}

/** One file's unified diff (see diffFile); "" when equal. */
export function unifiedDiff(path: string, before: string | null, after: string, workLimit: number = DIFF_WORK_PER_FILE): string {
  return diffFile(path, before, after, workLimit).text;
}

const NO_EOL = "\u0000no-eol";

/** Lines from..to of ls, each after `prefix`; only a text's last line can carry the NO_EOL mark. */
function run(prefix: string, ls: string[], from: number, to: number): string {
  const text = `${prefix}${ls.slice(from, to).join(`\n${prefix}`)}\n`;
  return to === ls.length && ls[to - 1]!.endsWith(NO_EOL) ? `${text.slice(0, -NO_EOL.length - 1)}\n\\ No newline at end of file\n` : text;
}

export interface WorkspacePatch {
  /** A unified diff per changed file, in path order, then new empty files; "" when nothing changed. */
  text: string;
  /** Changed text files whose diff ran out of work and was written as one replacement of the changed middle. */
  notMinimal: string[];
}

const breathe = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The patch of an attempt. Async because it gives the event loop a turn between files: each file's diff
 * is bounded (DIFF_WORK_PER_FILE), and the files of one patch share DIFF_WORK_PER_PATCH.
 */
export async function workspacePatch(
  original: WorkspaceFile[],
  applied: { files: WorkspaceFile[]; changed: string[] },
  limits: { perFile: number; perPatch: number } = { perFile: DIFF_WORK_PER_FILE, perPatch: DIFF_WORK_PER_PATCH },
): Promise<WorkspacePatch> {
  const before = new Map(original.map((f) => [f.path, f.content]));
  const after = new Map(applied.files.map((f) => [f.path, f.content]));
  const parts: string[] = [];
  const emptyNew: string[] = [];
  const notMinimal: string[] = [];
  let left = limits.perPatch;
  for (const p of applied.changed) {
    const now = after.get(p);
    if (now === undefined) continue;
    const was = before.get(p);
    if (isBinary(now) || (was && isBinary(was))) {
      parts.push(`Binary files ${was ? `a/${p}` : "/dev/null"} and b/${p} differ\n`);
      continue;
    }
    const d = diffFile(p, was === undefined ? null : was.toString("utf8"), now.toString("utf8"), Math.max(0, Math.min(limits.perFile, left)));
    left -= d.work;
    if (!d.minimal) notMinimal.push(p);
    // git's header for a new empty file would claim the plain entries after it: those go last.
    (was === undefined && now.length === 0 ? emptyNew : parts).push(d.text);
    await breathe();
  }
  return { text: parts.join("") + emptyNew.join(""), notMinimal };
}

function isBinary(b: Buffer): boolean {
  return b.subarray(0, 8000).includes(0);
}
