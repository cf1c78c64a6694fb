// The running example: a messy sales.csv and a scripted model whose first program crashes on the
// currency strings, whose second leaks a blank region as a "NaN" key, and whose third is right. The
// model supplies only these texts; the sandbox really runs each program and the verifier really checks
// each result. Shared by `npm run demo` and the end-to-end tests.

import type { ScriptedScriptInput } from "@loopsmith/schemas";

/** Revenue as currency strings, blank regions, a padded region name, mixed date formats. */
export const SALES_CSV = `order_id,date,region,product,revenue
1001,2024-01-05,North,Widget,"$1,299.00"
1002,01/07/2024,South,Gadget,"$4,200.00"
1003,Jan 9 2024,East,Widget,"$2,212.25"
1004,2024-01-12,West,Gizmo,"$5,131.00"
1005,2024-01-15,,Widget,$450.00
1006,01/18/2024,North,Gadget,"$2,450.50"
1007,2024-01-20, North ,Gizmo,"$3,100.40"
1008,Jan 22 2024,South,Widget,"$1,352.50"
1009,2024-01-25,East,Gadget,"$1,500.00"
1010,01/27/2024,West,Widget,$999.99
1011,2024-01-29,North,Widget,$875.00
1012,Feb 1 2024,,Gizmo,$89.95
1013,2024-02-03,East,Gizmo,"$3,500.00"
1014,02/05/2024,South,Gizmo,"$3,000.00"
1015,2024-02-07,West,Gadget,"$2,500.01"
1016,Feb 9 2024,North,Widget,"$3,025.00"
`;

/** What a correct program must report (and what the demo prints from the program that really ran). */
export const EXPECTED_REPORT = {
  by_region: { North: 10749.9, South: 8552.5, East: 7212.25, West: 8631.0 },
  total_revenue: 35145.65,
  top_region: "North",
  top_region_share: 0.3059,
};

export const EXPECTED_TAPE =
  "plan → generate → execute → inspect → refine → execute → inspect → refine → execute → inspect → verified";

const HEADER = `import json
import os

import pandas as pd

df = pd.read_csv(os.environ["INPUT_PATH"], dtype=str)
`;

const WRITE = `
total = round(sum(by_region.values()), 2)
top = max(by_region, key=by_region.get)
result = {
    "by_region": by_region,
    "total_revenue": total,
    "top_region": top,
    "top_region_share": round(by_region[top] / total, 4),
}
with open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w") as f:
    json.dump(result, f, indent=2)
print(json.dumps(result))
`;

/** Attempt 1: treats revenue as a number and dies on "$1,299.00". */
export const SCRIPT_CRASHES = `${HEADER}df["revenue"] = df["revenue"].astype(float)
df["region"] = df["region"].str.strip()
by_region = {k: round(v, 2) for k, v in df.groupby("region", sort=False)["revenue"].sum().items()}
${WRITE}`;

/** Attempt 2: parses the currency but keeps blank regions, which pandas groups under NaN. */
export const SCRIPT_LEAKS_BLANK = `${HEADER}df["revenue"] = df["revenue"].str.replace(r"[$,]", "", regex=True).astype(float)
df["region"] = df["region"].str.strip()
sums = df.groupby("region", sort=False, dropna=False)["revenue"].sum()
by_region = {str(k): round(v, 2) for k, v in sums.items()}
${WRITE}`;

/** Attempt 3: drops rows without a region before grouping. */
export const SCRIPT_CORRECT = `${HEADER}df["revenue"] = df["revenue"].str.replace(r"[$,]", "", regex=True).astype(float)
df["region"] = df["region"].str.strip().replace("", pd.NA)
df = df.dropna(subset=["region"])
sums = df.groupby("region", sort=False)["revenue"].sum()
by_region = {str(k): round(float(v), 2) for k, v in sums.items()}
${WRITE}`;

/** Attempt-3's program with a total that is off by 44.50: every check but reconciles_total passes. */
export const SCRIPT_WRONG_TOTAL = SCRIPT_CORRECT.replace(
  "total = round(sum(by_region.values()), 2)",
  "total = round(sum(by_region.values()) + 44.5, 2)",
);

/** A GeneratedCode answer for the scripted model. */
export const program = (source: string, notes = "") => ({ filename: "analysis.py", language: "python" as const, source, notes });
const code = program;

/** An inspector that says verified (the checks may still veto it). */
export const INSPECT_VERIFIED = { verified: true, failing_checks: [], diagnosis: "Every check passes.", fix_hint: "" };

export const OBJECTIVE =
  "From sales.csv, compute total revenue per region, the overall total, the top region and its share of the total.";

/** The client's binding checks. */
export const CLIENT_CHECKS = [
  { id: "reconciles_total", params: { values_path: "by_region", total_path: "total_revenue", tolerance: 0.01 } },
];

export function demoScript() {
  return {
    plan: {
      objective: OBJECTIVE,
      approach: [
        "Read sales.csv with every column as text.",
        "Parse revenue strings such as $1,299.00 into numbers.",
        "Trim region names and drop rows whose region is blank.",
        "Sum revenue per region, then the total, the top region and its share (4 decimals).",
      ],
      output_contract:
        '{"by_region": {region: revenue}, "total_revenue": number, "top_region": string, "top_region_share": number}, money rounded to 2 decimals',
      checks: [
        { id: "schema_ok", params: {} },
        { id: "no_null_region", params: {} },
        { id: "top_is_argmax", params: { key_path: "top_region", object_path: "by_region" } },
      ],
    },
    generate: code(SCRIPT_CRASHES, "First version: sum revenue per region."),
    inspect: [
      {
        verified: false,
        failing_checks: ["exits_clean", "artifact_exists", "json_parses"],
        diagnosis: "The script crashed: float() cannot parse '$1,299.00'; revenue holds currency strings.",
        fix_hint: "Strip '$' and ',' from revenue before converting it to float.",
      },
      {
        verified: false,
        failing_checks: ["no_null_region"],
        diagnosis: "Rows with a blank region are grouped under a NaN key in by_region.",
        fix_hint: "Drop rows whose region is blank after trimming, before grouping.",
      },
      { verified: true, failing_checks: [], diagnosis: "Every check passes and the numbers reconcile.", fix_hint: "" },
    ],
    refine: [
      code(SCRIPT_LEAKS_BLANK, "Parse currency strings before summing."),
      code(SCRIPT_CORRECT, "Drop blank regions before grouping."),
    ],
  };
}

/** The demo goal with parts of the scripted model's script replaced. */
export function scriptedGoal(script: Partial<ScriptedScriptInput>, overrides: Record<string, unknown> = {}) {
  return demoGoal({ ...overrides, model: { provider: "scripted", script: { ...demoScript(), ...script } } });
}

/** The POST /goals body of the demo. */
export function demoGoal(overrides: Record<string, unknown> = {}) {
  return {
    objective: OBJECTIVE,
    success: "by_region has one entry per real region, the total reconciles with them, and top_region is the largest.",
    checks: CLIENT_CHECKS,
    inputs: [{ name: "sales.csv", text: SALES_CSV }],
    max_attempts: 5,
    model: { provider: "scripted", script: demoScript() },
    ...overrides,
  };
}
