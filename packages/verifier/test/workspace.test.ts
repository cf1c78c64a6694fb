// issue 14: workspace archives (what is refused, naming the entry), attempts over the original, the patch.
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { constants, deflateRawSync, gzipSync } from "node:zlib";
import * as tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { applyAttempt, DIFF_WORK_PER_FILE, DIFF_WORK_PER_PATCH, diffFile, isLocked, packWorkspace, readStoredWorkspace, unifiedDiff, unpackWorkspace, workspacePatch, type WorkspaceFile } from "../src/workspace";

type Entry = { name: string; type?: "file" | "directory" | "symlink" | "link" | "character-device" | "block-device" | "fifo"; content?: string; linkname?: string };

async function tarOf(entries: Entry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((r) => pack.on("end", () => r()));
  for (const e of entries) {
    const content = Buffer.from(e.content ?? "");
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: e.name, type: e.type ?? "file", size: e.type && e.type !== "file" ? 0 : content.length, linkname: e.linkname }, e.type && e.type !== "file" ? Buffer.alloc(0) : content, (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** A minimal zip writer (deflated entries; a Unix mode for symlinks). */
function zipOf(entries: { name: string; content: string; mode?: number }[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const raw = Buffer.from(e.content);
    const data = deflateRawSync(raw);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(8, 8);
    lh.writeUInt32LE(data.length, 18);
    lh.writeUInt32LE(raw.length, 22);
    lh.writeUInt16LE(name.length, 26);
    locals.push(lh, name, data);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE((3 << 8) | 20, 4);
    ch.writeUInt16LE(8, 10);
    ch.writeUInt32LE(data.length, 20);
    ch.writeUInt32LE(raw.length, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    ch.writeUInt32LE(offset, 42);
    central.push(ch, name);
    offset += lh.length + name.length + data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const text = (files: WorkspaceFile[]) => Object.fromEntries(files.map((f) => [f.path, f.content.toString()]));

describe("unpackWorkspace", () => {
  it("reads tar, tar.gz and zip into sorted regular files; in-workspace links become copies", async () => {
    const entries: Entry[] = [
      { name: "./src/", type: "directory" },
      { name: "./src/sum.ts", content: "export const x = 1;\n" },
      { name: "node_modules/@types/x/index.d.ts", content: "declare const y: 1;\n" },
      { name: "src/alias.ts", type: "symlink", linkname: "sum.ts" },
      { name: "copy.ts", type: "link", linkname: "src/sum.ts" },
    ];
    const t = await unpackWorkspace(await tarOf(entries));
    expect(t).toMatchObject({ ok: true, format: "tar" });
    if (!t.ok) return;
    expect(text(t.files)).toEqual({
      "copy.ts": "export const x = 1;\n",
      "node_modules/@types/x/index.d.ts": "declare const y: 1;\n",
      "src/alias.ts": "export const x = 1;\n",
      "src/sum.ts": "export const x = 1;\n",
    });
    const gz = await unpackWorkspace(gzipSync(await tarOf(entries)));
    expect(gz.ok && gz.format).toBe("tar.gz");
    const z = await unpackWorkspace(zipOf([{ name: "src/", content: "", mode: 0o040755 }, { name: "src/a.js", content: "1;\n" }]));
    expect(z.ok && text(z.files)).toEqual({ "src/a.js": "1;\n" });
  });

  it.each([
    [[{ name: "../evil.ts", content: "x" }], "../evil.ts", /leaves the workspace/],
    [[{ name: "a/../../evil.ts", content: "x" }], "a/../../evil.ts", /leaves the workspace/],
    [[{ name: "/etc/passwd", content: "x" }], "/etc/passwd", /absolute/],
    [[{ name: "link", type: "symlink", linkname: "/etc/passwd" }], "link", /outside the workspace/],
    [[{ name: "src/link", type: "symlink", linkname: "../../secret" }], "src/link", /outside the workspace/],
    [[{ name: "hard", type: "link", linkname: "../x" }], "hard", /outside the workspace/],
    [[{ name: "dangling", type: "symlink", linkname: "nothing.ts" }], "dangling", /not a file in the workspace/],
    [[{ name: "tty", type: "character-device" }], "tty", /character-device/],
    [[{ name: "pipe", type: "fifo" }], "pipe", /fifo/],
    [[{ name: "out/result.json", content: "{}" }], "out/result.json", /keeps for itself/],
    [[{ name: "a.ts", content: "1" }, { name: "a.ts", content: "2" }], "a.ts", /twice/],
    [[{ name: "a", content: "1" }, { name: "a/b", content: "2" }], "a/b", /is a file/],
  ] as [Entry[], string, RegExp][])("refuses %j naming the entry", async (entries, entry, why) => {
    const res = await unpackWorkspace(await tarOf(entries));
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.entry).toBe(entry);
    expect(res.message).toMatch(why);
  });

  it("refuses zip entries with .. or links out, and archives over the limits", async () => {
    const up = await unpackWorkspace(zipOf([{ name: "../up.js", content: "1" }]));
    expect(up).toMatchObject({ ok: false, entry: "../up.js" });
    const link = await unpackWorkspace(zipOf([{ name: "l", content: "/etc/shadow", mode: 0o120777 }]));
    expect(link).toMatchObject({ ok: false, entry: "l", message: expect.stringMatching(/outside/) });
    const big = await unpackWorkspace(await tarOf([{ name: "a", content: "x".repeat(100) }]), { maxBytes: 99, maxEntries: 10 });
    expect(big).toMatchObject({ ok: false, entry: "a", message: expect.stringMatching(/exceed 99 bytes/) });
    const many = await unpackWorkspace(await tarOf([{ name: "a" }, { name: "b" }, { name: "c" }]), { maxBytes: 99, maxEntries: 2 });
    expect(many).toMatchObject({ ok: false, message: expect.stringMatching(/more than 2 entries/) });
    const bomb = await unpackWorkspace(gzipSync(Buffer.alloc(10_000_000)), { maxBytes: 1000, maxEntries: 10 });
    expect(bomb.ok).toBe(false);
    expect((await unpackWorkspace(Buffer.from("not an archive at all, just text that is long enough"))).ok).toBe(false);
  });

  it("stores as a normalized tar and reads back the same files", async () => {
    const files = [{ path: "a/b.ts", content: Buffer.from("b") }, { path: "c.json", content: Buffer.from("{}") }];
    expect(await readStoredWorkspace(await packWorkspace(files))).toEqual(files);
  });
});

describe("attempts and the patch", () => {
  const original: WorkspaceFile[] = [
    { path: "src/sum.ts", content: Buffer.from("export function sum(a: number, b: number): number {\n  return a - b;\n}\n") },
    { path: "test/sum.test.ts", content: Buffer.from("assert(sum(1, 2) === 3);\n") },
  ];

  it("applies to the original, reports locked edits, and restores locked files when asked", () => {
    const attempt = [
      { path: "src/sum.ts", content: Buffer.from("export function sum(a: number, b: number): number {\n  return a + b;\n}\n") },
      { path: "test/sum.test.ts", content: Buffer.from("// nothing to test\n") },
      { path: "src/new.ts", content: Buffer.from("export {};\n") },
    ];
    const applied = applyAttempt(original, attempt, ["test/"], true);
    expect(applied.changed).toEqual(["src/new.ts", "src/sum.ts", "test/sum.test.ts"]);
    expect(applied.lockedChanged).toEqual(["test/sum.test.ts"]);
    expect(text(applied.files)["test/sum.test.ts"]).toBe("assert(sum(1, 2) === 3);\n");
    expect(text(applyAttempt(original, attempt, ["test/"], false).files)["test/sum.test.ts"]).toBe("// nothing to test\n");
    // An unchanged copy of a locked file is no edit.
    expect(applyAttempt(original, [original[1]!], ["test/sum.test.ts"], true).lockedChanged).toEqual([]);
    expect(isLocked("tests", ["tests/"])).toBe(true);
    expect(isLocked("tests2/a", ["tests"])).toBe(false);
  });

  it("writes a unified diff that git apply accepts", async () => {
    const attempt = [
      { path: "src/sum.ts", content: Buffer.from("export function sum(a: number, b: number): number {\n  return a + b;\n}\n") },
      { path: "src/new.ts", content: Buffer.from("export const n = 1;") },
    ];
    const applied = applyAttempt(original, attempt, [], false);
    const patch = (await workspacePatch(original, applied)).text;
    expect(patch).toContain("--- a/src/sum.ts\n+++ b/src/sum.ts\n@@ -1,3 +1,3 @@\n export function sum(a: number, b: number): number {\n-  return a - b;\n+  return a + b;\n }\n");
    expect(patch).toContain("--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1,1 @@\n+export const n = 1;\n\\ No newline at end of file\n");
    const dir = mkdtempSync(join(tmpdir(), "ws-patch-"));
    try {
      for (const f of original) {
        mkdirSync(dirname(join(dir, f.path)), { recursive: true });
        writeFileSync(join(dir, f.path), f.content);
      }
      writeFileSync(join(dir, "p.diff"), patch);
      execFileSync("git", ["apply", "p.diff"], { cwd: dir });
      expect(readFileSync(join(dir, "src/sum.ts"), "utf8")).toBe(attempt[0]!.content.toString());
      expect(readFileSync(join(dir, "src/new.ts"), "utf8")).toBe("export const n = 1;");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("diffs longer files into separate hunks with context", () => {
    const before = Array.from({ length: 30 }, (_, i) => `line ${i}`).join("\n") + "\n";
    const after = before.replace("line 2\n", "line two\n").replace("line 25\n", "");
    const d = unifiedDiff("f.txt", before, after);
    expect(d.match(/^@@/gm)).toHaveLength(2);
    expect(d).toContain("@@ -1,6 +1,6 @@\n line 0\n line 1\n-line 2\n+line two\n line 3\n");
    expect(d).toContain("-line 25\n");
    expect(unifiedDiff("f", "same", "same")).toBe("");
  });
});

describe("attempt files that cannot be placed", () => {
  it("a file where the workspace has a directory (or under a file) is left out, the original kept", () => {
    const original = [{ path: "src/a.ts", content: Buffer.from("a") }];
    const applied = applyAttempt(original, [{ path: "src", content: Buffer.from("x") }, { path: "src/a.ts/b.ts", content: Buffer.from("y") }, { path: "src/c.ts", content: Buffer.from("c") }], [], false);
    expect(applied.conflicts).toEqual(["src", "src/a.ts/b.ts"]);
    expect(applied.files.map((f) => f.path)).toEqual(["src/a.ts", "src/c.ts"]);
  });
});

// ------------------------------------------------------------------------------------------ issue 18
// What the tests above leave open (found by mutation testing): the zip reader's every refusal and
// layout detail, the limits at their edges, link resolution, and the diff checked as a whole.

type ZipEntry = { name: string; content?: string | Buffer; mode?: number; method?: number; flags?: number; madeBy?: number; size?: number; localExtra?: number };
/** A zip writer with the knobs the reader looks at (method, flags, the maker's OS, the declared size, a local extra field). */
function zipWith(entries: ZipEntry[], opts: { comment?: number } = {}): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const name = Buffer.from(e.name);
    const raw = Buffer.isBuffer(e.content) ? e.content : Buffer.from(e.content ?? "");
    const method = e.method ?? 8;
    const data = method === 8 ? deflateRawSync(raw) : raw;
    const extra = Buffer.alloc(e.localExtra ?? 0, 0x41);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(e.flags ?? 0, 6);
    lh.writeUInt16LE(method, 8);
    lh.writeUInt32LE(data.length, 18);
    lh.writeUInt32LE(raw.length, 22);
    lh.writeUInt16LE(name.length, 26);
    lh.writeUInt16LE(extra.length, 28);
    locals.push(lh, name, extra, data);
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(((e.madeBy ?? 3) << 8) | 20, 4);
    ch.writeUInt16LE(e.flags ?? 0, 8);
    ch.writeUInt16LE(method, 10);
    ch.writeUInt32LE(data.length, 20);
    ch.writeUInt32LE(e.size ?? raw.length, 24);
    ch.writeUInt16LE(name.length, 28);
    ch.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    ch.writeUInt32LE(offset, 42);
    // A central extra field and comment the reader must step over.
    const cextra = Buffer.from([0xca, 0xfe, 0, 0]);
    ch.writeUInt16LE(cextra.length, 30);
    const ccomment = Buffer.from("c");
    ch.writeUInt16LE(ccomment.length, 32);
    central.push(ch, name, cextra, ccomment);
    offset += lh.length + name.length + extra.length + data.length;
  }
  const cd = Buffer.concat(central);
  const comment = Buffer.alloc(opts.comment ?? 0, 0x20);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  end.writeUInt16LE(comment.length, 20);
  return Buffer.concat([...locals, cd, end, comment]);
}

const unpacked = async (archive: Buffer, limits?: { maxBytes: number; maxEntries: number }) => {
  const res = await unpackWorkspace(archive, limits);
  if (!res.ok) throw new Error(`refused: ${res.entry}: ${res.message}`);
  return res;
};

describe("zip archives", () => {
  it("reads stored and deflated entries, empty files, directories by mode or slash, past extra fields and comments", async () => {
    const z = await unpacked(
      zipWith([
        { name: "stored.txt", content: "stored\n", method: 0 },
        { name: "deflated.txt", content: "deflated ".repeat(50) },
        { name: "empty.txt", content: "" },
        { name: "empty-stored.txt", content: "", method: 0 },
        { name: "dir", mode: 0o040755, method: 0 },
        { name: "slash/", mode: 0o100644, method: 0 },
        { name: "local-extra.txt", content: "x", localExtra: 9 },
        { name: "data-descriptor.txt", content: "dd", flags: 8 },
        { name: "plain-mode.txt", content: "p", mode: 0 },
      ]),
    );
    expect(z.format).toBe("zip");
    expect(text(z.files)).toEqual({
      "data-descriptor.txt": "dd",
      "deflated.txt": "deflated ".repeat(50),
      "empty-stored.txt": "",
      "empty.txt": "",
      "local-extra.txt": "x",
      "plain-mode.txt": "p",
      "stored.txt": "stored\n",
    });
    // Directories: a file under each is placed.
    expect(text((await unpacked(zipWith([{ name: "dir", mode: 0o040755, method: 0 }, { name: "dir/a", content: "a" }]))).files)).toEqual({ "dir/a": "a" });
  });

  it("finds the end record behind the longest archive comment", async () => {
    const z = await unpacked(zipWith([{ name: "a.txt", content: "a" }, { name: "b.txt", content: "b" }], { comment: 65_535 }));
    expect(text(z.files)).toEqual({ "a.txt": "a", "b.txt": "b" });
    expect(text((await unpacked(zipWith([{ name: "a.txt", content: "a" }], { comment: 1 }))).files)).toEqual({ "a.txt": "a" });
  });

  it("reads the file type only from Unix zips", async () => {
    // An MS-DOS zip's external attributes are DOS flags, whatever their high bits say.
    const dos = await unpacked(zipWith([{ name: "l", content: "target.txt", mode: 0o120777, madeBy: 0 }]));
    expect(text(dos.files)).toEqual({ l: "target.txt" });
    const unix = await unpacked(zipWith([{ name: "target.txt", content: "t" }, { name: "l", content: "target.txt", mode: 0o120777 }]));
    expect(text(unix.files)).toEqual({ l: "t", "target.txt": "t" });
  });

  it.each([
    [zipWith([{ name: "a", content: "x", flags: 1 }]), "a", "is encrypted"],
    [zipWith([{ name: "a", content: "x", flags: 9 }]), "a", "is encrypted"],
    [zipWith([{ name: "a", content: "x", method: 12 }]), "a", "uses compression method 12 (only stored and deflated entries are read)"],
    [zipWith([{ name: "a", content: "xyz", method: 0, size: 5 }]), "a", "its size does not match the archive's directory"],
    [zipWith([{ name: "a", content: "xyz", size: 5 }]), "a", "its size does not match the archive's directory"],
    [zipWith([{ name: "fifo", content: "", mode: 0o010644, method: 0 }]), "fifo", "is a special file: only files, directories and links inside the workspace are accepted"],
    [zipWith([{ name: "dev", content: "", mode: 0o020644, method: 0 }]), "dev", "is a special file: only files, directories and links inside the workspace are accepted"],
  ])("refuses a zip entry it cannot read (%#)", async (archive, entry, message) => {
    expect(await unpackWorkspace(archive)).toEqual({ ok: false, entry, message });
  });

  it("refuses a broken zip as unreadable", async () => {
    // The reasons are yauzl's (issue 28: it reads zips now); a broken entry's reason names the entry.
    const good = zipWith([{ name: "a", content: "hello" }]);
    const noEnd = good.subarray(0, good.length - 22);
    const noEndRecord = "not a readable tar, tar.gz or zip archive: End of central directory record signature not found. Either not a zip file, or file is truncated.";
    expect(await unpackWorkspace(noEnd)).toEqual({ ok: false, entry: "(archive)", message: noEndRecord });
    const brokenCentral = Buffer.from(good);
    brokenCentral.writeUInt32LE(0, good.readUInt32LE(good.length - 6));
    expect(await unpackWorkspace(brokenCentral)).toEqual({ ok: false, entry: "(archive)", message: "not a readable tar, tar.gz or zip archive: invalid central directory file header signature: 0x0" });
    const brokenLocal = zipWith([{ name: "a", content: "hello" }, { name: "b", content: "world" }]);
    const cdStart = brokenLocal.readUInt32LE(brokenLocal.length - 6);
    // The second central entry (46 bytes, its name, 4 of extra, 1 of comment) points at b's local header.
    brokenLocal.writeUInt32LE(0, brokenLocal.readUInt32LE(cdStart + 46 + 1 + 4 + 1 + 42));
    expect(await unpackWorkspace(brokenLocal)).toEqual({ ok: false, entry: "(archive)", message: "not a readable tar, tar.gz or zip archive: b: invalid local file header signature: 0x0" });
    // Too short to be anything.
    expect(await unpackWorkspace(Buffer.from([0x50, 0x4b, 3, 4]))).toEqual({ ok: false, entry: "(archive)", message: noEndRecord });
    const gz = await unpackWorkspace(Buffer.from([0x1f, 0x8b]));
    expect(gz).toMatchObject({ ok: false, entry: "(archive)", message: expect.stringMatching(/^not a readable tar, tar.gz or zip archive: .*(unexpected end|incorrect header)/i) });
  });

  it("inflates no more than an entry's declared size", async () => {
    const mismatch = { ok: false, entry: "a", message: "its size does not match the archive's directory" };
    expect(await unpackWorkspace(zipWith([{ name: "a", content: "xyz".repeat(10), size: 2 }]))).toEqual(mismatch);
    expect(await unpackWorkspace(zipWith([{ name: "a", content: "xyz", size: 0 }]))).toEqual(mismatch);
  });

  it("stops inflating a bomb that lies about its size at the size it declares (issue 28)", async () => {
    // 4 MiB of zeros deflated without a final block, then a byte no inflater accepts (a reserved block
    // type). The directory declares 1,000 bytes: a reader that inflated the whole entry before comparing
    // sizes would meet the bad byte and call the archive unreadable; one that stops at the declared size
    // never gets that far and refuses the entry for its size.
    const zeros = deflateRawSync(Buffer.alloc(4 << 20), { finishFlush: constants.Z_SYNC_FLUSH });
    const bomb = zipWith([{ name: "bomb", content: Buffer.concat([zeros, Buffer.from([0xff, 0xff])]), method: 0, size: 1000 }]);
    // Stored above so the writer keeps the bytes as given; the entry is then marked deflated.
    const cd = bomb.readUInt32LE(bomb.length - 6);
    bomb.writeUInt16LE(8, 8);
    bomb.writeUInt16LE(8, cd + 10);
    expect(await unpackWorkspace(bomb)).toEqual({ ok: false, entry: "bomb", message: "its size does not match the archive's directory" });
    // The control: declared at its full size, the same entry is inflated to the bad byte.
    bomb.writeUInt32LE(4 << 20, cd + 24);
    expect(await unpackWorkspace(bomb, { maxBytes: 8 << 20, maxEntries: 1 })).toMatchObject({ ok: false, entry: "(archive)", message: expect.stringMatching(/^not a readable tar, tar.gz or zip archive: bomb: invalid block type/) });
  });

  it("reads a zip64 archive, and holds it to the entry limit by its zip64 count (issue 28)", async () => {
    // One stored entry whose sizes live only in its zip64 extra field, found through the zip64 end records.
    const zip64 = (content: string, count: number) => {
      const name = Buffer.from("big/a.txt");
      const data = Buffer.from(content);
      const sizes = Buffer.alloc(20);
      sizes.writeUInt16LE(0x0001, 0);
      sizes.writeUInt16LE(16, 2);
      sizes.writeBigUInt64LE(BigInt(data.length), 4);
      sizes.writeBigUInt64LE(BigInt(data.length), 12);
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(45, 4);
      local.writeUInt32LE(0xffffffff, 18);
      local.writeUInt32LE(0xffffffff, 22);
      local.writeUInt16LE(name.length, 26);
      local.writeUInt16LE(sizes.length, 28);
      const central = Buffer.alloc(46);
      central.writeUInt32LE(0x02014b50, 0);
      central.writeUInt16LE((3 << 8) | 45, 4);
      central.writeUInt16LE(45, 6);
      central.writeUInt32LE(0xffffffff, 20);
      central.writeUInt32LE(0xffffffff, 24);
      central.writeUInt16LE(name.length, 28);
      central.writeUInt16LE(sizes.length, 30);
      central.writeUInt32LE((0o100644 << 16) >>> 0, 38);
      const cdStart = local.length + name.length + sizes.length + data.length;
      const cdSize = central.length + name.length + sizes.length;
      const record = Buffer.alloc(56);
      record.writeUInt32LE(0x06064b50, 0);
      record.writeBigUInt64LE(44n, 4);
      record.writeUInt16LE(45, 12);
      record.writeUInt16LE(45, 14);
      record.writeBigUInt64LE(BigInt(count), 24);
      record.writeBigUInt64LE(BigInt(count), 32);
      record.writeBigUInt64LE(BigInt(cdSize), 40);
      record.writeBigUInt64LE(BigInt(cdStart), 48);
      const locator = Buffer.alloc(20);
      locator.writeUInt32LE(0x07064b50, 0);
      locator.writeBigUInt64LE(BigInt(cdStart + cdSize), 8);
      locator.writeUInt32LE(1, 16);
      const end = Buffer.alloc(22);
      end.writeUInt32LE(0x06054b50, 0);
      end.writeUInt16LE(0xffff, 8);
      end.writeUInt16LE(0xffff, 10);
      end.writeUInt32LE(0xffffffff, 12);
      end.writeUInt32LE(0xffffffff, 16);
      return Buffer.concat([local, name, sizes, data, central, name, sizes, record, locator, end]);
    };
    expect(text((await unpacked(zip64("sixty-four\n", 1))).files)).toEqual({ "big/a.txt": "sixty-four\n" });
    // The classic record's 0xffff says nothing; the zip64 count is the one held to the limit.
    expect(await unpackWorkspace(zip64("x", 2 ** 40))).toEqual({ ok: false, entry: "(archive)", message: "more than 5000 entries" });
  });

  it("counts a zip's entries before reading any", async () => {
    const locked = zipWith([{ name: "a", content: "x", flags: 1 }, { name: "b", content: "y" }, { name: "c", content: "z" }]);
    expect(await unpackWorkspace(locked, { maxBytes: 100, maxEntries: 2 })).toEqual({ ok: false, entry: "(archive)", message: "more than 2 entries" });
  });

  it("holds the zip to the limits, at their edges", async () => {
    const three = zipWith([{ name: "a", content: "x".repeat(40) }, { name: "b", content: "y".repeat(30) }, { name: "c", content: "z".repeat(30) }]);
    expect((await unpackWorkspace(three, { maxBytes: 100, maxEntries: 3 })).ok).toBe(true);
    expect(await unpackWorkspace(three, { maxBytes: 100, maxEntries: 2 })).toEqual({ ok: false, entry: "(archive)", message: "more than 2 entries" });
    expect(await unpackWorkspace(three, { maxBytes: 99, maxEntries: 3 })).toEqual({ ok: false, entry: "c", message: "the files exceed 99 bytes unpacked" });
    // Declared sizes count before anything is inflated (a zip bomb's directory gives it away).
    const bomb = zipWith([{ name: "a", content: "x", size: 1000 }]);
    expect(await unpackWorkspace(bomb, { maxBytes: 999, maxEntries: 3 })).toEqual({ ok: false, entry: "a", message: "the files exceed 999 bytes unpacked" });
  });
});

describe("tar archives at the edges", () => {
  it("accepts exactly the limits and refuses one more", async () => {
    const two = await tarOf([{ name: "a", content: "x".repeat(60) }, { name: "b", content: "y".repeat(40) }]);
    expect((await unpackWorkspace(two, { maxBytes: 100, maxEntries: 2 })).ok).toBe(true);
    expect(await unpackWorkspace(two, { maxBytes: 99, maxEntries: 2 })).toEqual({ ok: false, entry: "b", message: "the files exceed 99 bytes unpacked" });
    expect(await unpackWorkspace(two, { maxBytes: 100, maxEntries: 1 })).toEqual({ ok: false, entry: "b", message: "more than 1 entries" });
    // Directories are entries too.
    expect((await unpackWorkspace(await tarOf([{ name: "d/", type: "directory" }, { name: "d/a", content: "1" }]), { maxBytes: 100, maxEntries: 1 })).ok).toBe(false);
  });

  it("refuses bytes while reading, before it counts the next entry", async () => {
    const three = await tarOf([{ name: "a", content: "x".repeat(60) }, { name: "b", content: "y".repeat(60) }, { name: "c", content: "z" }]);
    expect(await unpackWorkspace(three, { maxBytes: 100, maxEntries: 2 })).toEqual({ ok: false, entry: "b", message: "the files exceed 100 bytes unpacked" });
  });

  it("refuses a tar.gz that inflates past its bound, whatever the tar inside holds", async () => {
    // A small tar with 100 KiB of zero blocks after it: the tar is fine, the inflated stream is not.
    const padded = gzipSync(Buffer.concat([await tarOf([{ name: "a", content: "1" }]), Buffer.alloc(102_400)]));
    expect(await unpackWorkspace(padded, { maxBytes: 1000, maxEntries: 10 })).toEqual({ ok: false, entry: "(archive)", message: "not a readable tar, tar.gz or zip archive: Cannot create a Buffer larger than 12264 bytes" });
    expect((await unpackWorkspace(padded)).ok).toBe(true);
  });

  it("takes a tar whose second byte is gzip's for a tar, and a two-byte gzip header for gzip", async () => {
    // A hand-written header: tar-stream would write this name through a pax header.
    const buf = await tarOf([{ name: "ab", content: "" }]);
    buf[1] = 0x8b;
    buf.fill(0x20, 148, 156);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += buf[i]!;
    buf.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
    expect(await unpackWorkspace(buf)).toMatchObject({ ok: false, entry: "a\ufffd", message: expect.stringMatching(/^the path must be/) });
    expect(await unpackWorkspace(Buffer.from([0x1f, 0x8b]))).toEqual({ ok: false, entry: "(archive)", message: "not a readable tar, tar.gz or zip archive: unexpected end of file" });
  });

  it("takes a tar whose name starts like gzip's magic for a tar", async () => {
    // Byte 0 is 0x1f but byte 1 is not 0x8b; "\u008b" is C2 8B in UTF-8, so byte 1 is 0x8b but byte 0 is not 0x1f.
    for (const name of ["\u001fx", "\u008b"]) {
      expect(await unpackWorkspace(await tarOf([{ name, content: "1" }])), JSON.stringify(name)).toMatchObject({ ok: false, entry: name, message: expect.stringMatching(/^the path must be/) });
    }
  });

  it("names an entry of unknown type", async () => {
    const buf = await tarOf([{ name: "odd", content: "" }]);
    buf[156] = "Z".charCodeAt(0);
    buf.fill(0x20, 148, 156);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += buf[i]!;
    buf.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "latin1");
    expect(await unpackWorkspace(buf)).toEqual({ ok: false, entry: "odd", message: "is a unknown: only files, directories and links inside the workspace are accepted" });
  });

  it("returns the files sorted by path whatever the archive's order", async () => {
    const res = await unpacked(await tarOf([{ name: "z", content: "1" }, { name: "b/c", content: "2" }, { name: "a", content: "3" }, { name: "b/a", content: "4" }, { name: "B", content: "5" }]));
    expect(res.files.map((f) => f.path)).toEqual(["B", "a", "b/a", "b/c", "z"]);
  });

  it("inflates a tar.gz up to the files' limit plus its headers", async () => {
    // One file of exactly maxBytes: 512 bytes of header, the content, 1,024 bytes of end; the bound allows
    // 1,024 bytes per entry and 1,024 more.
    const archive = gzipSync(await tarOf([{ name: "big", content: "b".repeat(10_240) }]));
    expect((await unpacked(archive, { maxBytes: 10_240, maxEntries: 1 })).files[0]!.content.length).toBe(10_240);
    const over = await unpackWorkspace(gzipSync(await tarOf([{ name: "big", content: "b".repeat(10_241) }])), { maxBytes: 10_240, maxEntries: 1 });
    expect(over.ok).toBe(false);
  });

  it("reads contiguous files as files and refuses block devices", async () => {
    const pack = tar.pack();
    const chunks: Buffer[] = [];
    pack.on("data", (c) => chunks.push(c as Buffer));
    const done = new Promise<void>((r) => pack.on("end", () => r()));
    pack.entry({ name: "c", type: "contiguous-file", size: 1 }, Buffer.from("c"));
    pack.finalize();
    await done;
    expect(text((await unpacked(Buffer.concat(chunks))).files)).toEqual({ c: "c" });
    expect(await unpackWorkspace(await tarOf([{ name: "blk", type: "block-device" }]))).toEqual({ ok: false, entry: "blk", message: "is a block-device: only files, directories and links inside the workspace are accepted" });
  });

  it("tells the formats apart by their first bytes", async () => {
    const tarred = await tarOf([{ name: "a", content: "1" }]);
    expect((await unpacked(tarred)).format).toBe("tar");
    expect((await unpacked(gzipSync(tarred))).format).toBe("tar.gz");
    expect((await unpacked(zipWith([{ name: "a", content: "1" }]))).format).toBe("zip");
  });

  it("refuses the root as a file, backslashes, and a directory that is also a file (either order)", async () => {
    expect(await unpackWorkspace(await tarOf([{ name: "./", content: "x" }]))).toEqual({ ok: false, entry: "./", message: "names the workspace root itself" });
    expect(await unpackWorkspace(await tarOf([{ name: ".", content: "x" }]))).toEqual({ ok: false, entry: ".", message: "names the workspace root itself" });
    expect((await unpacked(await tarOf([{ name: "./", type: "directory" }, { name: ".", type: "directory" }, { name: "././a", content: "1" }]))).files).toEqual([{ path: "a", content: Buffer.from("1") }]);
    expect(await unpackWorkspace(await tarOf([{ name: "a\\b", content: "x" }]))).toEqual({ ok: false, entry: "a\\b", message: "contains a backslash" });
    expect(await unpackWorkspace(await tarOf([{ name: "a", content: "x" }, { name: "a/", type: "directory" }]))).toEqual({ ok: false, entry: "a/", message: "is a directory and a file" });
    expect(await unpackWorkspace(await tarOf([{ name: "a/", type: "directory" }, { name: "a", content: "x" }]))).toEqual({ ok: false, entry: "a", message: "is a directory and a file" });
    expect(await unpackWorkspace(await tarOf([{ name: "./dir/", type: "directory" }, { name: "dir", content: "x" }]))).toEqual({ ok: false, entry: "dir", message: "is a directory and a file" });
    expect(await unpackWorkspace(await tarOf([{ name: "a", content: "1" }, { name: "a/b/c", content: "2" }]))).toEqual({ ok: false, entry: "a/b/c", message: "needs a to be a directory, but it is a file" });
    expect(await unpackWorkspace(await tarOf([{ name: "x/a", content: "1" }, { name: "x/a/b/c", content: "2" }]))).toEqual({ ok: false, entry: "x/a/b/c", message: "needs x/a to be a directory, but it is a file" });
    expect(await unpackWorkspace(await tarOf([{ name: "a.ts", content: "1" }, { name: "./a.ts", content: "2" }]))).toEqual({ ok: false, entry: "./a.ts", message: "is given twice" });
    expect(await unpackWorkspace(await tarOf([{ name: "in", content: "1" }, { name: "inputs/x", content: "2" }]))).toMatchObject({ ok: false, entry: "inputs/x", message: "the path is under inputs/, which the sandbox keeps for itself" });
  });

  it("resolves links relative to their directory, through other links, within bounds", async () => {
    const files = async (entries: Entry[]) => text((await unpacked(await tarOf(entries))).files);
    expect(await files([{ name: "src/a.ts", content: "A" }, { name: "src/sub/l1", type: "symlink", linkname: "../a.ts" }, { name: "l2", type: "symlink", linkname: "./src//a.ts" }])).toEqual({ "src/a.ts": "A", "src/sub/l1": "A", l2: "A" });
    // A link to a link (listed first) is followed.
    expect(await files([{ name: "l1", type: "symlink", linkname: "l2" }, { name: "l2", type: "symlink", linkname: "f" }, { name: "f", content: "F" }])).toEqual({ f: "F", l1: "F", l2: "F" });
    // Eight hops are followed, nine are not.
    const chain = (n: number): Entry[] => [...Array.from({ length: n + 1 }, (_, i) => ({ name: `l${i}`, type: "symlink" as const, linkname: i === n ? "f" : `l${i + 1}` })), { name: "f", content: "F" }];
    expect((await files(chain(8))).l0).toBe("F");
    expect(await unpackWorkspace(await tarOf(chain(9)))).toEqual({ ok: false, entry: "l0", message: 'is a link to "l1", which is not a file in the workspace' });
    // A loop ends.
    expect(await unpackWorkspace(await tarOf([{ name: "a", type: "symlink", linkname: "b" }, { name: "b", type: "symlink", linkname: "a" }]))).toMatchObject({ ok: false, entry: "a" });
    // The root, an empty target, a target above the root, and one through the root and back.
    // From a directory too (an empty target is no link, not the directory itself).
    for (const linkname of ["", "..", "../..", "/x", "src/../.."]) {
      expect(await unpackWorkspace(await tarOf([{ name: "x", content: "1" }, { name: "d/l", type: "symlink", linkname }])), linkname).toMatchObject({ ok: false, entry: "d/l", message: `is a link to ${JSON.stringify(linkname)}, outside the workspace` });
    }
    for (const linkname of [".", "", "src/..", "..", "../x"]) {
      expect(await unpackWorkspace(await tarOf([{ name: "x", content: "1" }, { name: "l", type: "symlink", linkname }])), linkname).toMatchObject({ ok: false, entry: "l", message: `is a link to ${JSON.stringify(linkname)}, outside the workspace` });
    }
    expect(await files([{ name: "x", content: "1" }, { name: "d/l", type: "symlink", linkname: "../d/../x" }])).toEqual({ x: "1", "d/l": "1" });
    // Hard links name their target from the root; ./ is allowed, an absolute or escaping one is not.
    expect(await files([{ name: "d/f", content: "F" }, { name: "d/h", type: "link", linkname: "./d/f" }])).toEqual({ "d/f": "F", "d/h": "F" });
    expect(await unpackWorkspace(await tarOf([{ name: "h", type: "link", linkname: "/etc/passwd" }]))).toEqual({ ok: false, entry: "h", message: 'is a link to "/etc/passwd", outside the workspace' });
    expect(await unpackWorkspace(await tarOf([{ name: "h", type: "link", linkname: "out/x" }]))).toMatchObject({ ok: false, entry: "h", message: expect.stringMatching(/outside the workspace/) });
    // Links count towards the size limit as the copies they become.
    const linked = await tarOf([{ name: "f", content: "x".repeat(50) }, { name: "l", type: "symlink", linkname: "f" }]);
    expect((await unpackWorkspace(linked, { maxBytes: 100, maxEntries: 5 })).ok).toBe(true);
    expect(await unpackWorkspace(linked, { maxBytes: 99, maxEntries: 5 })).toEqual({ ok: false, entry: "l", message: "the files exceed 99 bytes unpacked" });
  });
});

describe("the stored workspace", () => {
  it("is a tar of regular files with fixed metadata, the same bytes for the same files", async () => {
    const files = [{ path: "b.txt", content: Buffer.from("b") }, { path: "a/x.txt", content: Buffer.from("") }];
    const stored = await packWorkspace(files);
    expect((await packWorkspace(files)).equals(stored)).toBe(true);
    const headers: tar.Header[] = [];
    const extract = tar.extract();
    extract.end(stored);
    for await (const entry of extract) {
      headers.push(entry.header);
      entry.resume();
    }
    expect(headers.map((h) => [h.name, h.type, h.mode, h.mtime?.getTime(), h.size])).toEqual([
      ["b.txt", "file", 0o644, 0, 1],
      ["a/x.txt", "file", 0o644, 0, 0],
    ]);
    expect(await packWorkspace([])).toEqual(Buffer.alloc(1024));
  });

  it("refuses to read back something that is not a stored workspace", async () => {
    await expect(readStoredWorkspace(await tarOf([{ name: "../x", content: "1" }]))).rejects.toThrow("stored workspace is unreadable: ../x: the path leaves the workspace (..)");
  });
});

describe("attempts: placing and locking", () => {
  const o = (path: string, content: string): WorkspaceFile => ({ path, content: Buffer.from(content) });

  it("a path is locked when listed, or under a listed directory with or without its slash", () => {
    expect(isLocked("tests", ["tests"])).toBe(true);
    expect(isLocked("tests/a.py", ["tests"])).toBe(true);
    expect(isLocked("tests/a.py", ["tests/"])).toBe(true);
    expect(isLocked("tests/deep/a.py", ["other", "tests/"])).toBe(true);
    expect(isLocked("tests.py", ["tests"])).toBe(false);
    expect(isLocked("tests.py", ["tests/"])).toBe(false);
    expect(isLocked("a/tests/x", ["tests"])).toBe(false);
    expect(isLocked("test", ["tests"])).toBe(false);
    expect(isLocked("x", [])).toBe(false);
  });

  it("a later attempt file under an earlier one's path, or at its directory, is a conflict", () => {
    const a = applyAttempt([], [o("d/a", "1"), o("d", "2"), o("f", "3"), o("f/x", "4")], [], false);
    expect(a.conflicts).toEqual(["d", "f/x"]);
    expect(text(a.files)).toEqual({ "d/a": "1", f: "3" });
    expect(a.changed).toEqual(["d/a", "f"]);
    // Deeper: a file under a file two levels up, and at a nested directory of the original.
    const b = applyAttempt([o("x/y/z", "1"), o("top", "t")], [o("x/y", "2"), o("top/a/b", "3"), o("x/y/w", "4")], [], false);
    expect(b.conflicts).toEqual(["x/y", "top/a/b"]);
    // Every ancestor directory of an original file is a directory, not only its parent.
    expect(applyAttempt([o("x/y/z", "1")], [o("x", "2")], [], false).conflicts).toEqual(["x"]);
    expect(b.changed).toEqual(["x/y/w"]);
  });

  it("changed lists what differs from the original, sorted; restoring keeps locked originals and absent locked files absent", () => {
    const original = [o("z.ts", "z"), o("t/a.test.ts", "T")];
    const attempt = [o("z.ts", "z2"), o("b.ts", "b"), o("t/a.test.ts", "T"), o("t/new.test.ts", "N"), o("a.ts", "a")];
    const kept = applyAttempt(original, attempt, ["t/"], true);
    expect(kept.changed).toEqual(["a.ts", "b.ts", "t/new.test.ts", "z.ts"]);
    expect(kept.lockedChanged).toEqual(["t/new.test.ts"]);
    expect(text(kept.files)).toEqual({ "a.ts": "a", "b.ts": "b", "t/a.test.ts": "T", "z.ts": "z2" });
    expect(kept.files.map((f) => f.path)).toEqual(["a.ts", "b.ts", "t/a.test.ts", "z.ts"]);
    const applied = applyAttempt(original, attempt, ["t/"], false);
    expect(applied.lockedChanged).toEqual(["t/new.test.ts"]);
    expect(text(applied.files)["t/new.test.ts"]).toBe("N");
    // Each attempt is judged against the original: the same file twice, once as the original has it.
    const twice = applyAttempt(original, [o("z.ts", "other"), o("z.ts", "z")], [], false);
    expect(twice.changed).toEqual(["z.ts"]);
    expect(text(twice.files)["z.ts"]).toBe("other");
  });
});

describe("the unified diff, checked as a whole", () => {
  type Line = { text: string; eol: boolean };
  const split = (s: string): Line[] => {
    if (s === "") return [];
    const parts = s.split("\n");
    const eolAtEnd = parts.at(-1) === "";
    if (eolAtEnd) parts.pop();
    return parts.map((text, i) => ({ text, eol: eolAtEnd || i < parts.length - 1 }));
  };
  const join = (ls: Line[]) => ls.map((l) => `${l.text}${l.eol ? "\n" : ""}`).join("");
  const same = (x: Line, y: Line) => x.text === y.text && x.eol === y.eol;
  function lcs(a: Line[], b: Line[]): number {
    const t = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
    for (let i = a.length - 1; i >= 0; i--) for (let j = b.length - 1; j >= 0; j--) t[i]![j] = same(a[i]!, b[j]!) ? t[i + 1]![j + 1]! + 1 : Math.max(t[i + 1]![j]!, t[i]![j + 1]!);
    return t[0]![0]!;
  }

  /** Applies a one-file patch strictly (every context and removed line must match where the header says), checking the hunks' shape. */
  function apply(before: string | null, patch: string): { after: string; changes: number; hunks: number } {
    const rows = patch.split("\n");
    expect(rows[0]).toBe(before === null ? "--- /dev/null" : "--- a/f");
    expect(rows[1]).toBe("+++ b/f");
    expect(rows.at(-1)).toBe("");
    const src = split(before ?? "");
    const out: Line[] = [];
    let pos = 0;
    let i = 2;
    let changes = 0;
    let hunks = 0;
    while (i < rows.length - 1) {
      const m = /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@$/.exec(rows[i]!);
      expect(m, rows[i]).not.toBeNull();
      const [aS, aL, bS, bL] = m!.slice(1).map(Number) as [number, number, number, number];
      const a0 = aL === 0 ? aS : aS - 1;
      const b0 = bL === 0 ? bS : bS - 1;
      // Hunks are apart (at least one line between their contexts) and in order.
      expect(a0).toBeGreaterThanOrEqual(hunks === 0 ? 0 : pos + 1);
      out.push(...src.slice(pos, a0));
      pos = a0;
      expect(out.length).toBe(b0);
      i++;
      const ops: string[] = [];
      let [ac, bc] = [0, 0];
      while (i < rows.length - 1 && !rows[i]!.startsWith("@@")) {
        const row = rows[i]!;
        const noEol = rows[i + 1] === "\\ No newline at end of file";
        const line = { text: row.slice(1), eol: !noEol };
        const op = row[0]!;
        if (op !== " " && op !== "-" && op !== "+") throw new Error(`not a diff line: ${JSON.stringify(row)}`);
        if (op !== "+") {
          const was = src[pos];
          if (!was || !same(was, line)) throw new Error(`line ${pos} of before is ${JSON.stringify(was)}, the patch says ${JSON.stringify(line)}`);
          pos++;
          ac++;
        }
        if (op !== "-") {
          out.push(line);
          bc++;
        }
        ops.push(op);
        i += noEol ? 2 : 1;
      }
      expect([ac, bc]).toEqual([aL, bL]);
      // Three lines of context on each side (fewer only at the file's ends), at most six between changes.
      const lead = ops.findIndex((op) => op !== " ");
      const trail = [...ops].reverse().findIndex((op) => op !== " ");
      expect(lead).toBeGreaterThanOrEqual(0);
      expect(lead === 3 || a0 === 0).toBe(true);
      expect(lead).toBeLessThanOrEqual(3);
      expect(trail === 3 || pos === src.length).toBe(true);
      expect(trail).toBeLessThanOrEqual(3);
      const gaps = ops.slice(lead, ops.length - trail).join("").split(/[-+]+/);
      for (const g of gaps) expect(g.length).toBeLessThanOrEqual(6);
      changes += ops.filter((op) => op !== " ").length;
      hunks++;
    }
    out.push(...src.slice(pos));
    return { after: join(out), changes, hunks };
  }

  function random(seed: number) {
    let s = seed >>> 0;
    return () => {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  it("turns before into after with a shortest edit script, in well-formed hunks (300 random pairs)", () => {
    const rnd = random(18);
    const words = ["a", "b", "c", "", "d"];
    const textOf = (n: number, eol: boolean) => {
      const ls = Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]!);
      const t = ls.join("\n");
      return n > 0 && eol ? `${t}\n` : t;
    };
    for (let k = 0; k < 300; k++) {
      const before = textOf(Math.floor(rnd() * 30), rnd() < 0.8);
      // After: before edited in a few places, or something unrelated.
      let after: string;
      if (rnd() < 0.3) after = textOf(Math.floor(rnd() * 30), rnd() < 0.8);
      else {
        const ls = split(before).map((l) => l.text);
        for (let e = Math.floor(rnd() * 4); e > 0; e--) {
          const at = Math.floor(rnd() * (ls.length + 1));
          const r = rnd();
          if (r < 0.33) ls.splice(at, 1);
          else if (r < 0.66) ls.splice(at, 0, words[Math.floor(rnd() * words.length)]!);
          else ls[at] = "changed";
        }
        after = ls.length === 0 ? "" : `${ls.join("\n")}${rnd() < 0.8 ? "\n" : ""}`;
      }
      const d = unifiedDiff("f", before, after);
      if (before === after) {
        expect(d).toBe("");
        continue;
      }
      const res = apply(before, d);
      expect(res.after, JSON.stringify({ before, after, d })).toBe(after);
      const [a, b] = [split(before), split(after)];
      expect(res.changes, JSON.stringify({ before, after, d })).toBe(a.length + b.length - 2 * lcs(a, b));
    }
  });

  it("a new file, an emptied file, a line that lost or gained its newline", () => {
    expect(unifiedDiff("f", null, "x\ny\n")).toBe("--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+x\n+y\n");
    expect(apply(null, unifiedDiff("f", null, "x\ny")).after).toBe("x\ny");
    expect(unifiedDiff("f", "x\ny\n", "")).toBe("--- a/f\n+++ b/f\n@@ -1,2 +0,0 @@\n-x\n-y\n");
    expect(unifiedDiff("f", "x\ny\n", "x\ny")).toBe("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n+y\n\\ No newline at end of file\n");
    expect(unifiedDiff("f", "x\ny", "x\ny\n")).toBe("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+y\n");
    expect(unifiedDiff("f", "", "")).toBe("");
    // issue 25: a new empty file has no hunk, so a plain unified diff cannot create it (GNU patch and git apply
    // both refused the header alone as garbage); git's header for one does, in both.
    expect(unifiedDiff("f", null, "")).toBe("diff --git a/f b/f\nnew file mode 100644\n");
    // Changes with seven unchanged lines between them are two hunks; with six, one.
    const base = Array.from({ length: 20 }, (_, i) => `l${i}`);
    const edit = (idx: number[]) => base.map((l, i) => (idx.includes(i) ? `${l}!` : l)).join("\n") + "\n";
    const before = `${base.join("\n")}\n`;
    expect(apply(before, unifiedDiff("f", before, edit([5, 13]))).hunks).toBe(2);
    expect(apply(before, unifiedDiff("f", before, edit([5, 12]))).hunks).toBe(1);
    expect(unifiedDiff("f", before, edit([5, 12]))).toContain("@@ -3,14 +3,14 @@\n l2\n l3\n l4\n-l5\n+l5!\n");
    expect(unifiedDiff("f", before, edit([0]))).toContain("@@ -1,4 +1,4 @@\n-l0\n+l0!\n l1\n l2\n l3\n");
    expect(unifiedDiff("f", before, edit([19]))).toContain("@@ -17,4 +17,4 @@\n l16\n l17\n l18\n-l19\n+l19!\n");
  });

  it("the patch of an attempt: text diffs in path order, binary files named, deleted paths skipped", async () => {
    const original = [{ path: "b.txt", content: Buffer.from("one\n") }, { path: "img.bin", content: Buffer.from([0, 1, 2]) }, { path: "t.txt", content: Buffer.from("text\n") }];
    const files = [
      { path: "a.bin", content: Buffer.from([1, 0]) },
      { path: "b.txt", content: Buffer.from("two\n") },
      { path: "img.bin", content: Buffer.from([0, 1, 3]) },
      { path: "t.txt", content: Buffer.from([0x74, 0]) },
      { path: "u.txt", content: Buffer.from("unchanged\n") },
    ];
    const patch = await workspacePatch(original, { files, changed: ["a.bin", "b.txt", "gone.txt", "img.bin", "t.txt"] });
    expect(patch.notMinimal).toEqual([]);
    expect(patch.text).toBe(
      "Binary files /dev/null and b/a.bin differ\n" +
        "--- a/b.txt\n+++ b/b.txt\n@@ -1,1 +1,1 @@\n-one\n+two\n" +
        "Binary files a/img.bin and b/img.bin differ\n" +
        "Binary files a/t.txt and b/t.txt differ\n",
    );
    // A NUL past the first 8,000 bytes is not looked for; text that was binary before still shows as binary.
    const late = Buffer.concat([Buffer.alloc(8000, 0x61), Buffer.from([0])]);
    expect((await workspacePatch([], { files: [{ path: "l", content: late }], changed: ["l"] })).text).toMatch(/^--- \/dev\/null\n\+\+\+ b\/l\n@@ -0,0 \+1,1 @@\n/);
    expect((await workspacePatch([{ path: "w", content: Buffer.from([0]) }], { files: [{ path: "w", content: Buffer.from("now text\n") }], changed: ["w"] })).text).toBe("Binary files a/w and b/w differ\n");
    expect(await workspacePatch(original, { files: original, changed: [] })).toEqual({ text: "", notMinimal: [] });
  });
});

describe("issue 25: the bounded diff", () => {
  function random(seed: number) {
    let s = seed >>> 0;
    return () => {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  /**
   * Writes `original` to two fresh directories, applies `patch` with GNU patch in one and git apply in the
   * other, and returns what each directory then holds (every file, byte for byte; leftovers such as .orig
   * or .rej files would show up too).
   */
  function applyWithTools(original: WorkspaceFile[], patch: string): { gnu: Record<string, string>; git: Record<string, string> } {
    const root = mkdtempSync(join(tmpdir(), "ws-tools-"));
    const read = (dir: string, files: Record<string, string> = {}, prefix = ""): Record<string, string> => {
      for (const name of readdirSync(join(dir, prefix)).sort()) {
        const rel = prefix === "" ? name : `${prefix}/${name}`;
        if (rel === ".git" || rel === "p.diff") continue;
        if (statSync(join(dir, rel)).isDirectory()) read(dir, files, rel);
        else files[rel] = readFileSync(join(dir, rel), "latin1");
      }
      return files;
    };
    try {
      const out: Record<string, Record<string, string>> = {};
      for (const tool of ["gnu", "git"]) {
        const dir = join(root, tool);
        mkdirSync(dir);
        for (const f of original) {
          mkdirSync(dirname(join(dir, f.path)), { recursive: true });
          writeFileSync(join(dir, f.path), f.content);
        }
        writeFileSync(join(dir, "p.diff"), patch);
        if (tool === "gnu") execFileSync("patch", ["-p1", "--batch", "--silent", "-i", "p.diff"], { cwd: dir });
        else {
          execFileSync("git", ["init", "-q"], { cwd: dir });
          execFileSync("git", ["apply", "p.diff"], { cwd: dir });
        }
        out[tool] = read(dir);
      }
      return { gnu: out.gnu!, git: out.git! };
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  const asFiles = (files: WorkspaceFile[]) => Object.fromEntries(files.map((f) => [f.path, f.content.toString("latin1")]));

  // Lines a model's rewrite keeps (blank lines, braces) beside lines it does not.
  const code = (n: number, tag: string) => Array.from({ length: n }, (_, i) => (i % 7 === 3 ? "" : i % 5 === 0 ? "}" : `  line ${i} of ${tag};`)).join("\n") + "\n";

  it("400 random pairs in one workspace patch (CRLF, no newline at the end, empty, new and emptied files) apply byte-exact with GNU patch and git apply", async () => {
    const rnd = random(25);
    const words = ["a", "b\r", "", "c", "\r", "d\r", "}"];
    const textOf = (n: number) => {
      const ls = Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]!);
      const t = ls.join(rnd() < 0.3 ? "\r\n" : "\n");
      return n > 0 && rnd() < 0.75 ? `${t}${rnd() < 0.5 ? "\r\n" : "\n"}` : t;
    };
    const original: WorkspaceFile[] = [];
    const attempt: WorkspaceFile[] = [];
    for (let k = 0; k < 400; k++) {
      const path = `d${k % 7}/f${k}.txt`;
      const r = rnd();
      const before = r < 0.1 ? null : r < 0.15 ? "" : textOf(Math.floor(rnd() * 25));
      let after: string;
      const q = rnd();
      if (q < 0.08) after = "";
      else if (q < 0.3 || before === null || before === "") after = textOf(Math.floor(rnd() * 25));
      else {
        const ls = before.split("\n");
        for (let e = 1 + Math.floor(rnd() * 3); e > 0; e--) {
          const at = Math.floor(rnd() * ls.length);
          if (rnd() < 0.5) ls.splice(at, 1);
          else ls.splice(at, 0, words[Math.floor(rnd() * words.length)]!);
        }
        after = ls.join("\n");
      }
      if (before !== null) original.push({ path, content: Buffer.from(before, "latin1") });
      attempt.push({ path, content: Buffer.from(after, "latin1") });
    }
    const applied = applyAttempt(original, attempt, [], false);
    expect(applied.changed.length).toBeGreaterThan(350);
    // Every kind of pair is in the sample.
    const was = new Map(original.map((f) => [f.path, f.content.toString("latin1")]));
    const now = new Map(attempt.map((f) => [f.path, f.content.toString("latin1")]));
    const kinds = applied.changed.map((p) => [was.get(p), now.get(p)!] as const);
    expect(kinds.some(([b, a]) => b === undefined && a === "")).toBe(true);
    expect(kinds.some(([b, a]) => b === "" && a !== "")).toBe(true);
    expect(kinds.some(([b, a]) => b !== undefined && b !== "" && a === "")).toBe(true);
    expect(kinds.some(([b, a]) => b?.includes("\r\n") && !a.endsWith("\n") && a !== "")).toBe(true);
    const expected = asFiles(applied.files);
    for (const limits of [undefined, { perFile: 20, perPatch: 1000 }]) {
      const patch = await workspacePatch(original, applied, limits);
      const { gnu, git } = applyWithTools(original, patch.text);
      expect(gnu).toEqual(expected);
      expect(git).toEqual(expected);
      if (limits === undefined) expect(patch.notMinimal).toEqual([]);
      else expect(patch.notMinimal.length).toBeGreaterThan(50);
    }
  });

  it("past its work limit a file's changed middle is one replacement: exact, in well-formed hunks, the common head and tail kept", () => {
    const rnd = random(7);
    const words = ["a", "b", "c", "", "d"];
    const textOf = (n: number) => (n === 0 ? "" : `${Array.from({ length: n }, () => words[Math.floor(rnd() * words.length)]!).join("\n")}${rnd() < 0.8 ? "\n" : ""}`);
    const original: WorkspaceFile[] = [];
    const expected: Record<string, string> = {};
    const parts: string[] = [];
    let replaced = 0;
    for (let k = 0; k < 300; k++) {
      const before = textOf(Math.floor(rnd() * 30));
      const after = rnd() < 0.5 ? textOf(Math.floor(rnd() * 30)) : `x\n${before}`.replace(/\nc\n/, "\nchanged\n");
      if (before === after) continue;
      const limit = [0, 3, 30, 300][k % 4]!;
      const path = `p${k}`;
      const d = diffFile(path, before, after, limit);
      const full = diffFile(path, before, after);
      expect(full.minimal).toBe(true);
      if (d.minimal) expect(d.text).toBe(full.text);
      else {
        replaced++;
        // One hunk, its changes in one block: every removed line, then every added one.
        expect(d.text.match(/^@@/gm)).toHaveLength(1);
        expect(d.text.split("\n").slice(3).map((l) => l[0]).filter((c) => c === "-" || c === "+").join("")).toMatch(/^-*\+*$/);
      }
      original.push({ path, content: Buffer.from(before) });
      expected[path] = after;
      parts.push(d.text);
    }
    expect(replaced).toBeGreaterThan(50);
    const { gnu, git } = applyWithTools(original, parts.join(""));
    expect(gnu).toEqual(expected);
    expect(git).toEqual(expected);
    // The head and tail the two share stay context: only the middle is replaced.
    const before = "h1\nh2\nh3\nh4\np\nq\np\nt1\nt2\nt3\nt4\n";
    const after = "h1\nh2\nh3\nh4\nq\np\nq\nt1\nt2\nt3\nt4\n";
    expect(diffFile("f", before, after, 0)).toMatchObject({ minimal: false, text: "--- a/f\n+++ b/f\n@@ -2,9 +2,9 @@\n h2\n h3\n h4\n-p\n-q\n-p\n+q\n+p\n+q\n t1\n t2\n t3\n" });
    expect(diffFile("f", before, after).text.match(/^[-+]/gm)).toHaveLength(4);
  });

  it("huge rewrites (16,000 lines) stay within the work limit and apply byte-exact", () => {
    const rnd = random(16);
    const n = 16_000;
    const few = ["", "}", "  }", "    return x;", "a", "b", "c", "d"];
    const pick = () => Array.from({ length: n }, () => few[Math.floor(rnd() * few.length)]!).join("\n") + "\n";
    const scattered = code(n, "v1").split("\n");
    for (let i = 0; i < scattered.length; i += 37) scattered[i] = `edited ${i}`;
    const cases: [string, string, string, boolean][] = [
      // Every line different: the lines found on one side only are set aside, so this is solved outright.
      ["no line kept", Array.from({ length: n }, (_, i) => `old ${i}`).join("\n") + "\n", Array.from({ length: n }, (_, i) => `new ${i}`).join("\n"), true],
      // A model's rewrite keeps the blank lines and braces: a shortest script still fits the limit.
      ["blank lines and braces kept", code(n, "v1"), code(n, "v2"), true],
      ["every 37th line edited", code(n, "v1"), scattered.join("\n"), true],
      // Random lines from eight values: the worst case for Myers, past the limit.
      ["random lines from eight values", pick(), pick(), false],
      ["LF to CRLF", code(n, "v1"), code(n, "v1").replaceAll("\n", "\r\n"), true],
    ];
    for (const [name, before, after, minimal] of cases) {
      const d = diffFile("big.txt", before, after);
      expect(d.minimal, name).toBe(minimal);
      // Steps: the limit, one diagonal's overshoot at most, and the lines read.
      const lines = before.split("\n").length + after.split("\n").length;
      expect(d.work, name).toBeLessThanOrEqual(DIFF_WORK_PER_FILE + 2 * lines);
      const { gnu, git } = applyWithTools([{ path: "big.txt", content: Buffer.from(before) }], d.text);
      expect(gnu["big.txt"] === after, name).toBe(true);
      expect(git["big.txt"] === after, name).toBe(true);
    }
  });

  it("the files of one patch share a work limit: the later ones are replacements once it is spent", async () => {
    // Two edits far apart, made of lines both sides have: the diff has to search between them.
    const lines = code(400, "v1").split("\n");
    lines[11] = "}";
    lines.splice(297, 1);
    const edited = lines.join("\n");
    const original = ["a", "b", "c", "d"].map((p) => ({ path: `${p}.txt`, content: Buffer.from(code(400, "v1")) }));
    const attempt = original.map((f) => ({ path: f.path, content: Buffer.from(edited) }));
    const applied = applyAttempt(original, attempt, [], false);
    const one = diffFile("a.txt", code(400, "v1"), edited);
    expect(one.minimal).toBe(true);
    // Room for two files' diffs, not three.
    const patch = await workspacePatch(original, applied, { perFile: DIFF_WORK_PER_FILE, perPatch: 2 * one.work + 1 });
    expect(patch.notMinimal).toEqual(["c.txt", "d.txt"]);
    expect(patch.text.startsWith(one.text)).toBe(true);
    const { gnu } = applyWithTools(original, patch.text);
    expect(gnu).toEqual(asFiles(applied.files));
    expect(DIFF_WORK_PER_PATCH).toBeGreaterThanOrEqual(DIFF_WORK_PER_FILE);
  });

  it("new empty files come last, under git's header; emptied and empty files in place", async () => {
    const original = [{ path: "a.txt", content: Buffer.from("x\n") }, { path: "e.txt", content: Buffer.alloc(0) }];
    const attempt = [
      { path: "a.txt", content: Buffer.alloc(0) },
      { path: "b/__init__.py", content: Buffer.alloc(0) },
      { path: "c.txt", content: Buffer.from("c") },
      { path: "e.txt", content: Buffer.from("now\r\n") },
    ];
    const applied = applyAttempt(original, attempt, [], false);
    const patch = await workspacePatch(original, applied);
    expect(patch.text).toBe(
      "--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +0,0 @@\n-x\n" +
        "--- /dev/null\n+++ b/c.txt\n@@ -0,0 +1,1 @@\n+c\n\\ No newline at end of file\n" +
        "--- a/e.txt\n+++ b/e.txt\n@@ -0,0 +1,1 @@\n+now\r\n" +
        "diff --git a/b/__init__.py b/b/__init__.py\nnew file mode 100644\n",
    );
    const { gnu, git } = applyWithTools(original, patch.text);
    expect(gnu).toEqual({ "a.txt": "", "b/__init__.py": "", "c.txt": "c", "e.txt": "now\r\n" });
    expect(git).toEqual(gnu);
  });

  it("CRLF lines are lines with a carriage return: diffed, kept and applied as such", () => {
    expect(unifiedDiff("f", "a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\n")).toBe("--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n");
    expect(unifiedDiff("f", "a\r\nb", "a\r\nb\r\n")).toBe("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\r\n-b\n\\ No newline at end of file\n+b\r\n");
    const before = "one\r\ntwo\r\nthree\r\n";
    for (const after of ["one\ntwo\nthree\n", "one\r\ntwo\nthree\r\n", "one\r\ntwo\r\nthree\r"]) {
      const { gnu, git } = applyWithTools([{ path: "f", content: Buffer.from(before) }], unifiedDiff("f", before, after));
      expect(gnu).toEqual({ f: after });
      expect(git).toEqual({ f: after });
    }
  });
});

describe("issue 25: link resolution in a 5,000-entry archive", () => {
  /** The links as place() resolved them before issue 25 (a search of the list per hop), for comparison. */
  function resolvedBefore(entries: Entry[]): { ok: true; files: Record<string, string> } | { ok: false; entry: string; message: string } {
    const files = new Map<string, string>();
    const links: { path: string; target: string }[] = [];
    for (const e of entries) {
      if (e.type === "symlink") links.push({ path: e.name, target: e.linkname! });
      else files.set(e.name, e.content ?? "");
    }
    for (const l of links) {
      let target = l.target;
      for (let hops = 0; !files.has(target) && hops < 8; hops++) {
        const next = links.find((o) => o.path === target);
        if (!next) break;
        target = next.target;
      }
      const content = files.get(target);
      if (content === undefined) return { ok: false, entry: l.path, message: `is a link to ${JSON.stringify(l.target)}, which is not a file in the workspace` };
      files.set(l.path, content);
    }
    return { ok: true, files: Object.fromEntries([...files].sort(([a], [b]) => (a < b ? -1 : 1))) };
  }

  /** 1,000 files and 4,000 links in chains of 1 to `longest` links, then `extra`; in a seeded random order, so some chains come forwards and some backwards. */
  function archive(seed: number, longest: number, extra: Entry[] = []): Entry[] {
    let s = seed;
    const rnd = () => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296;
    const entries: Entry[] = Array.from({ length: 1000 }, (_, i) => ({ name: `f${i}`, content: `file ${i}\n` }));
    const links = 4000 - extra.length;
    for (let c = 0, made = 0; made < links; c++) {
      const len = Math.min(1 + Math.floor(rnd() * longest), links - made);
      for (let i = 0; i < len; i++) entries.push({ name: `c${c}l${i}`, type: "symlink", linkname: i === len - 1 ? `f${Math.floor(rnd() * 1000)}` : `c${c}l${i + 1}` });
      made += len;
    }
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    return [...entries, ...extra];
  }

  const unpack = async (entries: Entry[]) => {
    expect(entries).toHaveLength(5000);
    const res = await unpackWorkspace(await tarOf(entries));
    return res.ok ? { ok: true as const, files: text(res.files) } : { ok: false as const, entry: res.entry, message: res.message };
  };

  it("resolves chains of links as the search it replaced did, in any order, into 5,000 files", async () => {
    // A chain of nine links takes eight hops from its first: always within bounds, whatever the order.
    const entries = archive(1, 9);
    const before = resolvedBefore(entries);
    expect(before.ok && Object.keys(before.files)).toHaveLength(5000);
    expect(await unpack(entries)).toEqual(before);
  });

  it("refuses what the search refused: a chain too long for its order, a cycle, a link out of the workspace", async () => {
    // Ten links: nine hops from the first. Listed forwards that is one too many; backwards, each link's
    // target is already a file when it is resolved.
    const ten = Array.from({ length: 10 }, (_, i): Entry => ({ name: `long${i}`, type: "symlink", linkname: i === 9 ? "f0" : `long${i + 1}` }));
    const forwards = archive(2, 9, ten);
    expect(resolvedBefore(forwards)).toEqual({ ok: false, entry: "long0", message: 'is a link to "long1", which is not a file in the workspace' });
    expect(await unpack(forwards)).toEqual(resolvedBefore(forwards));
    const backwards = archive(2, 9, ten.toReversed());
    expect(resolvedBefore(backwards)).toMatchObject({ ok: true, files: { long0: "file 0\n" } });
    expect(await unpack(backwards)).toEqual(resolvedBefore(backwards));
    const cycle: Entry[] = [
      { name: "cyc-a", type: "symlink", linkname: "cyc-b" },
      { name: "cyc-b", type: "symlink", linkname: "cyc-c" },
      { name: "cyc-c", type: "symlink", linkname: "cyc-a" },
    ];
    const cycled = archive(1, 9, cycle);
    expect(resolvedBefore(cycled)).toEqual({ ok: false, entry: "cyc-a", message: 'is a link to "cyc-b", which is not a file in the workspace' });
    expect(await unpack(cycled)).toEqual(resolvedBefore(cycled));
    expect(await unpack(archive(1, 9, [{ name: "up", type: "symlink", linkname: "../f1" }]))).toEqual({ ok: false, entry: "up", message: 'is a link to "../f1", outside the workspace' });
  });
});
