// The reference goals whose exports are the replay fixtures (tests/fixtures/replay, issue 15): the demo
// (scripted model, three attempts) and a CSV-cleaning goal of the check library with a hidden expected file,
// answered by an OpenAI-compatible model (the fake server here) whose inspector says verified too early
// (the veto stops it). `npx tsx scripts/replay/record.ts` records them again.
export const MESSY_ORDERS = `order_id,date,region,revenue
1,2024-01-03,North,"$1,299.00"
2,03/01/2024,south,$250.5
3,2024-01-05,,$99.99
2,03/01/2024,south,$250.5
4,2024-01-07,East,"$1,000"
5,2024-01-08, West ,$12.345
`;

/** The client's hidden answer key. */
export const EXPECTED_ORDERS = `order_id,date,region,revenue
1,2024-01-03,North,1299.00
2,2024-01-03,South,250.50
3,2024-01-05,Unknown,99.99
4,2024-01-07,East,1000.00
5,2024-01-08,West,12.35
`;

const program = (titleCase: boolean) => `import csv, os
from datetime import datetime
rows, seen = [], set()
with open(os.path.join(os.environ["INPUT_DIR"], "orders.csv"), newline="") as f:
    for r in csv.DictReader(f):
        if r["order_id"] in seen:
            continue
        seen.add(r["order_id"])
        d = r["date"]
        if "/" in d:
            d = datetime.strptime(d, "%d/%m/%Y").strftime("%Y-%m-%d")
        region = r["region"].strip()${titleCase ? '.title() or "Unknown"' : ""}
        revenue = float(r["revenue"].replace("$", "").replace(",", ""))
        rows.append([r["order_id"], d, region, "%.2f" % revenue])
with open(os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["order_id", "date", "region", "revenue"])
    w.writerows(rows)
`;

export const CSV_FIRST = program(false);
export const CSV_CORRECT = program(true);

export function csvCleaningGoal() {
  return {
    objective: "Clean orders.csv into clean.csv: one row per order, ISO dates, title-case regions (blank: Unknown), revenue as a number with 2 decimals.",
    inputs: [{ name: "orders.csv", text: MESSY_ORDERS }],
    checker_files: [{ name: "expected.csv", text: EXPECTED_ORDERS }],
    deliverable: "clean.csv",
    checks: [
      { id: "csv_matches", params: { artifact: "clean.csv", expected_file: "expected.csv", row_order: "key", key: ["order_id"], atol: 0.005 } },
      { id: "row_count", params: { artifact: "clean.csv", min: 1 } },
    ],
    max_attempts: 2,
    model: { provider: "openai-compatible" },
  };
}

/** The model's answers to the CSV goal, in the order the loop asks: plan, generate, inspect, refine, inspect. */
export function csvCleaningReplies() {
  const plan = { objective: "clean the orders", approach: ["dedupe", "normalise dates, regions, revenue"], output_contract: "clean.csv", checks: [] };
  const code = (source: string, notes: string) => ({ filename: "clean.py", language: "python", source, notes });
  const verified = { verified: true, failing_checks: [], diagnosis: "looks clean", fix_hint: "" };
  return [plan, code(CSV_FIRST, "first pass"), verified, code(CSV_CORRECT, "title-case regions, blank is Unknown"), verified].map((o) => ({
    content: JSON.stringify(o),
    usage: { prompt_tokens: 400, completion_tokens: 100 },
  }));
}
