// Checks a RunRequest before anything is created: names and paths that cannot escape /work, argv and
// environment without NUL bytes, a judge that is set up consistently, inputs that fit the work area.
import type { RunRequest, SandboxLimits } from "./types";

export const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
// A work file's path segments may also be hidden (".loopsmith") or hold @ + ~ (a workspace's
// node_modules/@types, issue 14); "." and ".." never match.
const WORK_SEGMENT = /^(?!\.{1,2}$)[A-Za-z0-9._@+~-]{1,128}$/;
const WORK_PATH_MAX = 255;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function validate(req: RunRequest, limits: SandboxLimits): void {
  if (!Number.isFinite(req.timeoutMs) || req.timeoutMs <= 0) throw new Error(`sandbox: timeoutMs must be positive, got ${req.timeoutMs}`);
  if (req.command.length === 0 || req.command.some((a) => typeof a !== "string" || a.includes("\0"))) {
    throw new Error("sandbox: command must be a non-empty argv without NUL bytes");
  }
  const names = new Set<string>();
  for (const f of req.files) {
    if (!SAFE_NAME.test(f.name)) throw new Error(`sandbox: input name ${JSON.stringify(f.name)} is not a plain file name`);
    if (names.has(f.name)) throw new Error(`sandbox: input ${f.name} given twice`);
    names.add(f.name);
  }
  if (req.script) {
    const n = req.script.filename;
    if (!SAFE_NAME.test(n) || n === "inputs" || n === "out") throw new Error(`sandbox: script filename ${JSON.stringify(n)} is not allowed`);
  }
  validateWorkFiles(req);
  for (const [k, v] of [...Object.entries(req.env ?? {}), ...Object.entries(req.judge?.env ?? {})]) {
    if (!ENV_NAME.test(k) || v.includes("\0")) throw new Error(`sandbox: invalid environment variable ${JSON.stringify(k)}`);
  }
  const paths = new Set((req.workFiles ?? []).map((f) => f.path));
  for (const p of req.protect ?? []) if (!paths.has(p)) throw new Error(`sandbox: protected path ${JSON.stringify(p)} is not one of the work files`);
  if (req.judge) {
    const { dir, command } = req.judge;
    if (!WORK_SEGMENT.test(dir) || dir === "inputs" || dir === "out") throw new Error(`sandbox: judge directory ${JSON.stringify(dir)} must be one plain top-level name`);
    if (req.channel) throw new Error("sandbox: a run has a judge or a channel, not both");
    if (command.length === 0 || command.some((a) => typeof a !== "string" || a.includes("\0"))) throw new Error("sandbox: the judge's command must be a non-empty argv without NUL bytes");
    if (req.protect?.some((p) => p.startsWith(`${dir}/`))) throw new Error("sandbox: the judge's files are the judge's, not protected");
  }
  const inputBytes =
    req.files.reduce((n, f) => n + f.content.length, 0) +
    (req.workFiles ?? []).reduce((n, f) => n + f.content.length, 0) +
    Buffer.byteLength(req.script?.source ?? "");
  // Inputs share the /work tmpfs with everything the program writes; refuse what could never fit.
  if (inputBytes > limits.workTmpfsBytes / 2) {
    throw new Error(`sandbox: inputs take ${inputBytes} bytes, more than half of the ${limits.workTmpfsBytes}-byte work area`);
  }
}

function validateWorkFiles(req: RunRequest): void {
  const files = new Set<string>();
  const dirs = new Set<string>();
  // The script is a file at /work: a work file may neither replace it nor need it to be a directory.
  if (req.script) files.add(req.script.filename);
  for (const f of req.workFiles ?? []) {
    const p = f.path;
    const bad = (why: string) => new Error(`sandbox: work file path ${JSON.stringify(p)} ${why}`);
    if (typeof p !== "string" || p.length === 0 || p.length > WORK_PATH_MAX) throw bad(`must be 1-${WORK_PATH_MAX} characters`);
    const segments = p.split("/");
    if (!segments.every((s) => WORK_SEGMENT.test(s))) throw bad("must be relative, with plain (optionally dot-prefixed) names and no . or ..");
    if (segments[0] === "inputs" || segments[0] === "out") throw bad("must not be under inputs/ or out/ (inputs go in files, out/ is the program's)");
    if (files.has(p) || dirs.has(p)) throw bad(req.script?.filename === p ? "clashes with the script" : "is given twice or is also a directory");
    for (let i = 1; i < segments.length; i++) {
      const dir = segments.slice(0, i).join("/");
      if (files.has(dir)) throw bad(`needs ${dir} to be a directory, but it is a file`);
      dirs.add(dir);
    }
    files.add(p);
  }
}
