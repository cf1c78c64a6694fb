// Vacuous definitions of done, for the honesty suite's other half: a check is also judged by what it
// refuses to start. Each entry is a goal a client could send whose checks a junk deliverable passes (an
// empty table with the expected header, `{}`, `[]`, an empty text, the input copied through); the
// evaluator's self-test must refuse each before any model call, naming the probe. Beside each task, an
// honest definition of done for the same deliverable and its correct answer, which must not be refused.
// tests/e2e/evaluator/vacuous-done.test.ts sends them all through the API.
import type { CheckSpecInput } from "@loopsmith/schemas";

export interface VacuousTask {
  name: string;
  objective: string;
  inputs: Record<string, string>;
  checkerFiles?: Record<string, string>;
  deliverable: string;
  /** Definitions of done that pass a junk deliverable, by what is wrong with them, and the probe that shows it. */
  vacuous: Record<string, { checks: CheckSpecInput[]; probe: RegExp }>;
  /** A definition of done for the same deliverable that the junk fails. */
  honest: CheckSpecInput[];
  /** Writes the right deliverable (to show that the honest definition is met by a right answer). */
  correct: string;
}

const py = String.raw;

export const VACUOUS: VacuousTask[] = [
  {
    name: "csv cleaning",
    objective: "Clean customers.csv: names in title case without extra spaces, emails in lower case; write clean.csv.",
    inputs: { "customers.csv": "id,name,email\n1, alice  smith ,ALICE@X.COM\n2,bob jones,Bob@Y.org\n" },
    checkerFiles: { "expected.csv": "id,name,email\n1,Alice Smith,alice@x.com\n2,Bob Jones,bob@y.org\n" },
    deliverable: "clean.csv",
    vacuous: {
      "row_count min 0": {
        checks: [{ id: "row_count", params: { artifact: "clean.csv", min: 0 } }],
        probe: /clean\.csv as an empty table with the header "id,name,email" passed every check/,
      },
      "csv_schema requiring only one column": {
        checks: [{ id: "csv_schema", params: { artifact: "clean.csv", columns: ["id"] } }],
        probe: /the input "customers\.csv" copied through to clean\.csv passed every check/,
      },
    },
    honest: [{ id: "csv_matches", params: { artifact: "clean.csv", expected_file: "expected.csv" }, hidden: true }],
    correct: py`import csv, os
with open(os.path.join(os.environ["INPUT_DIR"], "customers.csv"), newline="") as f, open(os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"), "w", newline="") as g:
    w = csv.writer(g, lineterminator="\n")
    w.writerow(["id", "name", "email"])
    for r in csv.DictReader(f):
        w.writerow([r["id"], " ".join(r["name"].split()).title(), r["email"].strip().lower()])
`,
  },
  {
    name: "json report",
    objective: "Sum the amounts of sales.csv per region; write result.json as a list of {region, total}.",
    inputs: { "sales.csv": "region,amount\nNorth,10\nSouth,5\nNorth,2\n" },
    deliverable: "result.json",
    vacuous: {
      "json_schema {}": {
        checks: [{ id: "json_schema", params: { artifact: "result.json", schema: {} } }],
        probe: /result\.json as \{\} passed every check/,
      },
      "json_assert exists at the root": {
        checks: [{ id: "json_assert", params: { artifact: "result.json", pointer: "", op: "exists" } }],
        probe: /result\.json as \{\} passed every check/,
      },
      "json_schema of an array that may be empty": {
        checks: [{ id: "json_schema", params: { artifact: "result.json", schema: { type: "array", items: { type: "object", required: ["region", "total"] } } } }],
        probe: /result\.json as \[\] passed every check/,
      },
    },
    honest: [
      { id: "json_schema", params: { artifact: "result.json", schema: { type: "array", minItems: 1, items: { type: "object", required: ["region", "total"] } } } },
      { id: "json_assert", params: { artifact: "result.json", pointer: "/0/total", op: "eq", value: 12 } },
    ],
    correct: py`import csv, json, os
totals = {}
with open(os.path.join(os.environ["INPUT_DIR"], "sales.csv"), newline="") as f:
    for r in csv.DictReader(f):
        totals[r["region"]] = totals.get(r["region"], 0) + int(r["amount"])
rows = [{"region": k, "total": v} for k, v in sorted(totals.items(), key=lambda kv: -kv[1])]
json.dump(rows, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))
`,
  },
  {
    name: "text answer",
    objective: "Count the words of words.txt; write the number to answer.txt.",
    inputs: { "words.txt": "the cat sat on the mat\n" },
    deliverable: "answer.txt",
    vacuous: {
      'text_matches expected ""': {
        checks: [{ id: "text_matches", params: { artifact: "answer.txt", expected: "" } }],
        probe: /answer\.txt as an empty text passed every check/,
      },
    },
    honest: [{ id: "text_matches", params: { artifact: "answer.txt", expected: "6" } }],
    correct: py`import os
words = open(os.path.join(os.environ["INPUT_DIR"], "words.txt")).read().split()
open(os.path.join(os.environ["OUTPUT_DIR"], "answer.txt"), "w").write(f"{len(words)}\n")
`,
  },
];
