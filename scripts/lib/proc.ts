import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Where scripts/build.ts records its last run (a constant there; not imported, to keep esbuild out of
// every process that spawns one).
const BUILD_STAMP = "apps/runner/dist/.built";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/** The entry points that run compiled (scripts/build.ts), as production runs them: source → bundle. */
const COMPILED: Record<string, string> = {
  "apps/api/src/server.ts": "apps/api/dist/server.mjs",
  "apps/runner/src/main.ts": "apps/runner/dist/main.mjs",
};

/** Newest modification time of the workspace's sources (apps/* and packages/*), in ms. */
function newestSource(): number {
  let newest = 0;
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const group of ["apps", "packages"]) {
    for (const pkg of readdirSync(path.join(repoRoot, group))) {
      try {
        walk(path.join(repoRoot, group, pkg, "src"));
      } catch {
        // A package without src/.
      }
    }
  }
  return newest;
}

let checkedFresh = false;
/**
 * The bundles, rebuilt when a source is newer (a test or bench must never run yesterday's code). The suite
 * builds once before its workers start (tests/support/build.ts), so this is a stat walk there.
 */
export function ensureBuilt(): void {
  if (checkedFresh) return;
  const built = Math.min(...[...Object.values(COMPILED), BUILD_STAMP].map((f) => statSync(path.join(repoRoot, f), { throwIfNoEntry: false })?.mtimeMs ?? 0));
  if (built < newestSource()) {
    execFileSync(process.execPath, ["--import", "tsx", "scripts/build.ts"], { cwd: repoRoot, stdio: ["ignore", "ignore", "inherit"] });
  }
  checkedFresh = true;
}

export interface Spawned {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first output line matching re; rejects on exit or timeout, quoting the output. */
  waitFor: (re: RegExp, timeoutMs?: number) => Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Start an entry point of this repo as a real child process: the API and the runner from their compiled
 * bundles (as production runs them), anything else through tsx. `nodeArgs` go to node itself (--cpu-prof,
 * which NODE_OPTIONS refuses).
 */
export function spawnTs(entry: string, env: Record<string, string | undefined>, args: string[] = [], nodeArgs: string[] = []): Spawned {
  const compiled = COMPILED[entry];
  if (compiled) ensureBuilt();
  const argv = compiled ? [...nodeArgs, compiled, ...args] : [...nodeArgs, "--import", "tsx", entry, ...args];
  const child = spawn(process.execPath, argv, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const listeners = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      resolve({ code, signal });
      for (const l of listeners) l();
    }),
  );
  const waitFor = (re: RegExp, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        const line = out.split("\n").find((l) => re.test(l));
        if (line !== undefined) {
          done();
          resolve(line);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          done();
          reject(new Error(`process exited (${child.exitCode ?? child.signalCode}) before ${re}; output:\n${out}`));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeoutMs} ms waiting for ${re}; output:\n${out}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  return { child, output: () => out, waitFor, exited };
}
