// Replay comparison (issue 15): two runs of one goal (the original and its replay, or a fixture and
// today's run) side by side, naming what changed. Pure: it reads what GET /goals/:id returns (state, tape,
// transitions) or an export's `original`, nothing else. Timestamps, ids, durations and the sandbox image
// id are the machine's, not the goal's: they are not differences (the image id is reported as a note).
import { tapeString } from "@loopsmith/machine";
import { restoreHidden, type HiddenMessage } from "./script";

export interface RunSide {
  state: string;
  failure_reason?: string | null;
  transitions: { from: string | null; to: string; detail: Record<string, unknown> }[];
  /** An export's hidden messages (issue 27): put back in place before comparing. */
  hidden_messages?: HiddenMessage[];
}

export interface CheckChange {
  attempt: number;
  /** Position in the frozen check list (ids may repeat with other params). */
  index: number;
  id: string;
  original: boolean | null;
  replayed: boolean | null;
  original_message: string | null;
  replayed_message: string | null;
}

export interface TransitionChange {
  /** Position on the tape (0-based). */
  index: number;
  step: string;
  field: string;
  original: unknown;
  replayed: unknown;
}

export interface Comparison {
  same: boolean;
  state: { original: string; replayed: string } | null;
  failure_reason: { original: string | null; replayed: string | null } | null;
  tape: { original: string; replayed: string } | null;
  transitions: TransitionChange[];
  checks: CheckChange[];
  /** Environment differences that are not the goal's (e.g. another sandbox image). */
  notes: string[];
}

type Detail = Record<string, unknown>;
const str = (v: unknown) => (typeof v === "string" ? v : null);

/** The part of a transition's detail that the goal's own behaviour decides. */
export function signature(t: RunSide["transitions"][number]): Record<string, unknown> {
  const d: Detail = t.detail ?? {};
  const sig: Record<string, unknown> = {};
  const put = (k: string, v: unknown) => {
    if (v !== undefined) sig[k] = v;
  };
  if (t.from === "plan") put("checks", d.checks);
  if (t.from === "generate" || t.from === "refine") put("program", (d.code as Detail | undefined)?.source);
  if (t.from === "execute") {
    put("exit_code", d.exit_code);
    put("timed_out", d.timed_out);
    put("oom_killed", d.oom_killed);
    put("script_sha256", d.script_sha256);
    put("artifacts", Array.isArray(d.artifacts) ? (d.artifacts as Detail[]).map((a) => `${String(a.name)}:${String(a.sha256)}`) : undefined);
    put("artifact_errors", d.artifact_errors);
  }
  if (t.from === "inspect") {
    put("checks_passed", d.checks_passed);
    put("inspector_verified", (d.inspection as Detail | undefined)?.verified);
    put("inspector_overruled", d.inspector_overruled);
  }
  if (t.to === "failed") put("reason", d.reason);
  return sig;
}

