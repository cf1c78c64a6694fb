import type { VerifyContext } from "../types";

/**
 * Why a check that runs code has no run of its own to judge, when the program's run explains it: the
 * runner makes no check runs after a program run that timed out or ran out of memory (there is nothing
 * to test). Saying so points the refiner at the real failure; "not run" alone sent it looking for a
 * missing file (issue 27). Undefined when the program's run ended by itself.
 */
export function programRunStopped(ctx: Pick<VerifyContext, "timedOut" | "oomKilled">): string | undefined {
  if (ctx.timedOut) return "the program's own run timed out";
  if (ctx.oomKilled) return "the program's own run ran out of memory";
  return undefined;
}
