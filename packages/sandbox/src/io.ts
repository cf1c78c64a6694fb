// The conversation with a container's bootstrap: its preamble (READY, ACK) on the attach stream, the request
// (a header line and a tar of the files) on stdin, and the run's output coming back, where a random marker
// separates the program's own output from the trailer (exit code, judge, channel, artifact tar).
import { createHash, randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import * as tar from "tar-stream";
import { BOOTSTRAP_ACK, BOOTSTRAP_READY } from "./bootstrap";
import { buildEnv } from "./container";
import { BoundedBuffer, ClippedCapture, MarkerSplitter, createDemuxer } from "./output";
import { MiB, type Artifact, type JudgeResult, type RunRequest, type SandboxLimits } from "./types";
import { SAFE_NAME } from "./validate";

// After the container stops, Docker still has to flush the last frames of the attach stream.
export const STREAM_DRAIN_MS = 10_000;

/** A started container's streams: the bootstrap's preamble (READY, ACK) is stripped before the program's output. */
export interface Io {
  stream: Duplex;
  /** True once READY arrived; false if the stream ended first. */
  ready: Promise<boolean>;
  /** Whether the bootstrap acknowledged the request (so the program may have run). */
  acked(): boolean;
  /** Ends when the container's output ends. */
  drained: Promise<void>;
  /** Where the program's output goes; stderr before this (a pre-import warning) is dropped. */
  bind(stdout: (b: Buffer) => void, stderr: (b: Buffer) => void): void;
}

async function attachIo(container: Docker.Container): Promise<Io> {
  const stream = (await container.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as Duplex;
  const preamble = Buffer.concat([BOOTSTRAP_READY, BOOTSTRAP_ACK]);
  let pre: Buffer | null = Buffer.alloc(0);
  let acked = false;
  let out: ((b: Buffer) => void) | undefined;
  let err: ((b: Buffer) => void) | undefined;
  let setReady!: (v: boolean) => void;
  const ready = new Promise<boolean>((r) => (setReady = r));
  const demux = createDemuxer((s, payload) => {
    if (s === 1) {
      if (pre !== null) {
        pre = Buffer.concat([pre, payload]);
        if (pre.length >= BOOTSTRAP_READY.length) setReady(pre.subarray(0, BOOTSTRAP_READY.length).equals(BOOTSTRAP_READY));
        if (pre.length < preamble.length) return;
        acked = pre.subarray(0, preamble.length).equals(preamble);
        // Written by the bootstrap before the program exists, so a mismatch is a broken bootstrap: keep it all.
        payload = acked ? pre.subarray(preamble.length) : pre;
        pre = null;
        if (payload.length === 0) return;
      }
      out?.(payload);
    } else if (s === 2) err?.(payload);
  });
  const drained = new Promise<void>((resolve) => {
    stream.on("data", (chunk: Buffer) => demux(chunk));
    const end = () => {
      setReady(false);
      resolve();
    };
    stream.once("end", end);
    stream.once("close", end);
    // A broken attach stream loses output, not the run: the trailer check reports it.
    stream.once("error", end);
  });
  return {
    stream,
    ready,
    acked: () => acked,
    drained,
    bind(o, e) {
      out = o;
      err = e;
    },
  };
}

/** Starts a created container with its streams attached first, so that none of its output is missed. */
export async function startAttached(container: Docker.Container): Promise<{ io: Io; exited: Promise<{ StatusCode: number }> }> {
  const io = await attachIo(container);
  await container.start();
  return { io, exited: container.wait() as Promise<{ StatusCode: number }> };
}

/**
 * The first line the bootstrap reads: what to run and how, then the tar of the request's files follows,
 * `inputBytes` long (so that the bootstrap reads it without waiting for stdin to close).
 */
export function requestHeader(
  req: RunRequest,
  marker: string,
  run: { inProcess: boolean; relayOutput: boolean },
  limits: Readonly<SandboxLimits>,
  inputBytes: number,
): string {
  const { inProcess, relayOutput } = run;
  return JSON.stringify({
    marker,
    inputBytes,
    relayOutput,
    argv: req.command,
    env: Object.fromEntries(buildEnv(req.env).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)])),
    inProcess,
    protect: req.protect ?? [],
    judgeDir: req.judge?.dir ?? null,
    judge: req.judge ? { argv: req.judge.command, env: Object.fromEntries(Object.entries(req.judge.env ?? {})), cwd: req.judge.dir } : null,
    channel: req.channel === true,
    isolate: req.isolate === true,
    limits: {
      maxFileBytes: limits.artifactMaxBytes,
      maxTotalBytes: limits.artifactsTotalBytes,
      maxFiles: limits.artifactMaxCount,
      maxEntries: 10_000,
    },
  });
}

