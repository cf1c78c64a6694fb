import type { CheckOutcome, CheckSpec, FrozenCheck } from "@loopsmith/schemas";
import { checkerFilesOf, publicCheck, visibilityOf } from "@loopsmith/verifier";

/**
 * Checks every goal carries, whatever the client and the planner say: the program ran cleanly and, when
 * the goal delivers a file, left it (and a JSON deliverable parses).
 */
export function baselineChecks(deliverable: string | null): CheckSpec[] {
  const checks: CheckSpec[] = [{ id: "exits_clean", params: {}, kind: "deterministic", description: "The program exits with status 0 in time." }];
  if (deliverable === null) return checks;
  checks.push({ id: "artifact_exists", params: { name: deliverable }, kind: "deterministic", description: `The program writes ${deliverable}.` });
  if (deliverable.endsWith(".json")) {
    checks.push({ id: "json_parses", params: { artifact: deliverable }, kind: "deterministic", description: `${deliverable} is valid JSON.` });
  }
  return checks;
}

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

export type CheckSource = FrozenCheck["source"];
export type { FrozenCheck };

export interface Frozen {
  checks: FrozenCheck[];
  /** Planner checks left out, and why (on the tape). */
  dropped: { id: string; reason: string }[];
}

/**
 * The checks frozen at the end of PLAN: the baseline, then every client check exactly as given (binding:
 * the planner can neither drop nor weaken them), then the planner's additions. A planner check with the
 * same id as a client check but other params is added beside it, never in its place, so it can only make
 * the definition of done stricter. A planner check that names a checker file is dropped: the planner's
 * checks are visible, and their messages would show the models the client's hidden material.
 */
export function freezeChecks(client: CheckSpec[], planned: CheckSpec[], deliverable: string | null = "result.json"): Frozen {
  const checks: FrozenCheck[] = [];
  const dropped: Frozen["dropped"] = [];
  const seen = new Set<string>();
  const add = (list: CheckSpec[], source: CheckSource) => {
    for (const c of list) {
      const k = key(c);
      if (seen.has(k)) continue;
      if (source === "planner" && checkerFilesOf(c).length > 0) {
        dropped.push({ id: c.id, reason: "a planner check may not read the client's checker files" });
        continue;
      }
      seen.add(k);
      // The planner's checks are never hidden: a model wrote them.
      const { hidden, reveal } = source === "planner" ? { hidden: false, reveal: "full" as const } : visibilityOf(c);
      checks.push({ ...c, source, hidden, reveal });
    }
  };
  add(baselineChecks(deliverable), "baseline");
  add(client, "client");
  add(planned.map((c) => ({ id: c.id, params: c.params, kind: c.kind, description: c.description })), "planner");
  return { checks, dropped };
}

/** The checks as a model may see them: hidden checks by what they read, never by their material. */
export function describeChecks(checks: CheckSpec[]): string {
  return checks
    .map((c) => {
      const v = publicCheck(c);
      const tag = v.hidden ? `${c.kind}, hidden: its expected values are not shown to you` : c.kind;
      return `- ${v.id} [${tag}] params=${JSON.stringify(v.params)}${v.description ? `: ${v.description}` : ""}`;
    })
    .join("\n");
}

/** Check results as a model may see them (each outcome's feedback, never a hidden check's material). */
export function describeOutcomes(outcomes: CheckOutcome[]): string {
  if (outcomes.length === 0) return "No deterministic checks ran.";
  return outcomes.map((o) => `- ${o.passed ? "PASS" : "FAIL"} ${o.id}${o.hidden ? " (hidden check)" : ""}: ${o.feedback}`).join("\n");
}
