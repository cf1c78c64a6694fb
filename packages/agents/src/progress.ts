// The progress guard: each attempt's outcome is hashed from what would make the next attempt different
// (the program, normalised; which checks failed; how the run failed). The same hash again and again
// means the loop is going round in circles, whatever the refiner says.
import { createHash } from "node:crypto";

/** Python source without comments and whitespace: a reformatted or re-commented script is the same script. */
export function normaliseScript(source: string): string {
  const code = source
    .split("\n")
    .map((line) => stripComment(line))
    .join("");
  // Stryker disable next-line Regex: equivalent; removing runs of whitespace or each whitespace character is the same
  return code.replace(/\s+/g, "");
}

// A '#' starts a comment unless it is inside a string literal on that line.
function stripComment(line: string): string {
  let quote: string | null = null;
  // Stryker disable next-line EqualityOperator: equivalent; one step past the end reads undefined, which matches no branch
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "#") return line.slice(0, i);
  }
  return line;
}

/** How a run failed, coarsely: the Python exception class, timeout, OOM, an exit code, or ok. */
export function errorClass(run: { exitCode: number; timedOut: boolean; oomKilled: boolean; stderr: string }): string {
  if (run.timedOut) return "timeout";
  if (run.oomKilled) return "oom";
  if (run.exitCode === 0) return "ok";
  // Stryker disable next-line MethodExpression: equivalent; only trailing blank lines differ, and a blank line names no class
  const lines = run.stderr.trimEnd().split("\n").reverse();
  for (const l of lines) {
    const m = /^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt))\b/.exec(l.trim());
    if (m) return m[1]!;
  }
  return `exit_${run.exitCode}`;
}

export function outcomeHash(o: { script: string; failingChecks: string[]; errorClass: string }): string {
  const failing = [...new Set(o.failingChecks)].sort();
  return createHash("sha256")
    .update(JSON.stringify([normaliseScript(o.script), failing, o.errorClass]))
    .digest("hex")
    .slice(0, 16);
}

/**
 * Stuck when `current` appears at least `repeats` times among the last `window` outcomes (this one
 * included). Returns the repeating hashes (one per occurrence) or null.
 */
export function stuckHashes(previous: string[], current: string, repeats: number, window: number): string[] | null {
  // slice(-0) would be the whole list: a window of one is this outcome alone.
  // Stryker disable next-line ArrayDeclaration: equivalent; a placeholder never equals a 16-hex hash, and only equal hashes count
  const earlier = window > 1 ? previous.slice(-(window - 1)) : [];
  const recent = [...earlier, current];
  const same = recent.filter((h) => h === current);
  return same.length >= repeats ? same : null;
}