export async function packInputs(req: RunRequest): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  pack.on("data", (c) => chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    pack.on("end", resolve);
    pack.on("error", reject);
  });
  const add = (name: string, content: Buffer) =>
    new Promise<void>((resolve, reject) => {
      pack.entry({ name, size: content.length, mode: 0o644, type: "file" }, content, (err) => (err ? reject(err) : resolve()));
    });
  for (const f of req.files) await add(`inputs/${f.name}`, f.content);
  for (const f of req.workFiles ?? []) await add(f.path, f.content);
  if (req.script) await add(req.script.filename, Buffer.from(req.script.source, "utf8"));
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** A run's output as the marker splits it: the program's stdout and stderr, and the trailer after them. */
export interface RunOutput {
  /** Fresh for every run; the request header tells the bootstrap which one it is. */
  marker: string;
  stdout: ClippedCapture;
  stderr: ClippedCapture;
  trailer: BoundedBuffer;
  /** Resolves once both end markers arrived: all of the run's output is in. */
  complete: Promise<void>;
  /** Whether the trailer began (the bootstrap got as far as reporting). */
  trailerSeen(): boolean;
  /** Flushes what the splitters held back, once the stream is closed. */
  end(): void;
}

/** Binds the program's output of `io` to fresh captures, split at a fresh marker. */
export function captureOutput(io: Io, limits: Readonly<SandboxLimits>): RunOutput {
  const marker = `\0loopsmith-trailer-${randomBytes(16).toString("hex")}\0`;
  const stdout = new ClippedCapture(limits.stdoutCapBytes);
  const stderr = new ClippedCapture(limits.stderrCapBytes);
  // Header line + tar; anything beyond the artifact limits plus headers is a broken or forged trailer.
  // The head line also carries the judge's report files (base64) and the channel (JSON-escaped).
  const trailer = new BoundedBuffer(limits.artifactsTotalBytes + (limits.artifactMaxCount + 8) * 2048 + 2 * limits.artifactMaxBytes + 8 * MiB);
  // stdout: the program's output, the marker, the trailer, the marker again; stderr: output, the marker.
  let setComplete!: () => void;
  const complete = new Promise<void>((r) => (setComplete = r));
  const check = () => trailerEnd.markerSeen && stderrEnd.markerSeen && setComplete();
  const trailerEnd = new MarkerSplitter(Buffer.from(marker), (b) => trailer.push(b), () => undefined);
  const stderrEnd = new MarkerSplitter(Buffer.from(marker), (b) => stderr.push(b), () => undefined);
  const splitter = new MarkerSplitter(Buffer.from(marker), (b) => stdout.push(b), (b) => trailerEnd.push(b));
  io.bind(
    (b) => {
      splitter.push(b);
      check();
    },
    (b) => {
      stderrEnd.push(b);
      check();
    },
  );
  return {
    marker,
    stdout,
    stderr,
    trailer,
    complete,
    trailerSeen: () => splitter.markerSeen,
    end() {
      splitter.end();
      trailerEnd.end();
      stderrEnd.end();
    },
  };
}

