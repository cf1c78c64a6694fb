// Which engine runtime sandbox containers run under. runc starts them as namespaced processes of the
// host's kernel; runsc (gVisor) puts a kernel of its own, in user space, between the program and the host's:
// a second wall. SANDBOX_RUNTIME names one, or "auto": runsc wherever the engine offers it, else runc.
import type Docker from "dockerode";

/** The setting's value that picks for itself. */
export const AUTO_RUNTIME = "auto";
/** The runtime "auto" prefers. */
export const GVISOR_RUNTIME = "runsc";

/** The runtimes an engine has registered (its /info), and the one it uses when a container names none. */
export interface EngineRuntimes {
  runtimes: string[];
  defaultRuntime: string;
}

export interface OciRuntimeChoice {
  runtime: string;
  /** Why this one, in a sentence (logged once at start-up, shown in /readyz). */
  reason: string;
}

export async function engineRuntimes(docker: Docker): Promise<EngineRuntimes> {
  const info = (await docker.info()) as { Runtimes?: Record<string, unknown>; DefaultRuntime?: string };
  return { runtimes: Object.keys(info.Runtimes ?? {}).sort(), defaultRuntime: info.DefaultRuntime ?? "runc" };
}

/**
 * The runtime for `setting` on an engine that offers `engine`. "auto" takes runsc when offered, else the
 * engine's default; a named runtime the engine lacks is an error (a deployment that asked for gVisor must
 * not quietly run without it).
 */
export function chooseOciRuntime(setting: string, engine: EngineRuntimes): OciRuntimeChoice {
  const offered = engine.runtimes.length > 0 ? engine.runtimes.join(", ") : "none listed";
  if (setting === AUTO_RUNTIME) {
    if (engine.runtimes.includes(GVISOR_RUNTIME)) return { runtime: GVISOR_RUNTIME, reason: `gVisor (runsc), offered by the engine (runtimes: ${offered})` };
    return {
      runtime: engine.defaultRuntime,
      reason: `the engine offers no gVisor runtime (runsc), so ${engine.defaultRuntime}: runtimes ${offered}; register runsc for a second wall (docs/sandbox.md)`,
    };
  }
  if (!engine.runtimes.includes(setting)) throw new Error(`SANDBOX_RUNTIME=${setting}: the Docker engine has no such runtime (runtimes: ${offered})`);
  return { runtime: setting, reason: `SANDBOX_RUNTIME=${setting}` };
}
