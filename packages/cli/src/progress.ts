// What a person watching a goal sees on stderr: one line per state change, with the attempt, the time
// since the goal was submitted and the spend so far. Pure: rows and numbers in, text out.

export interface TapeRow {
  seq: number;
  from: string | null;
  to: string;
  at: string;
  detail?: Record<string, unknown>;
}

export interface ProgressState {
  /** Executions seen so far: entering execute starts attempt k. */
  attempt: number;
}

export function progressLine(row: TapeRow, o: { state: ProgressState; maxAttempts: number; createdAt: string; costUsd: number | null }): string {
  if (row.to === "execute") o.state.attempt++;
  const elapsed = Math.max(0, (Date.parse(row.at) - Date.parse(o.createdAt)) / 1000);
  const move = row.from === null ? row.to : `${row.from} → ${row.to}`;
  const parts = [`[${elapsed.toFixed(1).padStart(6)}s]`, move.padEnd(22)];
  if (o.state.attempt > 0) parts.push(`attempt ${o.state.attempt}/${o.maxAttempts}`);
  if (o.costUsd !== null) parts.push(`spend $${o.costUsd.toFixed(4)}`);
  const note = noteFor(row);
  if (note) parts.push(`· ${note}`);
  return parts.join("  ");
}

/** The one fact worth a glance on the row, when there is one. */
function noteFor(row: TapeRow): string | null {
  const d = row.detail ?? {};
  if (row.from === "execute" && typeof d.exit_code === "number") return `exit ${d.exit_code}${d.timed_out ? " (timed out)" : ""}`;
  if (row.to === "failed" && typeof d.reason === "string") return `reason ${d.reason}`;
  if (row.to === "awaiting_approval") return "waiting for approval: loopsmith goals approve|reject GOAL";
  if (row.to === "errored" && typeof d.error === "string") return `error ${d.error.slice(0, 120)}`;
  return null;
}

/** The exit code for the state a followed goal rests in (EXIT in args.ts): 0 verified, 1 failed or cancelled, 7 waiting for a decision, 6 parked in errored. */
export function exitCodeFor(state: string): 0 | 1 | 6 | 7 {
  if (state === "verified") return 0;
  if (state === "failed" || state === "cancelled") return 1;
  if (state === "awaiting_approval") return 7;
  return 6;
}
