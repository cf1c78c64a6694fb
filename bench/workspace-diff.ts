// Benchmark (issue 25): what a workspace patch costs the runner's thread, and what link resolution costs
// the API's, beside a linear floor measured in the same run on the same bytes.
//
//   npx tsx bench/workspace-diff.ts [--runs 5] [--sizes 1000,2000,4000,8000,16000]
//
// Each measurement runs in a child process of its own, so that its peak memory is its own: the child
// builds its inputs, collects garbage, resets the peak (/proc/self/clear_refs), runs the operation --runs
// times and reports the median wall and CPU time (the CPU time is the fairer number on a shared machine)
// and the peak resident memory above what it held before.
//
// Rewrites of an N-line file (code-like lines, about 25 characters):
//   whole   every line different (the rewrite that took 79 s and 2.3 GiB at 4,000 lines before issue 25)
//   code    a whole rewrite: every line of code new, blank lines and braces (the lines it shares with the
//           old text) laid out anew
//   edits   every 37th line edited (an ordinary refinement)
//   worst   lines drawn at random from eight values on both sides: Myers' worst case, past the work limit,
//           so the changed middle is written as one replacement
// floor: splitting both texts into lines, numbering the lines in a Map and hashing both texts (sha256):
// what reading the two texts costs before any diffing.
// patch: workspacePatch of 20 "worst" files of 4,000 lines, with the longest event-loop stall seen meanwhile
// (it yields between files, so the stall is one file's diff, not the patch's).
// links: unpacking a 5,000-entry tar (1,000 files, 4,000 links in chains of nine, see linkEntries) beside a
// tar of 5,000 plain files (floor), and the list search per hop that resolution used before issue 25, alone.
// zip (issue 28): the same 5,000 plain files as a deflated zip, read by yauzl, with the longest event-loop
// stall, beside inflating the same entries with zlib alone (what any zip reader pays) as its floor.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { deflateRawSync, inflateRawSync } from "node:zlib";
import { diffFile, unpackWorkspace, workspacePatch, type WorkspaceFile } from "@loopsmith/verifier";
import * as tar from "tar-stream";
import { median } from "./lib/stats";

const { values } = parseArgs({
  options: { runs: { type: "string", default: "5" }, sizes: { type: "string", default: "1000,2000,4000,8000,16000" }, child: { type: "string" } },
});
const RUNS = Number(values.runs);

type Kind = "whole" | "code" | "edits" | "worst";
type Job = { what: "diff" | "floor"; kind: Kind; n: number } | { what: "patch" } | { what: "links" | "links-floor" | "links-search" | "zip" | "zip-floor" };
interface Measured {
  wallMs: number;
  cpuMs: number;
  peakKb: number;
  note: string;
}

// ------------------------------------------------------------------------------------------ inputs

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

/** Code-like lines; `layout` moves the blank lines and braces (a rewrite need not keep them where they were). */
const codeLines = (n: number, tag: string, layout: [number, number] = [7, 5]) =>
  Array.from({ length: n }, (_, i) => (i % layout[0] === 3 ? "" : i % layout[1] === 0 ? "  }" : `    const v${i} = f(${tag}, ${i});`));

function pair(kind: Kind, n: number): [string, string] {
  const text = (ls: string[]) => `${ls.join("\n")}\n`;
  if (kind === "whole") return [text(codeLines(n, "a").map((l, i) => `${l} // old ${i}`)), text(codeLines(n, "b").map((l, i) => `${l} // new ${i}`))];
  if (kind === "code") return [text(codeLines(n, "a")), text(codeLines(n, "b", [6, 4]))];
  if (kind === "edits") return [text(codeLines(n, "a")), text(codeLines(n, "a").map((l, i) => (i % 37 === 0 ? `${l} // edited` : l)))];
  const rnd = random(n);
  const few = ["", "  }", "}", "    return x;", "    x += 1;", "  if (x) {", "    y();", "  }"];
  const pick = () => text(Array.from({ length: n }, () => few[Math.floor(rnd() * few.length)]!));
  return [pick(), pick()];
}

type Entry = { name: string; type: "file" | "symlink"; content?: string; linkname?: string };

/**
 * 1,000 files and 4,000 links in chains of nine (the longest the hop bound resolves from the first link),
 * listed first links first: every link's target comes later in the list and is not resolved yet when it
 * is resolved, so each takes all its hops (the order that made the search per hop slowest).
 */
function linkEntries(): Entry[] {
  const chains = Math.ceil(4000 / 9);
  const links: Entry[] = [];
  for (let i = 0; i < 9; i++) {
    for (let c = 0; c < chains && links.length < 4000; c++) links.push({ name: `l${c}_${i}`, type: "symlink", linkname: i === 8 ? `src/f${c % 1000}.ts` : `l${c}_${i + 1}` });
  }
  // A chain cut short by the 4,000 has its last link point at a file.
  for (const l of links) if (!links.some((o) => o.name === l.linkname) && !l.linkname!.startsWith("src/")) l.linkname = "src/f0.ts";
  const files: Entry[] = Array.from({ length: 1000 }, (_, i) => ({ name: `src/f${i}.ts`, type: "file", content: `export const x${i} = ${i};\n` }));
  return [...links, ...files];
}

