import type { CheckOutcome, CheckSpec } from "@loopsmith/schemas";
import { RESULT_FILE } from "./contract";

/** Checks every goal carries, whatever the client and the planner say: the program ran and answered in JSON. */
export const BASELINE_CHECKS: CheckSpec[] = [
  { id: "exits_clean", params: {}, kind: "deterministic", description: "The program exits with status 0 in time." },
  { id: "artifact_exists", params: { name: RESULT_FILE }, kind: "deterministic", description: `The program writes ${RESULT_FILE}.` },
  { id: "json_parses", params: { artifact: RESULT_FILE }, kind: "deterministic", description: `${RESULT_FILE} is valid JSON.` },
];

const key = (c: CheckSpec) => `${c.kind}\u0000${c.id}\u0000${stableJson(c.params)}`;

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

/**
 * The checks frozen at the end of PLAN: the baseline, then every client check exactly as given (binding:
 * the planner can neither drop nor weaken them), then the planner's additions. A planner check with the
 * same id as a client check but other params is added beside it, never in its place, so it can only make
 * the definition of done stricter.
 */
export type CheckSource = "baseline" | "client" | "planner";
export type FrozenCheck = CheckSpec & { source: CheckSource };

export function freezeChecks(client: CheckSpec[], planned: CheckSpec[]): FrozenCheck[] {
  const out: FrozenCheck[] = [];
  const seen = new Set<string>();
  const add = (list: CheckSpec[], source: CheckSource) => {
    for (const c of list) {
      const k = key(c);
      if (seen.has(k)) continue;
      seen.add(k);
      out.push({ ...c, source });
    }
  };
  add(BASELINE_CHECKS, "baseline");
  add(client, "client");
  add(planned, "planner");
  return out;
}

export function describeChecks(checks: CheckSpec[]): string {
  return checks
    .map((c) => `- ${c.id} [${c.kind}] params=${JSON.stringify(c.params)}${c.description ? `: ${c.description}` : ""}`)
    .join("\n");
}

export function describeOutcomes(outcomes: CheckOutcome[]): string {
  if (outcomes.length === 0) return "No deterministic checks ran.";
  return outcomes.map((o) => `- ${o.passed ? "PASS" : "FAIL"} ${o.id}: ${o.message}`).join("\n");
}
