// Metrics around the runner's effects, as wrappers: the sandbox package and the state handlers stay free
// of monitoring code.
import type { Metrics, SandboxOutcome } from "@loopsmith/core";
import type { RunResult, Sandbox } from "@loopsmith/sandbox";

export function sandboxOutcome(r: Pick<RunResult, "exitCode" | "timedOut" | "oomKilled" | "aborted">): SandboxOutcome {
  if (r.aborted) return "aborted";
  if (r.timedOut) return "timeout";
  if (r.oomKilled) return "oom";
  return r.exitCode === 0 ? "exit_zero" : "exit_nonzero";
}

/** The sandbox, with each run's duration and outcome reported (a run that throws is an "error"). */
export function instrumentSandbox(sandbox: Sandbox, metrics: Metrics): Sandbox {
  return {
    get image() {
      return sandbox.image;
    },
    get ociRuntime() {
      return sandbox.ociRuntime;
    },
    async run(req) {
      const started = performance.now();
      const seconds = () => (performance.now() - started) / 1000;
      try {
        const result = await sandbox.run(req);
        metrics.sandboxRun({ outcome: sandboxOutcome(result), seconds: seconds() });
        return result;
      } catch (e) {
        metrics.sandboxRun({ outcome: "error", seconds: seconds() });
        throw e;
      }
    },
  };
}