async function tarOf(entries: Entry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve) => pack.on("end", () => resolve()));
  for (const e of entries) {
    const content = Buffer.from(e.content ?? "");
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: e.name, type: e.type, size: e.type === "file" ? content.length : 0, ...(e.linkname ? { linkname: e.linkname } : {}) }, e.type === "file" ? content : Buffer.alloc(0), (err) => (err ? reject(err) : resolve())),
    );
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** A zip of regular files, deflated (Unix mode 0644), as zip tools write them. */
function zipOf(files: { name: string; content: string }[]): Buffer {
  const parts: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const name = Buffer.from(f.name);
    const raw = Buffer.from(f.content);
    const data = deflateRawSync(raw);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(raw.length, 22);
    local.writeUInt16LE(name.length, 26);
    parts.push(local, name, data);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE((3 << 8) | 20, 4);
    entry.writeUInt16LE(8, 10);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(raw.length, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, name);
    offset += 30 + name.length + data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...parts, cd, end]);
}

/** Link resolution as it was before issue 25: a search of the list per hop (the part the map replaced). */
function searchPerHop(entries: Entry[]): number {
  const files = new Map(entries.filter((e) => e.type === "file").map((e) => [e.name, e.content!]));
  const links = entries.filter((e) => e.type === "symlink").map((e) => ({ path: e.name, target: e.linkname! }));
  let resolved = 0;
  for (const l of links) {
    let target = l.target;
    for (let hops = 0; !files.has(target) && hops < 8; hops++) {
      const next = links.find((o) => o.path === target);
      if (!next) break;
      target = next.target;
    }
    const content = files.get(target);
    if (content === undefined) throw new Error(`unresolved ${l.path}`);
    files.set(l.path, content);
    resolved++;
  }
  return resolved;
}

// ------------------------------------------------------------------------------------------ child

const status = (field: "VmHWM" | "VmRSS") => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN);

async function measure(op: () => Promise<string> | string): Promise<Measured> {
  const walls: number[] = [];
  const cpus: number[] = [];
  let note = "";
  (globalThis as { gc?: () => void }).gc?.();
  const rssBefore = status("VmRSS");
  // Resets the peak to what is resident now (Linux 4.0 and later).
  writeFileSync("/proc/self/clear_refs", "5");
  for (let i = 0; i < RUNS; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    note = await op();
    walls.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpus.push((c.user + c.system) / 1000);
  }
  return { wallMs: median(walls), cpuMs: median(cpus), peakKb: status("VmHWM") - rssBefore, note };
}

async function child(job: Job): Promise<Measured> {
  if (job.what === "diff" || job.what === "floor") {
    const [before, after] = pair(job.kind, job.n);
    if (job.what === "floor") {
      return measure(() => {
        const ids = new Map<string, number>();
        for (const text of [before, after]) for (const l of text.split("\n")) if (!ids.has(l)) ids.set(l, ids.size);
        return `${createHash("sha256").update(before).digest("hex").slice(0, 4)}${createHash("sha256").update(after).digest("hex").slice(0, 4)} ${ids.size} distinct lines`;
      });
    }
    return measure(() => {
      const d = diffFile("big.ts", before, after);
      return `${d.minimal ? "shortest" : "replaced"}, ${(d.work / 1e6).toFixed(2)}M steps, patch ${(d.text.length / 1024).toFixed(0)} KiB`;
    });
  }
  if (job.what === "patch") {
    const original: WorkspaceFile[] = [];
    const files: WorkspaceFile[] = [];
    for (let k = 0; k < 20; k++) {
      const [before, after] = pair("worst", 4000 + k);
      original.push({ path: `src/f${k}.ts`, content: Buffer.from(before) });
      files.push({ path: `src/f${k}.ts`, content: Buffer.from(after) });
    }
    const changed = files.map((f) => f.path);
    let stall = 0;
    const m = await measure(async () => {
      const h = monitorEventLoopDelay({ resolution: 1 });
      h.enable();
      // A timer that keeps the loop's delay measured while the patch runs.
      const tick = setInterval(() => {}, 1);
      const p = await workspacePatch(original, { files, changed });
      clearInterval(tick);
      h.disable();
      stall = Math.max(stall, h.max / 1e6);
      return `${p.notMinimal.length}/20 replaced, patch ${(p.text.length / 1024).toFixed(0)} KiB`;
    });
    return { ...m, note: `${m.note}, longest event-loop stall ${stall.toFixed(0)} ms` };
  }
  const entries = linkEntries();
  const plain = entries.map((e, i) => ({ name: `plain/p${i}`, content: e.content ?? `${e.linkname}\n` }));
  if (job.what === "zip-floor") {
    const deflated = plain.map((f) => deflateRawSync(Buffer.from(f.content)));
    return measure(() => `${deflated.reduce((n, d) => n + inflateRawSync(d).length, 0)} bytes inflated`);
  }
  if (job.what === "zip") {
    const archive = zipOf(plain);
    let stall = 0;
    const m = await measure(async () => {
      const h = monitorEventLoopDelay({ resolution: 1 });
      h.enable();
      const tick = setInterval(() => {}, 1);
      const res = await unpackWorkspace(archive);
      clearInterval(tick);
      h.disable();
      stall = Math.max(stall, h.max / 1e6);
      if (!res.ok) throw new Error(`${res.entry}: ${res.message}`);
      return `${res.files.length} files`;
    });
    return { ...m, note: `${m.note}, longest event-loop stall ${stall.toFixed(0)} ms` };
  }
  if (job.what === "links-search") return measure(() => `${searchPerHop(entries)} links resolved`);
  const archive = await tarOf(job.what === "links" ? entries : entries.map((e, i) => ({ name: `plain/p${i}`, type: "file", content: e.content ?? `${e.linkname}\n` })));
  return measure(async () => {
    const res = await unpackWorkspace(archive);
    if (!res.ok) throw new Error(`${res.entry}: ${res.message}`);
    return `${res.files.length} files`;
  });
}