export async function parseTrailer(
  trailer: BoundedBuffer,
  limits: SandboxLimits,
): Promise<{ exitCode?: number; artifacts: Artifact[]; errors: string[]; judge?: JudgeResult; channel?: { text: string; clipped: boolean }; protectedReplaced?: string[] }> {
  const errors: string[] = [];
  const buf = trailer.value();
  const nl = buf.indexOf(0x0a);
  let exitCode: number | undefined;
  let judge: JudgeResult | undefined;
  let channel: { text: string; clipped: boolean } | undefined;
  let protectedReplaced: string[] | undefined;
  try {
    const head = JSON.parse(buf.subarray(0, nl < 0 ? buf.length : nl).toString("utf8")) as { exitCode?: unknown; errors?: unknown; judge?: unknown; channel?: unknown; replaced?: unknown };
    if (typeof head.exitCode === "number") exitCode = head.exitCode;
    if (Array.isArray(head.errors)) errors.push(...head.errors.map(String));
    judge = judgeOf(head.judge, limits);
    const ch = head.channel as { text?: unknown; clipped?: unknown } | undefined;
    if (ch && typeof ch.text === "string") channel = { text: ch.text, clipped: ch.clipped === true };
    if (Array.isArray(head.replaced) && head.replaced.length > 0) protectedReplaced = head.replaced.map(String);
  } catch {
    return { artifacts: [], errors: ["artifact trailer is malformed: no artifacts collected"] };
  }
  if (trailer.overflowed) errors.push("artifact stream exceeded its size limit: later artifacts are missing");

  const artifacts: Artifact[] = [];
  let total = 0;
  const extract = tar.extract();
  extract.end(buf.subarray(nl + 1));
  try {
    for await (const entry of extract) {
      const { name, type } = entry.header;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of entry as AsyncIterable<Buffer>) {
        size += c.length;
        if (size <= limits.artifactMaxBytes) chunks.push(c);
      }
      // The bootstrap already applies these limits; checking again keeps the host safe from a forged trailer.
      if (type !== "file" || name.startsWith("/") || name.split("/").includes("..")) {
        errors.push(`${name}: rejected artifact entry (${type})`);
      } else if (size > limits.artifactMaxBytes || artifacts.length >= limits.artifactMaxCount || total + size > limits.artifactsTotalBytes) {
        errors.push(`${name}: rejected, over the artifact limits`);
      } else {
        const content = Buffer.concat(chunks);
        total += size;
        artifacts.push({ name, size, sha256: createHash("sha256").update(content).digest("hex"), content });
      }
    }
  } catch (e) {
    errors.push(`artifact tar is malformed (${(e as Error).message}): later artifacts are missing`);
  }
  artifacts.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { exitCode, artifacts, errors, ...(judge ? { judge } : {}), ...(channel ? { channel } : {}), ...(protectedReplaced ? { protectedReplaced } : {}) };
}

/** The judge's part of a trailer's head line, checked as strictly as the artifacts (a forged trailer gets nothing). */
function judgeOf(raw: unknown, limits: SandboxLimits): JudgeResult | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const j = raw as { exitCode?: unknown; files?: unknown; errors?: unknown };
  if (typeof j.exitCode !== "number" || !Array.isArray(j.files)) return undefined;
  const files: JudgeResult["files"] = [];
  let total = 0;
  for (const f of j.files as { name?: unknown; content?: unknown }[]) {
    if (typeof f?.name !== "string" || typeof f.content !== "string" || !SAFE_NAME.test(f.name)) continue;
    const content = Buffer.from(f.content, "base64");
    total += content.length;
    if (total > limits.artifactMaxBytes) break;
    files.push({ name: f.name, content });
  }
  return { exitCode: j.exitCode, files, errors: Array.isArray(j.errors) ? j.errors.map(String).slice(0, 20) : [] };
}

/** The exit code in a trailer's head line, if it has one (read before the trailer is parsed in full). */
export function trailerExitCode(trailer: BoundedBuffer): number | undefined {
  const buf = trailer.value();
  const nl = buf.indexOf(0x0a);
  try {
    const head = JSON.parse(buf.subarray(0, nl < 0 ? buf.length : nl).toString("utf8")) as { exitCode?: unknown };
    return typeof head.exitCode === "number" ? head.exitCode : undefined;
  } catch {
    return undefined;
  }
}
