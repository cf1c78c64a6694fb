import type { Sandbox } from "@loopsmith/sandbox";

const PROBE = "import pandas, numpy, sys; print('pandas', pandas.__version__, 'numpy', numpy.__version__, 'python', sys.version.split()[0])";

/**
 * Start-up self-check: a fresh container from the sandbox image must import pandas and report back.
 * A runner that cannot do this would fail every goal, so it refuses to take jobs instead.
 */
export async function sandboxSelfCheck(sandbox: Sandbox, timeoutMs: number): Promise<{ output: string; durationMs: number; imageId: string }> {
  // A probe, not a program: it may run beside a goal's first steps, and what ran is counted by purpose.
  const res = await sandbox.run({ files: [], command: ["python3", "-c", PROBE], timeoutMs, purpose: "probe" });
  if (res.exitCode !== 0 || !res.stdout.startsWith("pandas ")) {
    throw new Error(
      `sandbox self-check failed: exit ${res.exitCode}${res.timedOut ? " (timed out)" : ""}; stdout=${JSON.stringify(res.stdout.slice(0, 500))} stderr=${JSON.stringify(res.stderr.slice(-2000))}`,
    );
  }
  return { output: res.stdout.trim(), durationMs: res.durationMs, imageId: res.imageId };
}