// ------------------------------------------------------------------------------------------ parent

function run(job: Job): Measured {
  const self = fileURLToPath(import.meta.url);
  const res = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", self, "--runs", String(RUNS), "--child", JSON.stringify(job)], { encoding: "utf8", maxBuffer: 1 << 24 });
  const last = res.stdout.trim().split("\n").at(-1) ?? "";
  if (res.status !== 0 || !last.startsWith("{")) throw new Error(`child ${JSON.stringify(job)} failed (${res.status ?? res.signal}):\n${res.stdout}\n${res.stderr}`);
  return JSON.parse(last) as Measured;
}

const fmt = (m: Measured) => `${m.wallMs.toFixed(1).padStart(8)} ${m.cpuMs.toFixed(1).padStart(8)} ${(m.peakKb / 1024).toFixed(1).padStart(8)}`;

if (values.child) {
  console.log(JSON.stringify(await child(JSON.parse(values.child) as Job)));
} else {
  const sizes = values.sizes.split(",").map(Number);
  console.log(`medians of ${RUNS} runs, each measurement in its own process; wall and CPU in ms, peak = resident MiB above the inputs`);
  console.log(`${"rewrite".padEnd(13)} ${"diff wall".padStart(9)} ${"cpu".padStart(8)} ${"peak".padStart(8)}  ${"floor wall".padStart(10)} ${"cpu".padStart(8)} ${"peak".padStart(8)}  diff`);
  for (const kind of ["whole", "code", "edits", "worst"] as const) {
    for (const n of sizes) {
      const d = run({ what: "diff", kind, n });
      const f = run({ what: "floor", kind, n });
      console.log(`${`${kind} ${n}`.padEnd(13)} ${fmt(d).padStart(26)}  ${fmt(f).padStart(27)}  ${d.note}`);
    }
  }
  const p = run({ what: "patch" });
  console.log(`\nworkspacePatch, 20 worst-case files of 4,000 lines: wall ${p.wallMs.toFixed(0)} ms, cpu ${p.cpuMs.toFixed(0)} ms, peak ${(p.peakKb / 1024).toFixed(1)} MiB; ${p.note}`);
  const links = run({ what: "links" });
  const floor = run({ what: "links-floor" });
  const search = run({ what: "links-search" });
  console.log(`\n5,000-entry archive (1,000 files, 4,000 links in chains of nine, first links first), unpackWorkspace:`);
  console.log(`  with links             wall ${links.wallMs.toFixed(0)} ms, cpu ${links.cpuMs.toFixed(0)} ms, peak ${(links.peakKb / 1024).toFixed(1)} MiB (${links.note})`);
  console.log(`  floor, 5,000 files     wall ${floor.wallMs.toFixed(0)} ms, cpu ${floor.cpuMs.toFixed(0)} ms, peak ${(floor.peakKb / 1024).toFixed(1)} MiB (${floor.note})`);
  console.log(`  before issue 25, the list search per hop alone: wall ${search.wallMs.toFixed(0)} ms, cpu ${search.cpuMs.toFixed(0)} ms (${search.note})`);
  const zip = run({ what: "zip" });
  const zipFloor = run({ what: "zip-floor" });
  console.log(`\nthe same 5,000 plain files as a deflated zip, unpackWorkspace (yauzl):`);
  console.log(`  zip                    wall ${zip.wallMs.toFixed(0)} ms, cpu ${zip.cpuMs.toFixed(0)} ms, peak ${(zip.peakKb / 1024).toFixed(1)} MiB (${zip.note})`);
  console.log(`  floor, zlib alone      wall ${zipFloor.wallMs.toFixed(0)} ms, cpu ${zipFloor.cpuMs.toFixed(0)} ms (${zipFloor.note})`);
}
