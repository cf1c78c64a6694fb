// Goals whose (scripted) program is fixed, for judging the check library through the public API: the
// program really runs, the checks really run, and an inspector that always says "verified" shows that a
// model's opinion never gets a wrong program through.

export interface CheckedGoal {
  objective?: string;
  checks: unknown[];
  inputs?: { name: string; text: string }[];
  checker_files?: { name: string; text: string }[];
  /** Omitted: the API's default (result.json). */
  deliverable?: string | null;
  program: string;
  filename?: string;
  /** A program that should never end: the time limit. */
  timeoutSeconds?: number;
}

export function checkedGoal(g: CheckedGoal) {
  const script = {
    plan: { objective: g.objective ?? "checked goal", approach: ["do it"], output_contract: "see the checks", checks: [] },
    generate: { filename: g.filename ?? "solution.py", language: "python", source: g.program, notes: "" },
    inspect: [{ verified: true, failing_checks: [], diagnosis: "looks done", fix_hint: "" }],
    refine: [],
  };
  return {
    objective: g.objective ?? "A goal judged by the check library.",
    checks: g.checks,
    inputs: g.inputs ?? [],
    checker_files: g.checker_files ?? [],
    ...(g.deliverable !== undefined ? { deliverable: g.deliverable } : {}),
    max_attempts: 1,
    execution_timeout_seconds: g.timeoutSeconds ?? 30,
    model: { provider: "scripted", script },
  };
}
