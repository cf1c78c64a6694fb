import type { CheckSpec } from "@loopsmith/schemas";
import type { NamedFile, VerifyContext } from "../src/index";

/** The demo's correct summary of sales.csv. */
export const DEMO_RESULT = {
  by_region: { North: 10749.9, South: 8552.5, East: 7212.25, West: 8631.0 },
  total_revenue: 35145.65,
  top_region: "North",
  top_region_share: 0.3059,
};

/** A clean run that returned nothing, with `over` applied. */
export function emptyCtx(over: Partial<VerifyContext> = {}): VerifyContext {
  return {
    exitCode: 0,
    timedOut: false,
    oomKilled: false,
    stdout: "",
    stderr: "",
    durationMs: 10,
    artifacts: [],
    artifactErrors: [],
    inputs: [],
    checkerFiles: [],
    program: null,
    runs: [],
    ...over,
  };
}

/** A clean run that returned `result.json` holding `result` (serialised unless it is already text). */
export function ctxWith(result: unknown, over: Partial<VerifyContext> = {}): VerifyContext {
  const text = typeof result === "string" ? result : JSON.stringify(result);
  return emptyCtx({ artifacts: [{ name: "result.json", content: Buffer.from(text, "utf8") }], ...over });
}

/** A named file (an artifact, an input or a checker file). */
export function file(name: string, text: string | Buffer): NamedFile {
  return { name, content: typeof text === "string" ? Buffer.from(text, "utf8") : text };
}

export function check(id: string, params: Record<string, unknown> = {}): CheckSpec {
  return { id, params, kind: "deterministic", description: "" };
}
