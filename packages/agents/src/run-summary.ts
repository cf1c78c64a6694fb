import { clip } from "./contract";

/** What the agents are told about one execution: the real run, as the sandbox reported it. */
export interface RunSummary {
  attempt: number;
  exitCode: number;
  timedOut: boolean;
  oomKilled: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
  artifacts: { name: string; size: number }[];
  /** The deliverable as the program wrote it: its name and text (null when it is not text or was not written). */
  deliverable: { name: string; text: string | null } | null;
}

export function describeRun(run: RunSummary): string {
  const status = run.timedOut
    ? `killed at the wall-clock limit after ${run.durationMs} ms (exit code ${run.exitCode})`
    : run.oomKilled
      ? `killed for exceeding the memory limit (exit code ${run.exitCode})`
      : `exit code ${run.exitCode} after ${run.durationMs} ms`;
  return [
    `Attempt ${run.attempt}: ${status}.`,
    `Files written: ${run.artifacts.length ? run.artifacts.map((a) => `${a.name} (${a.size} bytes)`).join(", ") : "none"}.`,
    `stdout:\n\`\`\`\n${clip(run.stdout, 2000) || "(empty)"}\n\`\`\``,
    `stderr:\n\`\`\`\n${clip(run.stderr, 4000) || "(empty)"}\n\`\`\``,
    ...(run.deliverable === null
      ? []
      : [`${run.deliverable.name}:\n\`\`\`\n${run.deliverable.text === null ? "(not written, or not UTF-8 text)" : clip(run.deliverable.text, 4000) || "(empty)"}\n\`\`\``]),
  ].join("\n");
}