/** Per attempt, per frozen check: passed or not, from the INSPECT rows of the tape. */
export function checkResults(side: RunSide): Map<string, { attempt: number; index: number; id: string; passed: boolean; message: string | null }> {
  const out = new Map<string, { attempt: number; index: number; id: string; passed: boolean; message: string | null }>();
  for (const t of side.transitions) {
    if (t.from !== "inspect" || !Array.isArray(t.detail?.checks)) continue;
    const attempt = typeof t.detail.attempt === "number" ? t.detail.attempt : 0;
    (t.detail.checks as Detail[]).forEach((c, index) => {
      const id = String(c.id);
      out.set(`${attempt}:${index}:${id}`, { attempt, index, id, passed: c.passed === true, message: str(c.message) });
    });
  }
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const tapeOf = (s: RunSide) => tapeString(s.transitions.map((t) => t.to));

export function compareRuns(originalSide: RunSide, replayedSide: RunSide): Comparison {
  const original = restoreHidden(originalSide);
  const replayed = restoreHidden(replayedSide);
  const transitions: TransitionChange[] = [];
  const n = Math.min(original.transitions.length, replayed.transitions.length);
  for (let i = 0; i < n; i++) {
    const a = original.transitions[i]!;
    const b = replayed.transitions[i]!;
    const step = `${a.from ?? "∅"} → ${a.to}`;
    if (a.from !== b.from || a.to !== b.to) {
      transitions.push({ index: i, step, field: "move", original: `${a.from} → ${a.to}`, replayed: `${b.from} → ${b.to}` });
      break;
    }
    const sa = signature(a);
    const sb = signature(b);
    for (const k of new Set([...Object.keys(sa), ...Object.keys(sb)])) {
      if (!same(sa[k], sb[k])) transitions.push({ index: i, step, field: k, original: sa[k] ?? null, replayed: sb[k] ?? null });
    }
  }

  const ca = checkResults(original);
  const cb = checkResults(replayed);
  const checks: CheckChange[] = [];
  for (const key of new Set([...ca.keys(), ...cb.keys()])) {
    const a = ca.get(key);
    const b = cb.get(key);
    if (a && b && a.passed === b.passed) continue;
    const any = (a ?? b)!;
    checks.push({
      attempt: any.attempt,
      index: any.index,
      id: any.id,
      original: a?.passed ?? null,
      replayed: b?.passed ?? null,
      original_message: a?.message ?? null,
      replayed_message: b?.message ?? null,
    });
  }
  checks.sort((x, y) => x.attempt - y.attempt || x.index - y.index);

  const notes: string[] = [];
  const images = (s: RunSide) => [...new Set(s.transitions.filter((t) => t.from === "execute").map((t) => str(t.detail?.image_id)).filter(Boolean))];
  if (!same(images(original), images(replayed))) notes.push(`sandbox image: ${images(original).join(", ") || "none"} → ${images(replayed).join(", ") || "none"}`);

  const stateChanged = original.state !== replayed.state;
  const reasonChanged = (original.failure_reason ?? null) !== (replayed.failure_reason ?? null);
  const tapeChanged = tapeOf(original) !== tapeOf(replayed);
  return {
    same: !stateChanged && !reasonChanged && !tapeChanged && transitions.length === 0 && checks.length === 0,
    state: stateChanged ? { original: original.state, replayed: replayed.state } : null,
    failure_reason: reasonChanged ? { original: original.failure_reason ?? null, replayed: replayed.failure_reason ?? null } : null,
    tape: tapeChanged ? { original: tapeOf(original), replayed: tapeOf(replayed) } : null,
    transitions,
    checks,
    notes,
  };
}

const clip = (v: unknown, n = 120) => {
  const s = typeof v === "string" ? v : JSON.stringify(v);
  return s.length > n ? `${s.slice(0, n)}…` : s;
};

/** The comparison as lines for a terminal. */
export function describeComparison(c: Comparison): string[] {
  if (c.same) return ["same state, tape and check results", ...c.notes.map((n) => `note: ${n}`)];
  const lines: string[] = [];
  if (c.state) lines.push(`state: ${c.state.original} → ${c.state.replayed}`);
  if (c.failure_reason) lines.push(`failure reason: ${c.failure_reason.original} → ${c.failure_reason.replayed}`);
  if (c.tape) lines.push(`tape was:   ${c.tape.original}`, `tape now:   ${c.tape.replayed}`);
  for (const ch of c.checks) {
    const v = (p: boolean | null) => (p === null ? "not run" : p ? "pass" : "FAIL");
    lines.push(`check ${ch.id} (attempt ${ch.attempt}, #${ch.index}): ${v(ch.original)} → ${v(ch.replayed)}${ch.replayed_message ? `: ${clip(ch.replayed_message)}` : ""}`);
  }
  for (const t of c.transitions) lines.push(`step ${t.index} (${t.step}) ${t.field}: ${clip(t.original, 60)} → ${clip(t.replayed, 60)}`);
  return [...lines, ...c.notes.map((n) => `note: ${n}`)];
}
