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
  /** result.json as text, when the run wrote one. */
  result: string | null;
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
    `result.json:\n\`\`\`\n${run.result === null ? "(not written)" : clip(run.result, 4000)}\n\`\`\``,
  ].join("\n");
}
