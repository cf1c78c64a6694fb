// Compiles the API and the runner to plain JavaScript (one ES module each, plus the runner's check-thread
// entry), so that the processes start without compiling TypeScript: tsx spent about 2 s of every start
// transforming the workspace's sources, and every crash recovery waited on it.
//
// The workspace packages (@loopsmith/*, TypeScript sources) are bundled in; npm dependencies stay
// imports resolved from node_modules at run time (the bundle is not a standalone artefact: it runs inside
// this checkout or the image built from it). Each entry lands at apps/<app>/dist/, three directories below
// the root like packages/<name>/src/, so the paths the sources compute from import.meta.url ("../../..")
// stay right.
//
// Usage: tsx scripts/build.ts        (npm run build; setup.sh and the image run it)
import { build, type Plugin } from "esbuild";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Every bare import but the workspace's own packages stays external. */
const externalDependencies: Plugin = {
  name: "external-dependencies",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith("@loopsmith/")) return undefined;
      return { path: args.path, external: true };
    });
  },
};

export const ENTRIES = {
  "apps/api/dist/server": "apps/api/src/server.ts",
  "apps/runner/dist/main": "apps/runner/src/main.ts",
  "apps/socket-proxy/dist/main": "apps/socket-proxy/src/main.ts",
  // The check pool starts its threads from ./pool-worker.mjs beside the module that runs it: in the
  // runner's bundle that is apps/runner/dist/, so the compiled thread entry lives there too.
  "apps/runner/dist/pool-worker": "packages/verifier/src/pool-worker.ts",
} as const;

export async function buildAll(): Promise<void> {
  const result = await build({
    write: false,
    absWorkingDir: root,
    entryPoints: Object.entries(ENTRIES).map(([out, in_]) => ({ out, in: in_ })),
    outdir: ".",
    outExtension: { ".js": ".mjs" },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    sourcemap: "linked",
    // Stack traces and log lines keep the sources' names.
    keepNames: true,
    plugins: [externalDependencies],
    logLevel: "warning",
    // Bundled CommonJS helpers may call require(); an ES module has none of its own.
    banner: { js: 'import { createRequire as __lsCreateRequire } from "node:module"; const require = __lsCreateRequire(import.meta.url);' },
  });
  // Each file replaced by a rename, and only when it changed: a process starting meanwhile (a test, the
  // docs walkthrough running setup beside the suite) reads the old bundle or the new one, never half of one.
  for (const file of result.outputFiles) {
    const current = existsSync(file.path) ? readFileSync(file.path) : undefined;
    if (current?.equals(file.contents)) continue;
    mkdirSync(path.dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
  }
  // When the sources were last compiled (an unchanged bundle keeps its own time): scripts/lib/proc.ts
  // rebuilds when a source is newer than this.
  writeFileSync(path.join(root, BUILD_STAMP), `${new Date().toISOString()}\n`);
}

export const BUILD_STAMP = "apps/runner/dist/.built";

/** What the console's build reads: its sources, and the workspace code it bundles. */
const CONSOLE_SOURCES = ["apps/console/src", "apps/console/index.html", "apps/console/vite.config.ts", "packages/client/src", "packages/receipts/src/canonical-json.ts"];
const CONSOLE_DIST = "apps/console/dist";

function newestMtime(p: string): number {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(s.mtimeMs, ...readdirSync(p).map((f) => newestMtime(path.join(p, f))));
}

/**
 * The console (apps/console) built by Vite into apps/console/dist, which the API serves under /console/.
 * Skipped when the build is newer than every source; otherwise built beside and swapped in, so that an
 * API serving the old build never sees half of the new one.
 */
export async function buildConsole(): Promise<boolean> {
  const dist = path.join(root, CONSOLE_DIST);
  const stamp = path.join(dist, "index.html");
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= Math.max(...CONSOLE_SOURCES.map((p) => newestMtime(path.join(root, p))))) return false;
  const { build: viteBuild } = await import("vite");
  const tmp = `${dist}.${process.pid}.tmp`;
  await viteBuild({ root: path.join(root, "apps/console"), configFile: path.join(root, "apps/console/vite.config.ts"), logLevel: "warn", build: { outDir: tmp, emptyOutDir: true } });
  const old = `${dist}.${process.pid}.old`;
  if (existsSync(dist)) renameSync(dist, old);
  renameSync(tmp, dist);
  rmSync(old, { recursive: true, force: true });
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = performance.now();
  await buildAll();
  const consoleBuilt = await buildConsole();
  console.log(`[build] apps/api/dist, apps/runner/dist, apps/socket-proxy/dist${consoleBuilt ? ", apps/console/dist" : ""} in ${Math.round(performance.now() - started)} ms`);
}
