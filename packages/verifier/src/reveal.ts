// What a model may learn from a check's result. A visible check shows everything. A hidden check shows
// its material-free summary and, per finding, as much as its `reveal` allows:
//   verdict: where each difference is;
//   input:   + what the program was given there and what it produced (the default);
//   full:    + what was expected, and the comparison's note.
// The client always sees everything (the goal's own report and tape).
import type { Finding } from "./types";

export const REVEALS = ["full", "input", "verdict"] as const;
export type Reveal = (typeof REVEALS)[number];
export const DEFAULT_REVEAL: Reveal = "input";

const FIELD_MAX = 300;
const FEEDBACK_MAX = 4000;
const FINDINGS_SHOWN = 10;

const clip = (s: string, max = FIELD_MAX) => (s.length > max ? `${s.slice(0, max)}…` : s);

export function renderFinding(f: Finding, reveal: Reveal): string {
  const parts = [clip(f.where)];
  if (reveal !== "verdict") {
    if (f.input !== undefined) parts.push(`input: ${clip(f.input)}`);
    if (f.actual !== undefined) parts.push(`got: ${clip(f.actual)}`);
  }
  if (reveal === "full") {
    if (f.expected !== undefined) parts.push(`expected: ${clip(f.expected)}`);
    if (f.note !== undefined) parts.push(clip(f.note, 1500));
  }
  return parts.join(" | ");
}

export interface Rendered {
  passed: boolean;
  message: string;
  publicMessage?: string;
  findings: Finding[];
}

/** The text a model is given about one check's result. */
export function feedbackFor(result: Rendered, view: { hidden: boolean; reveal: Reveal }): string {
  const reveal: Reveal = view.hidden ? view.reveal : "full";
  const head = view.hidden ? (result.publicMessage ?? (result.passed ? "passed" : "failed")) : result.message;
  const lines = result.findings.slice(0, FINDINGS_SHOWN).map((f) => `  - ${renderFinding(f, reveal)}`);
  const more = result.findings.length > FINDINGS_SHOWN ? [`  - … ${result.findings.length - FINDINGS_SHOWN} more`] : [];
  const text = [head, ...lines, ...more].join("\n");
  return text.length > FEEDBACK_MAX ? `${text.slice(0, FEEDBACK_MAX)}…` : text;
}

/** The whole result for the client: nothing withheld, bounded. */
export function fullMessage(result: Rendered): string {
  return clip(result.message, 2000);
}
