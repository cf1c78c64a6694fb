import { z } from "zod";
import { defineCheck } from "../define";

function lastStderrLine(stderr: string): string | null {
  const lines = stderr.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  const last = lines.at(-1);
  if (last === undefined) return null;
  return last.length > 500 ? `${last.slice(0, 500)}…` : last;
}

export const exitsClean = defineCheck({
  description: "The script exited with code 0, without timing out or being killed for memory. No params.",
  params: z.strictObject({}),
  example: {},
  publicMessages: true,
  run(_params, ctx) {
    // OOM is checked too even though the spec only needs exit 0 and no timeout: a killed run is never clean.
    const passed = ctx.exitCode === 0 && !ctx.timedOut && !ctx.oomKilled;
    if (passed) return { passed, message: "the script exited with code 0", publicMessage: "the script exited with code 0" };
    const how = [
      `exit code ${ctx.exitCode}`,
      ctx.timedOut ? "timed out (killed at the time limit)" : "did not time out",
      ctx.oomKilled ? "OOM-killed (ran out of memory)" : "not OOM-killed",
    ].join(", ");
    const line = lastStderrLine(ctx.stderr);
    const stderr = line === null ? "stderr is empty" : `last stderr line: ${line}`;
    const message = `expected exit code 0 without timeout; found ${how}; ${stderr}`;
    return { passed, message, publicMessage: message };
  },
});
