// issue 14: workspace archives (what is refused, naming the entry), attempts over the original, the patch.
import { execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { deflateRawSync, gzipSync } from "node:zlib";
import * as tar from "tar-stream";
import { describe, expect, it } from "vitest";
import { applyAttempt, isLocked, packWorkspace, readStoredWorkspace, unifiedDiff, unpackWorkspace, workspacePatch, type WorkspaceFile } from "../src/workspace";

type Entry = { name: string; type?: "file" | "directory" | "symlink" | "link" | "character-device" | "fifo"; content?: string; linkname?: string };

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

  it("writes a unified diff that git apply accepts", () => {
    const attempt = [
      { path: "src/sum.ts", content: Buffer.from("export function sum(a: number, b: number): number {\n  return a + b;\n}\n") },
      { path: "src/new.ts", content: Buffer.from("export const n = 1;") },
    ];
    const applied = applyAttempt(original, attempt, [], false);
    const patch = workspacePatch(original, applied);
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
