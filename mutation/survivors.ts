// The mutants a target's tests let through: `npx tsx mutation/survivors.ts <target> [--all]`. Reads
// reports/mutation/<target>.json (written by `npm run mutate <target>`) and prints one line per surviving
// (and uncovered) mutant as file:line:col, the mutator, and the exact replacement text, because a line
// number alone misleads when one line holds several mutants. `--all` also prints timeouts and errors.
import { readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { repoRoot } from "../scripts/lib/proc";

interface Position {
  line: number;
  column: number;
}
interface Mutant {
  id: string;
  mutatorName: string;
  replacement?: string;
  status: string;
  location: { start: Position; end: Position };
}

const [target, flag] = process.argv.slice(2);
if (!target) {
  console.error("usage: tsx mutation/survivors.ts <target> [--all]");
  process.exit(2);
}
const report = JSON.parse(readFileSync(join(repoRoot, "reports", "mutation", `${target}.json`), "utf8")) as {
  files: Record<string, { source: string; mutants: Mutant[] }>;
};
const shown = flag === "--all" ? ["Survived", "NoCoverage", "Timeout", "RuntimeError", "CompileError"] : ["Survived", "NoCoverage"];
const oneLine = (s: string) => (s.length > 160 ? `${s.slice(0, 157)}...` : s).replace(/\s*\n\s*/g, " ⏎ ");
let total = 0;
for (const [path, f] of Object.entries(report.files)) {
  const lines = f.source.split("\n");
  const ms = f.mutants
    .filter((m) => shown.includes(m.status))
    .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column);
  for (const m of ms) {
    const { start, end } = m.location;
    const original =
      start.line === end.line
        ? (lines[start.line - 1] ?? "").slice(start.column - 1, end.column - 1)
        : `${(lines[start.line - 1] ?? "").slice(start.column - 1)}...`;
    const rel = path.startsWith("/") ? relative(repoRoot, path) : path;
    console.log(`${rel}:${start.line}:${start.column} ${m.status} ${m.mutatorName}: ${oneLine(original)}  ->  ${oneLine(m.replacement ?? "?")}`);
    total++;
  }
}
console.log(`${total} mutant(s)`);
