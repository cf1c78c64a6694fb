// The worked examples of the check catalogue stay true: each JSON body under "Worked examples" in
// docs/checks.md (the README's until issue 28 moved it there) is posted as written (plus a scripted model
// whose program is a correct solution) and must be verified; a wrong program for the same body must not be.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLoop, type Loop } from "../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ shared: true });
});
afterAll(async () => {
  await loop?.close();
});

const page = readFileSync(new URL("../../docs/checks.md", import.meta.url), "utf8");
/** The section under the "Worked examples" heading, up to the next heading of its level or above. */
function workedExamples(markdown: string): string {
  const start = markdown.search(/^#{1,6} Worked examples$/m);
  if (start < 0) throw new Error('docs/checks.md has no "Worked examples" heading');
  const section = markdown.slice(start);
  const level = /^#+/.exec(section)![0].length;
  const headingEnd = section.indexOf("\n");
  const end = section.slice(headingEnd).search(new RegExp(`\\n#{1,${level}} `));
  return end < 0 ? section : section.slice(0, headingEnd + end);
}
const examples = [...workedExamples(page).matchAll(/```json\n([\s\S]*?)\n```/g)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>);

// A correct and a wrong program for each example, in page order.
const PROGRAMS: { filename: string; right: string; wrong: string }[] = [
  {
    filename: "clean.py",
    right: `import csv, os
from datetime import datetime
rows, seen = [], set()
for r in csv.DictReader(open(os.environ["INPUT_PATH"], newline="")):
    if r["order_id"] in seen:
        continue
    seen.add(r["order_id"])
    d = r["date"]
    if "/" in d:
        d = datetime.strptime(d, "%d/%m/%Y").strftime("%Y-%m-%d")
    rows.append([r["order_id"], d, "%.2f" % float(r["revenue"].replace("$", "").replace(",", ""))])
w = csv.writer(open(os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"), "w", newline=""))
w.writerow(["order_id", "date", "revenue"])
w.writerows(rows)
`,
    wrong: `import os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "clean.csv"), "w").write("order_id,date,revenue\\n1,2024-01-03,1299.00\\n2,03/01/2024,250.50\\n")\n`,
  },
  {
    filename: "solution.py",
    right: "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
    wrong: "def fib(n):\n    a, b = 0.0, 1.0\n    for _ in range(n):\n        a, b = b, a + b\n    return int(a)\n",
  },
  {
    filename: "slugify_lib.py",
    right: "import re\n\ndef slugify(text):\n    return '-'.join(re.findall(r'[a-z0-9]+', text.lower()))\n",
    wrong: "def slugify(text):\n    return '-'.join(text.lower().split())\n",
  },
  {
    filename: "report.py",
    right: `import csv, json, os
by, rows = {}, 0
for r in csv.DictReader(open(os.environ["INPUT_PATH"])):
    rows += 1
    by[r["region"]] = by.get(r["region"], 0) + int(r["units"]) * float(r["price"])
json.dump({"by_region": by, "rows": rows}, open(os.path.join(os.environ["OUTPUT_DIR"], "report.json"), "w"))
`,
    wrong: `import json, os\njson.dump({"by_region": {"North": 10.0, "South": 12.5}, "rows": 2}, open(os.path.join(os.environ["OUTPUT_DIR"], "report.json"), "w"))\n`,
  },
];

const withProgram = (body: Record<string, unknown>, filename: string, source: string) => ({
  ...body,
  max_attempts: 1,
  model: {
    provider: "scripted",
    script: {
      plan: { objective: "example", approach: ["solve"], output_contract: "as the checks say", checks: [] },
      generate: { filename, language: "python", source, notes: "" },
      inspect: [{ verified: true, failing_checks: [], diagnosis: "", fix_hint: "" }],
    },
  },
});

describe("docs/checks.md worked examples", () => {
  it("there are four, one per family", () => {
    expect(examples).toHaveLength(PROGRAMS.length);
  });
  examples.forEach((body, i) => {
    it(`example ${i + 1} (${String(body.objective).slice(0, 40)}…): verified for a right program, not for a wrong one`, async () => {
      const p = PROGRAMS[i]!;
      const right = await loop.run(withProgram(body, p.filename, p.right));
      expect(right.state, JSON.stringify(right.checks.map((c) => [c.id, c.latest?.message]))).toBe("verified");
      const wrong = await loop.run(withProgram(body, p.filename, p.wrong));
      expect(wrong.state).toBe("failed");
    });
  });
});
