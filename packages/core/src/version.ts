import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// Source layout: packages/core/src/version.ts -> repository root three levels up.
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/**
 * Which LoopSmith this is, for the provenance of every goal: "git:<commit>" when the code runs from a git
 * checkout ("-dirty" appended when tracked files differ from that commit, since then the commit alone does
 * not say what ran), else `configured` (LOOPSMITH_VERSION, for images built without .git), else
 * "package:<version>" from the root package.json. Runs git, so entry points call it once at start-up.
 */
export function loopsmithVersion(opts: { configured?: string; repoRoot?: string } = {}): string {
  const root = opts.repoRoot ?? REPO_ROOT;
  const commit = opts.repoRoot === undefined ? ownCommit() : gitCommit(root);
  if (commit) return `git:${commit}`;
  if (opts.configured) return opts.configured;
  try {
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version?: unknown };
    if (typeof pkg.version === "string") return `package:${pkg.version}`;
  } catch {
    // no package.json to read: say so below
  }
  return "unknown";
}

// This checkout's commit, asked once per process: three git commands (a status of the whole tree among
// them) cost 0.2-0.7 s, and an entry point's answer at start-up is the one its provenance records anyway.
let own: { commit: string | undefined } | undefined;
function ownCommit(): string | undefined {
  own ??= { commit: gitCommit(REPO_ROOT) };
  return own.commit;
}

function gitCommit(root: string): string | undefined {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8", timeout: 10_000, stdio: ["ignore", "pipe", "ignore"] }).trim();
  try {
    // Only this checkout counts: a directory inside some other repository is not a LoopSmith commit.
    if (path.resolve(git("rev-parse", "--show-toplevel")) !== path.resolve(root)) return undefined;
    const head = git("rev-parse", "HEAD");
    if (!/^[0-9a-f]{40,64}$/.test(head)) return undefined;
    return git("status", "--porcelain", "--untracked-files=no") === "" ? head : `${head}-dirty`;
  } catch {
    // git missing, not a repository, or no commit yet
    return undefined;
  }
}
