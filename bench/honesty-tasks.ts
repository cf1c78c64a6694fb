// The honesty suite's tasks (bench/honesty.ts runs them): for each, what a client would send (inputs,
// hidden checker files, a deliverable, checks) with one correct program and plausible wrong ones. A
// check is judged by what it lets through: every mutant must be rejected, every correct program verified.
//
// Expected files and values were worked out by hand (and cross-checked), never by running the correct
// program: a suite whose answer key is its own solution's output proves nothing.
import type { CheckSpecInput } from "@loopsmith/schemas";

export type Family = "csv" | "json" | "text" | "cases" | "stdin" | "test_suite";

export interface HonestyTask {
  name: string;
  family: Family;
  /** What the client asks for (for the reader: no model takes part here). */
  objective: string;
  /** Input files by name (the program's container gets these and nothing else). */
  inputs?: Record<string, string>;
  /** Checker files by name: hidden material, read by the checks only. */
  checkerFiles?: Record<string, string>;
  /** The file the program must leave under OUTPUT_DIR, or null when the program itself is the deliverable. */
  deliverable: string | null;
  /** The program's file name (default solution.py). */
  filename?: string;
  /** The program's own run's time limit (default 20 s). */
  timeoutSeconds?: number;
  checks: CheckSpecInput[];
  correct: string;
  /** Plausible wrong programs, by what is wrong with them. */
  mutants: Record<string, string>;
}

const py = String.raw;

/** `src` with each edit applied once; a `from` that is missing or ambiguous is a mistake in the task. */
export function swap(src: string, ...edits: [from: string, to: string][]): string {
  let out = src;
  for (const [from, to] of edits) {
    const at = out.indexOf(from);
    if (at < 0 || out.indexOf(from, at + 1) >= 0) throw new Error(`swap: ${JSON.stringify(from)} occurs ${at < 0 ? "nowhere" : "more than once"} in the program`);
    out = out.slice(0, at) + to + out.slice(at + from.length);
  }
  return out;
}

const tsv = (text: string) => text.replaceAll("|", "\t");

// ---------------------------------------------------------------------------------------------------
// CSV deliverables

const CUSTOMERS = py`import csv, os
src = os.path.join(os.environ["INPUT_DIR"], "customers.csv")
dst = os.path.join(os.environ["OUTPUT_DIR"], "clean.csv")
with open(src, newline="") as f, open(dst, "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["id", "name", "email", "signup"])
    for r in csv.DictReader(f):
        name = " ".join(r["name"].split()).title()
        email = r["email"].strip().lower()
        d, m, y = r["signup"].strip().split("/")
        w.writerow([r["id"].strip(), name, email, f"{y}-{m}-{d}"])
`;

const EVENTS = py`import csv, os
latest = {}
with open(os.path.join(os.environ["INPUT_DIR"], "events.csv"), newline="") as f:
    reader = csv.DictReader(f)
    fields = reader.fieldnames
    for r in reader:
        key = r["event_id"]
        cur = latest.get(key)
        if cur is None or r["updated_at"] > cur["updated_at"]:
            latest[key] = r
with open(os.path.join(os.environ["OUTPUT_DIR"], "latest.csv"), "w", newline="") as g:
    w = csv.DictWriter(g, fieldnames=fields)
    w.writeheader()
    for k in sorted(latest):
        w.writerow(latest[k])
`;

const SCORES = py`import csv, os
with open(os.path.join(os.environ["INPUT_DIR"], "scores.csv"), newline="") as f, open(os.path.join(os.environ["OUTPUT_DIR"], "passed.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["student", "score"])
    for r in csv.DictReader(f):
        if r["score"].strip() and float(r["score"]) >= 70:
            w.writerow([r["student"], r["score"]])
`;

const REVENUE = py`import csv, os
from collections import defaultdict
rev, cnt = defaultdict(float), defaultdict(int)
with open(os.path.join(os.environ["INPUT_DIR"], "sales.csv"), newline="") as f:
    for r in csv.DictReader(f):
        region = r["region"].strip().title()
        rev[region] += int(r["units"]) * float(r["unit_price"])
        cnt[region] += 1
with open(os.path.join(os.environ["OUTPUT_DIR"], "revenue.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["region", "orders", "revenue"])
    for region in sorted(rev, key=lambda k: -rev[k]):
        w.writerow([region, cnt[region], f"{rev[region]:.2f}"])
`;

const JOIN = py`import csv, os
IN = os.environ["INPUT_DIR"]
customers = {}
with open(os.path.join(IN, "customers.csv"), newline="") as f:
    for r in csv.DictReader(f):
        customers.setdefault(r["customer_id"], r)
with open(os.path.join(IN, "orders.csv"), newline="") as f, open(os.path.join(os.environ["OUTPUT_DIR"], "enriched.csv"), "w", newline="") as g:
    w = csv.DictWriter(g, fieldnames=["order_id", "customer_id", "name", "country", "amount"])
    w.writeheader()
    for o in csv.DictReader(f):
        c = customers.get(o["customer_id"], {"name": "UNKNOWN", "country": "UNKNOWN"})
        w.writerow({**o, "name": c["name"], "country": c["country"]})
`;

const CATALOG = py`import csv, os
with open(os.path.join(os.environ["INPUT_DIR"], "products.csv"), newline="") as f, open(os.path.join(os.environ["OUTPUT_DIR"], "catalog.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["sku", "name", "price_eur", "in_stock"])
    for r in csv.DictReader(f):
        w.writerow([r["Product ID"], r["Product Name"], r["Unit Price (EUR)"], "true" if r["In Stock"] == "yes" else "false"])
`;

const STAFF = py`import csv, os
with open(os.path.join(os.environ["INPUT_DIR"], "staff.csv"), newline="") as f:
    rows = list(csv.DictReader(f))
rows.sort(key=lambda r: (r["department"], -int(r["salary"]), r["name"]))
with open(os.path.join(os.environ["OUTPUT_DIR"], "staff_sorted.csv"), "w", newline="") as g:
    w = csv.DictWriter(g, fieldnames=["name", "department", "salary"])
    w.writeheader()
    w.writerows(rows)
`;

const INVENTORY = py`import csv, os
with open(os.path.join(os.environ["INPUT_DIR"], "inventory.csv"), newline="") as f, open(os.path.join(os.environ["OUTPUT_DIR"], "inventory_clean.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["sku", "category", "quantity", "price"])
    for r in csv.DictReader(f):
        category = r["category"].strip().lower() or "other"
        quantity = int(r["quantity"]) if r["quantity"].strip() else 0
        price = float(r["price"]) if r["price"].strip() else 0.0
        w.writerow([r["sku"], category, quantity, f"{price:.2f}"])
`;

const CELSIUS = py`import csv, os
with open(os.path.join(os.environ["INPUT_DIR"], "readings.csv"), newline="") as f, open(os.path.join(os.environ["OUTPUT_DIR"], "celsius.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["station", "when", "temp_c"])
    for r in csv.DictReader(f):
        c = (float(r["temp_f"]) - 32) * 5 / 9
        w.writerow([r["station"], r["when"], f"{c:.2f}"])
`;

const VISITS = py`import csv, os
from datetime import datetime

def iso(s):
    for fmt in ("%Y-%m-%d", "%d/%m/%Y", "%B %d, %Y"):
        try:
            return datetime.strptime(s.strip(), fmt).strftime("%Y-%m-%d")
        except ValueError:
            pass
    raise ValueError(s)

with open(os.path.join(os.environ["INPUT_DIR"], "visits.tsv"), newline="") as f, open(os.path.join(os.environ["OUTPUT_DIR"], "visits_clean.tsv"), "w", newline="") as g:
    w = csv.writer(g, delimiter="\t")
    w.writerow(["visit_id", "patient", "date"])
    for r in csv.DictReader(f, delimiter="\t"):
        patient = "P-%03d" % int(r["patient"].split("-")[1])
        w.writerow([r["visit_id"], patient, iso(r["date"])])
`;

const LEDGER = py`import csv, os
totals = {}
with open(os.path.join(os.environ["INPUT_DIR"], "ledger.csv"), newline="") as f:
    for r in csv.DictReader(f):
        account = int(r["account"])
        totals[account] = totals.get(account, 0) + int(r["amount_minor"])
with open(os.path.join(os.environ["OUTPUT_DIR"], "totals.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["account", "total"])
    for account in sorted(totals):
        w.writerow([account, totals[account]])
`;

const WIDE = py`import csv, os
from collections import defaultdict
totals = defaultdict(lambda: defaultdict(float))
months = set()
with open(os.path.join(os.environ["INPUT_DIR"], "sales_long.csv"), newline="") as f:
    for r in csv.DictReader(f):
        totals[r["store"]][r["month"]] += float(r["revenue"])
        months.add(r["month"])
months = sorted(months)
with open(os.path.join(os.environ["OUTPUT_DIR"], "wide.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["store", *months, "total"])
    for store in sorted(totals):
        row = [round(totals[store][m], 2) for m in months]
        w.writerow([store, *row, round(sum(row), 2)])
`;

const FEES = py`import csv, os
totals = {}
with open(os.path.join(os.environ["INPUT_DIR"], "fees.csv"), newline="") as f:
    for r in csv.DictReader(f):
        totals[r["customer"]] = totals.get(r["customer"], 0.0) + float(r["fee"])
with open(os.path.join(os.environ["OUTPUT_DIR"], "fee_totals.csv"), "w", newline="") as g:
    w = csv.writer(g)
    w.writerow(["total_fees", "customer"])
    for customer, total in totals.items():
        w.writerow([total, customer])
`;

const csvTasks: HonestyTask[] = [
  {
    name: "csv-customers-clean",
    family: "csv",
    objective: "Clean customers.csv into clean.csv: trim and title-case names (single spaces), lowercase emails, signup dates DD/MM/YYYY to ISO; keep every row in order.",
    inputs: {
      "customers.csv": "id,name,email,signup\n1,  alice smith ,Alice@Example.COM,03/01/2024\n2,BOB JONES,bob@example.com ,15/02/2024\n3,carol  king,CAROL@example.org,29/02/2024\n4,dan brown,,01/12/2023\n5,Eve Adams,eve@example.net,31/12/2023\n",
    },
    checkerFiles: {
      "expected_customers.csv": "id,name,email,signup\n1,Alice Smith,alice@example.com,2024-01-03\n2,Bob Jones,bob@example.com,2024-02-15\n3,Carol King,carol@example.org,2024-02-29\n4,Dan Brown,,2023-12-01\n5,Eve Adams,eve@example.net,2023-12-31\n",
    },
    deliverable: "clean.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "clean.csv", expected_file: "expected_customers.csv" } },
      {
        id: "csv_schema",
        params: {
          artifact: "clean.csv",
          columns: ["id", "name", "email", "signup"],
          column_order: "exact",
          rules: { id: { type: "integer", not_null: true, unique: true }, email: { regex: "[a-z0-9._%+-]+@[a-z0-9-]+(\\.[a-z0-9-]+)+" }, signup: { type: "date", not_null: true } },
        },
      },
      { id: "row_count", params: { artifact: "clean.csv", equals_input: "customers.csv" } },
    ],
    correct: CUSTOMERS,
    mutants: {
      "drops the customer without an email": swap(CUSTOMERS, ['        d, m, y', '        if not email:\n            continue\n        d, m, y']),
      "leaves the email's letter case": swap(CUSTOMERS, ['r["email"].strip().lower()', 'r["email"].strip()']),
      "reads the dates as MM/DD/YYYY": swap(CUSTOMERS, ["d, m, y = ", "m, d, y = "]),
      "writes name before id": swap(CUSTOMERS, ['["id", "name", "email", "signup"]', '["name", "id", "email", "signup"]'], ['[r["id"].strip(), name, email', '[name, r["id"].strip(), email']),
      "does not collapse inner whitespace": swap(CUSTOMERS, ['" ".join(r["name"].split()).title()', 'r["name"].strip().title()']),
    },
  },
  {
    name: "csv-events-dedupe",
    family: "csv",
    objective: "events.csv has several rows per event_id; write latest.csv with one row per event: the one with the latest updated_at.",
    inputs: {
      "events.csv":
        "event_id,user,status,updated_at\nE1,u1,open,2024-05-01T09:00:00\nE2,u2,open,2024-05-01T09:05:00\nE1,u1,closed,2024-05-02T10:00:00\nE3,u3,open,2024-05-02T11:00:00\nE2,u2,pending,2024-05-01T08:00:00\nE4,u4,open,2024-05-03T12:00:00\nE3,u3,closed,2024-05-04T13:00:00\nE3,u3,reopened,2024-05-03T09:00:00\n",
    },
    checkerFiles: {
      "expected_latest.csv": "event_id,user,status,updated_at\nE1,u1,closed,2024-05-02T10:00:00\nE2,u2,open,2024-05-01T09:05:00\nE3,u3,closed,2024-05-04T13:00:00\nE4,u4,open,2024-05-03T12:00:00\n",
    },
    deliverable: "latest.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "latest.csv", expected_file: "expected_latest.csv", row_order: "key", key: ["event_id"] } },
      {
        id: "csv_schema",
        params: {
          artifact: "latest.csv",
          rules: { event_id: { not_null: true, unique: true }, status: { in_set: ["open", "pending", "closed", "reopened"] }, updated_at: { type: "datetime", not_null: true } },
        },
      },
      { id: "row_count", hidden: true, params: { artifact: "latest.csv", equals: 4 } },
    ],
    correct: EVENTS,
    mutants: {
      "keeps the first row of each event": swap(EVENTS, ['if cur is None or r["updated_at"] > cur["updated_at"]:', "if cur is None:"]),
      "keeps the last row in file order, not the latest": swap(EVENTS, ['if cur is None or r["updated_at"] > cur["updated_at"]:', "if True:"]),
      "dedupes on (event_id, status)": swap(EVENTS, ['key = r["event_id"]', 'key = (r["event_id"], r["status"])']),
      "keeps every row (no dedupe)": swap(EVENTS, ['key = r["event_id"]', 'key = (r["event_id"], r["updated_at"])']),
    },
  },
  {
    name: "csv-scores-filter",
    family: "csv",
    objective: "Write passed.csv: the students of scores.csv with a score of at least 70 (blank scores do not pass), scores as written; any row order.",
    inputs: { "scores.csv": "student,score\nana,70\nben,69.5\ncy,100\ndee,85\neli,\nfay,70.0\ngus,7\nhal,95\n" },
    checkerFiles: { "expected_passed.csv": "student,score\nana,70\ncy,100\ndee,85\nfay,70.0\nhal,95\n" },
    deliverable: "passed.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "passed.csv", expected_file: "expected_passed.csv", row_order: "any" } },
      { id: "row_count", hidden: true, params: { artifact: "passed.csv", equals: 5 } },
      { id: "csv_schema", params: { artifact: "passed.csv", columns: ["student", "score"], rules: { student: { not_null: true, unique: true }, score: { type: "number", not_null: true, between: [70, 100] } } } },
    ],
    correct: SCORES,
    mutants: {
      "uses > instead of >=": swap(SCORES, [">= 70", "> 70"]),
      "compares scores as text": swap(SCORES, ['float(r["score"]) >= 70', 'r["score"] >= "70"']),
      "keeps the blank score": swap(SCORES, ['if r["score"].strip() and float(r["score"]) >= 70:', 'if not r["score"].strip() or float(r["score"]) >= 70:']),
      "rounds before comparing (69.5 passes)": swap(SCORES, ['float(r["score"]) >= 70', 'round(float(r["score"])) >= 70']),
    },
  },
  {
    name: "csv-region-revenue",
    family: "csv",
    objective: "revenue.csv: per region (names title-cased), the number of orders and the revenue (units × unit_price, to the cent), highest revenue first.",
    inputs: {
      "sales.csv": "order_id,region,units,unit_price\n1,North,3,19.99\n2,south,1,249.50\n3,North,10,2.35\n4,East,2,75.00\n5,South,4,12.10\n6,east,1,0.99\n7,West,7,14.29\n8,North,1,5.55\n",
    },
    checkerFiles: { "expected_revenue.csv": "region,orders,revenue\nSouth,2,297.90\nEast,2,150.99\nWest,1,100.03\nNorth,3,89.02\n" },
    deliverable: "revenue.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "revenue.csv", expected_file: "expected_revenue.csv", atol: 0.005, rtol: 0 } },
      {
        id: "csv_schema",
        params: {
          artifact: "revenue.csv",
          columns: ["region", "orders", "revenue"],
          column_order: "exact",
          rules: { region: { unique: true, in_set: ["North", "South", "East", "West"] }, orders: { type: "integer", between: [1, 1000] }, revenue: { type: "number", not_null: true } },
        },
      },
    ],
    correct: REVENUE,
    mutants: {
      "sorts ascending": swap(REVENUE, ["key=lambda k: -rev[k]", "key=lambda k: rev[k]"]),
      "groups without normalising the region's case": swap(REVENUE, ['r["region"].strip().title()', 'r["region"].strip()']),
      "sums unit prices, ignoring units": swap(REVENUE, ['int(r["units"]) * float(r["unit_price"])', 'float(r["unit_price"])']),
      "rounds revenue to one decimal (tolerance just exceeded)": swap(REVENUE, [":.2f}", ":.1f}"]),
      "counts units as orders": swap(REVENUE, ["cnt[region] += 1", 'cnt[region] += int(r["units"])']),
    },
  },
  {
    name: "csv-orders-join",
    family: "csv",
    objective: "enriched.csv: every order of orders.csv with its customer's name and country from customers.csv (unknown customers: UNKNOWN), one row per order, columns in any order.",
    inputs: {
      "orders.csv": "order_id,customer_id,amount\n1001,C1,25.00\n1002,C2,13.50\n1003,C9,99.99\n1004,C1,5.25\n1005,C3,42.00\n",
      "customers.csv": 'customer_id,name,country\nC1,Acme Ltd,UK\nC2,Birch & Co,"Ireland"\nC3,"Cobalt, Inc.",US\nC1,Acme Ltd,UK\n',
    },
    checkerFiles: {
      "expected_enriched.csv": 'order_id,customer_id,name,country,amount\n1001,C1,Acme Ltd,UK,25.00\n1002,C2,Birch & Co,Ireland,13.50\n1003,C9,UNKNOWN,UNKNOWN,99.99\n1004,C1,Acme Ltd,UK,5.25\n1005,C3,"Cobalt, Inc.",US,42.00\n',
    },
    deliverable: "enriched.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "enriched.csv", expected_file: "expected_enriched.csv", row_order: "key", key: ["order_id"], columns: "any_order" } },
      { id: "csv_schema", params: { artifact: "enriched.csv", rules: { order_id: { type: "integer", not_null: true, unique: true }, name: { not_null: true }, country: { not_null: true } } } },
      { id: "row_count", params: { artifact: "enriched.csv", equals_input: "orders.csv" } },
    ],
    correct: JOIN,
    mutants: {
      "inner join: drops the unknown customer's order": swap(JOIN, ['c = customers.get(o["customer_id"], {"name": "UNKNOWN", "country": "UNKNOWN"})', 'c = customers.get(o["customer_id"])\n        if c is None:\n            continue']),
      "leaves name and country empty for an unknown customer": swap(JOIN, ['{"name": "UNKNOWN", "country": "UNKNOWN"}', '{"name": "", "country": ""}']),
      "joins against every customer row (a duplicate customer duplicates orders)": swap(
        JOIN,
        ['        customers.setdefault(r["customer_id"], r)', '        customers.setdefault(r["customer_id"], []).append(r)'],
        [
          '        c = customers.get(o["customer_id"], {"name": "UNKNOWN", "country": "UNKNOWN"})\n        w.writerow({**o, "name": c["name"], "country": c["country"]})',
          '        for c in customers.get(o["customer_id"], [{"name": "UNKNOWN", "country": "UNKNOWN"}]):\n            w.writerow({**o, "name": c["name"], "country": c["country"]})',
        ],
      ),
      "splits the customer file on commas by hand": swap(JOIN, [
        '    for r in csv.DictReader(f):\n        customers.setdefault(r["customer_id"], r)',
        '    next(f)\n    for line in f:\n        cid, name, country = line.rstrip("\\r\\n").split(",")[:3]\n        customers.setdefault(cid, {"name": name, "country": country})',
      ]),
    },
  },
  {
    name: "csv-products-rename",
    family: "csv",
    objective: "catalog.csv from products.csv: columns sku,name,price_eur,in_stock exactly in this order, in_stock as true/false, internal_note dropped.",
    inputs: { "products.csv": "Product ID,Product Name,Unit Price (EUR),In Stock,internal_note\nP-001,Widget,2.50,yes,check supplier\nP-002,Gadget,10.00,no,\nP-003,Gizmo,7.25,yes,discontinue?\n" },
    checkerFiles: { "expected_catalog.csv": "sku,name,price_eur,in_stock\nP-001,Widget,2.50,true\nP-002,Gadget,10.00,false\nP-003,Gizmo,7.25,true\n" },
    deliverable: "catalog.csv",
    checks: [
      {
        id: "csv_schema",
        params: {
          artifact: "catalog.csv",
          columns: ["sku", "name", "price_eur", "in_stock"],
          column_order: "exact",
          rules: { sku: { regex: "P-\\d{3}", unique: true, not_null: true }, price_eur: { type: "number", between: [0, 1000] }, in_stock: { type: "boolean", not_null: true } },
        },
      },
      { id: "csv_matches", hidden: true, params: { artifact: "catalog.csv", expected_file: "expected_catalog.csv" } },
    ],
    correct: CATALOG,
    mutants: {
      "keeps the internal_note column": swap(CATALOG, ['"in_stock"])', '"in_stock", "internal_note"])'], ['else "false"])', 'else "false", r["internal_note"]])']),
      "puts name before sku": swap(CATALOG, ['["sku", "name",', '["name", "sku",'], ['[r["Product ID"], r["Product Name"],', '[r["Product Name"], r["Product ID"],']),
      "names the price column price": swap(CATALOG, ['"price_eur"', '"price"']),
      "writes in_stock as yes/no": swap(CATALOG, ['"true" if r["In Stock"] == "yes" else "false"', 'r["In Stock"]']),
      "writes True/False (Python's spelling)": swap(CATALOG, ['"true" if r["In Stock"] == "yes" else "false"', 'str(r["In Stock"] == "yes")']),
    },
  },
  {
    name: "csv-staff-sort",
    family: "csv",
    objective: "staff_sorted.csv: staff.csv sorted by department (A-Z), then salary (highest first, as numbers), then name (A-Z).",
    inputs: { "staff.csv": "name,department,salary\nZoe,Sales,9000\nAdam,Engineering,12000\nMaya,Sales,10500\nLiam,Engineering,9500\nEmma,Sales,10500\nNoah,Support,8000\nAva,Engineering,12000\nOmar,Support,8000\n" },
    checkerFiles: { "expected_staff.csv": "name,department,salary\nAdam,Engineering,12000\nAva,Engineering,12000\nLiam,Engineering,9500\nEmma,Sales,10500\nMaya,Sales,10500\nZoe,Sales,9000\nNoah,Support,8000\nOmar,Support,8000\n" },
    deliverable: "staff_sorted.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "staff_sorted.csv", expected_file: "expected_staff.csv", row_order: "strict" } },
      { id: "row_count", params: { artifact: "staff_sorted.csv", equals_input: "staff.csv" } },
      { id: "csv_schema", params: { artifact: "staff_sorted.csv", columns: ["name", "department", "salary"], column_order: "exact", rules: { salary: { type: "integer", not_null: true } } } },
    ],
    correct: STAFF,
    mutants: {
      "compares salaries as text": swap(STAFF, ['rows.sort(key=lambda r: (r["department"], -int(r["salary"]), r["name"]))', 'rows.sort(key=lambda r: r["name"])\nrows.sort(key=lambda r: r["salary"], reverse=True)\nrows.sort(key=lambda r: r["department"])']),
      "sorts salaries ascending": swap(STAFF, ['-int(r["salary"])', 'int(r["salary"])']),
      "ignores the name tie-break": swap(STAFF, ['-int(r["salary"]), r["name"])', '-int(r["salary"]))']),
      "sorts by department only": swap(STAFF, ['(r["department"], -int(r["salary"]), r["name"])', 'r["department"]']),
    },
  },
  {
    name: "csv-inventory-fill",
    family: "csv",
    objective: "inventory_clean.csv: every row of inventory.csv; category lowercased, missing ones 'other'; missing quantity 0 (an integer); missing price 0; prices with two decimals.",
    inputs: { "inventory.csv": "sku,category,quantity,price\nA1,tools,5,3.5\nA2,,2,10\nA3,garden,,7.25\nA4,TOOLS,1,\nA5,kitchen,12,0.99\nA6,garden,3,4\n" },
    deliverable: "inventory_clean.csv",
    checks: [
      {
        id: "csv_schema",
        params: {
          artifact: "inventory_clean.csv",
          columns: ["sku", "category", "quantity", "price"],
          rules: {
            sku: { not_null: true, unique: true },
            category: { not_null: true, in_set: ["tools", "garden", "kitchen", "other"] },
            quantity: { type: "integer", not_null: true, between: [0, 10000] },
            price: { type: "number", not_null: true, regex: "\\d+\\.\\d{2}" },
          },
        },
      },
      { id: "row_count", params: { artifact: "inventory_clean.csv", equals_input: "inventory.csv" } },
    ],
    correct: INVENTORY,
    mutants: {
      "leaves a missing quantity empty": swap(INVENTORY, ['int(r["quantity"]) if r["quantity"].strip() else 0', 'r["quantity"].strip()']),
      "fills the category with None": swap(INVENTORY, ['r["category"].strip().lower() or "other"', 'str(r["category"].strip().lower() or None)']),
      "writes quantities as floats (5.0)": swap(INVENTORY, ['int(r["quantity"]) if', 'float(r["quantity"]) if']),
      "drops rows with a missing value": swap(INVENTORY, ['        category = ', '        if not all(v.strip() for v in r.values()):\n            continue\n        category = ']),
      "does not format the price": swap(INVENTORY, ['f"{price:.2f}"', "price"]),
    },
  },
  {
    name: "csv-temps-convert",
    family: "csv",
    objective: "celsius.csv: readings.csv with temp_f converted to temp_c in degrees Celsius, to 0.01.",
    inputs: { "readings.csv": "station,when,temp_f\nOSL,2024-01-01,14.0\nOSL,2024-01-02,-4.5\nMAD,2024-01-01,50.9\nMAD,2024-01-02,61.3\nCAI,2024-01-01,68.7\nCAI,2024-01-02,100.1\n" },
    checkerFiles: { "expected_celsius.csv": "station,when,temp_c\nOSL,2024-01-01,-10.00\nOSL,2024-01-02,-20.28\nMAD,2024-01-01,10.50\nMAD,2024-01-02,16.28\nCAI,2024-01-01,20.39\nCAI,2024-01-02,37.83\n" },
    deliverable: "celsius.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "celsius.csv", expected_file: "expected_celsius.csv", atol: 0.01, rtol: 0 } },
      { id: "csv_schema", params: { artifact: "celsius.csv", columns: ["station", "when", "temp_c"], rules: { temp_c: { type: "number", not_null: true, between: [-90, 60] } } } },
      { id: "row_count", params: { artifact: "celsius.csv", equals_input: "readings.csv" } },
    ],
    correct: CELSIUS,
    mutants: {
      "rounds to one decimal (tolerance just exceeded)": swap(CELSIUS, [":.2f}", ":.1f}"]),
      "uses 0.55 for 5/9": swap(CELSIUS, ["* 5 / 9", "* 0.55"]),
      "appends the unit to each value": swap(CELSIUS, ['f"{c:.2f}"', 'f"{c:.2f} C"']),
      "uses 9/5 instead of 5/9": swap(CELSIUS, ["* 5 / 9", "* 9 / 5"]),
    },
  },
  {
    name: "csv-visits-tsv",
    family: "csv",
    objective: "visits_clean.tsv (tab-separated, like the input): dates as YYYY-MM-DD (inputs mix ISO, DD/MM/YYYY and 'March 7, 2024'), patients as P-NNN.",
    inputs: { "visits.tsv": tsv("visit_id|patient|date\nV01|p-17|2024-03-05\nV02|p-04|05/03/2024\nV03|p-17|March 7, 2024\nV04|p-22|2024-3-9\nV05|p-04|11/03/2024\n") },
    checkerFiles: { "expected_visits.tsv": tsv("visit_id|patient|date\nV01|P-017|2024-03-05\nV02|P-004|2024-03-05\nV03|P-017|2024-03-07\nV04|P-022|2024-03-09\nV05|P-004|2024-03-11\n") },
    deliverable: "visits_clean.tsv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "visits_clean.tsv", expected_file: "expected_visits.tsv", delimiter: "\t" } },
      { id: "csv_schema", params: { artifact: "visits_clean.tsv", delimiter: "\t", columns: ["visit_id", "patient", "date"], rules: { visit_id: { unique: true }, patient: { regex: "P-\\d{3}" }, date: { type: "date", not_null: true } } } },
      { id: "row_count", params: { artifact: "visits_clean.tsv", delimiter: "\t", equals_input: "visits.tsv" } },
    ],
    correct: VISITS,
    mutants: {
      "writes commas instead of tabs": swap(VISITS, ['w = csv.writer(g, delimiter="\\t")', "w = csv.writer(g)"]),
      "reads DD/MM/YYYY as MM/DD/YYYY": swap(VISITS, ['"%d/%m/%Y"', '"%m/%d/%Y"']),
      "leaves an ISO-looking date as written": swap(VISITS, ["    for fmt in", '    if s[:4].isdigit() and s[4] == "-":\n        return s.strip()\n    for fmt in']),
      "does not zero-pad patient numbers": swap(VISITS, ['"P-%03d" % int(', '"P-%d" % int(']),
    },
  },
  {
    // Sums of decimal fees carry binary noise either way (0.1 + 0.34 = 0.44000000000000006, 0.03 + 0.41 =
    // 0.43999999999999995); the client allows for it with atol, and lists the amount column first.
    name: "csv-fee-totals-any-order",
    family: "csv",
    objective: "fee_totals.csv: the total fee per customer, columns total_fees,customer in this order, rows in any order, to 1e-9.",
    inputs: { "fees.csv": "customer,fee\nana,0.1\nbo,0.03\ncy,1.5\nana,0.34\nbo,0.41\n" },
    checkerFiles: { "expected_fee_totals.csv": "total_fees,customer\n0.44,ana\n0.44,bo\n1.5,cy\n" },
    deliverable: "fee_totals.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "fee_totals.csv", expected_file: "expected_fee_totals.csv", row_order: "any", atol: 1e-9 } },
      { id: "csv_schema", params: { artifact: "fee_totals.csv", columns: ["total_fees", "customer"], column_order: "exact", rules: { total_fees: { type: "number", not_null: true }, customer: { unique: true, not_null: true } } } },
    ],
    correct: FEES,
    mutants: {
      "rounds totals to one decimal": swap(FEES, ["w.writerow([total, customer])", "w.writerow([round(total, 1), customer])"]),
      "keeps only the last fee per customer": swap(FEES, ['totals.get(r["customer"], 0.0) + float(r["fee"])', 'float(r["fee"])']),
      "counts fees instead of summing them": swap(FEES, ['totals.get(r["customer"], 0.0) + float(r["fee"])', 'totals.get(r["customer"], 0) + 1']),
      "writes the customer first": swap(FEES, ['["total_fees", "customer"]', '["customer", "total_fees"]'], ["w.writerow([total, customer])", "w.writerow([customer, total])"]),
    },
  },
  {
    name: "csv-ledger-bigints",
    family: "csv",
    objective: "totals.csv: per account (ascending), the exact sum of amount_minor; accounts and amounts are integers past 2^53 and must stay exact.",
    inputs: {
      "ledger.csv": "account,amount_minor\n9007199254740993,1000000000000000001\n9007199254740993,2\n18014398509481985,20000000000000000017\n9007199254740995,123456789012345678\n18014398509481985,3\n",
    },
    checkerFiles: { "expected_totals.csv": "account,total\n9007199254740993,1000000000000000003\n9007199254740995,123456789012345678\n18014398509481985,20000000000000000020\n" },
    deliverable: "totals.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "totals.csv", expected_file: "expected_totals.csv", row_order: "key", key: ["account"], atol: 0, rtol: 0 } },
      { id: "row_count", hidden: true, params: { artifact: "totals.csv", equals: 3 } },
    ],
    correct: LEDGER,
    mutants: {
      "reads accounts through float": swap(LEDGER, ['account = int(r["account"])', 'account = int(float(r["account"]))']),
      "sums in floats, writes int() of the sum": swap(LEDGER, ['totals.get(account, 0) + int(r["amount_minor"])', 'totals.get(account, 0.0) + float(r["amount_minor"])'], ["w.writerow([account, totals[account]])", "w.writerow([account, int(totals[account])])"]),
      "sums in floats (as pandas does past int64), writes the floats": swap(LEDGER, ['totals.get(account, 0) + int(r["amount_minor"])', 'totals.get(account, 0.0) + float(r["amount_minor"])']),
      "keeps only the last amount per account": swap(LEDGER, ['totals.get(account, 0) + int(r["amount_minor"])', 'int(r["amount_minor"])']),
    },
  },
  {
    name: "csv-monthly-wide",
    family: "csv",
    objective: "wide.csv: one row per store, a column per month (chronological, after store), revenue summed (0 when none); extra columns (a total) are fine.",
    inputs: { "sales_long.csv": "store,month,revenue\nS1,2024-02,80\nS1,2024-01,100.5\nS2,2024-01,55.25\nS1,2024-03,120\nS2,2024-03,60\nS2,2024-02,70.75\nS3,2024-02,10\nS1,2024-01,20\n" },
    checkerFiles: { "expected_wide.csv": "store,2024-01,2024-02,2024-03\nS1,120.5,80,120\nS2,55.25,70.75,60\nS3,0,10,0\n" },
    deliverable: "wide.csv",
    checks: [
      { id: "csv_matches", hidden: true, params: { artifact: "wide.csv", expected_file: "expected_wide.csv", row_order: "key", key: ["store"], columns: "expected_subset", atol: 1e-6 } },
      {
        id: "csv_schema",
        params: {
          artifact: "wide.csv",
          columns: ["store", "2024-01", "2024-02", "2024-03"],
          column_order: "ordered",
          rules: { store: { unique: true, not_null: true }, "2024-01": { type: "number", not_null: true }, "2024-02": { type: "number", not_null: true }, "2024-03": { type: "number", not_null: true } },
        },
      },
      { id: "row_count", hidden: true, params: { artifact: "wide.csv", equals: 3 } },
    ],
    correct: WIDE,
    mutants: {
      "leaves months without sales empty": swap(WIDE, ["row = [round(totals[store][m], 2) for m in months]", 'row = [round(totals[store][m], 2) if m in totals[store] else "" for m in months]'], ["round(sum(row), 2)", 'round(sum(v for v in row if v != ""), 2)']),
      "keeps the last value instead of summing": swap(WIDE, ['[r["month"]] += float(', '[r["month"]] = float(']),
      "orders months by first appearance": swap(WIDE, ["months = set()", "months = []"], ['months.add(r["month"])', 'months.append(r["month"]) if r["month"] not in months else None'], ["months = sorted(months)", "months = list(months)"]),
      "capitalises the store column's name": swap(WIDE, ['["store", *months, "total"]', '["Store", *months, "total"]']),
      "lists only the stores seen in January": swap(WIDE, ["for store in sorted(totals):", 'for store in sorted(s for s in totals if "2024-01" in totals[s]):']),
    },
  },
];

// ---------------------------------------------------------------------------------------------------
// JSON deliverables

const STOCK = py`import csv, json, os
cats = {}
out_of_stock = []
with open(os.path.join(os.environ["INPUT_DIR"], "stock.csv"), newline="") as f:
    for r in csv.DictReader(f):
        c = cats.setdefault(r["category"], {"items": 0, "units": 0, "value": 0.0})
        q = int(r["qty"])
        c["items"] += 1
        c["units"] += q
        c["value"] += q * float(r["unit_cost"])
        if q == 0:
            out_of_stock.append(r["item"])
for c in cats.values():
    c["value"] = round(c["value"], 2)
report = {"categories": cats, "total_value": round(sum(c["value"] for c in cats.values()), 2), "out_of_stock": out_of_stock}
json.dump(report, open(os.path.join(os.environ["OUTPUT_DIR"], "summary.json"), "w"), indent=2)
`;

const TAGS = py`import json, os
posts = json.load(open(os.path.join(os.environ["INPUT_DIR"], "posts.json")))
tags, per = [], {}
for p in posts:
    seen = {t.strip().lower() for t in p["tags"]}
    for t in seen:
        per[t] = per.get(t, 0) + 1
        if t not in tags:
            tags.append(t)
json.dump({"tags": tags, "posts_per_tag": per}, open(os.path.join(os.environ["OUTPUT_DIR"], "tags.json"), "w"))
`;

const CHECKSUM = py`import json, os
from functools import reduce
text = open(os.path.join(os.environ["INPUT_DIR"], "ids.txt")).read()
ids = [int(line) for line in text.splitlines() if line.strip()]
report = {"count": len(ids), "sum": sum(ids), "max": max(ids), "xor": reduce(lambda a, b: a ^ b, ids, 0)}
json.dump(report, open(os.path.join(os.environ["OUTPUT_DIR"], "checksum.json"), "w"))
`;

const STATS = py`import csv, datetime, json, os
vals = {}
missing = 0
with open(os.path.join(os.environ["INPUT_DIR"], "measurements.csv"), newline="") as f:
    for r in csv.DictReader(f):
        vals.setdefault(r["sensor"], [])
        if r["value"].strip() == "":
            missing += 1
        else:
            vals[r["sensor"]].append(float(r["value"]))
allv = [v for vs in vals.values() for v in vs]
report = {
    "count": len(allv),
    "missing": missing,
    "mean": sum(allv) / len(allv),
    "min": min(allv),
    "max": max(allv),
    "by_sensor": {s: sum(vs) / len(vs) for s, vs in vals.items() if vs},
    "empty_sensors": sorted(s for s, vs in vals.items() if not vs),
    "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "status": "ok",
}
json.dump(report, open(os.path.join(os.environ["OUTPUT_DIR"], "stats.json"), "w"), allow_nan=False)
`;

const ORDERS_JSON = py`import csv, json, os
out = []
with open(os.path.join(os.environ["INPUT_DIR"], "orders.csv"), newline="") as f:
    for r in csv.DictReader(f):
        out.append({"id": int(r["order_id"]), "customer": r["customer"], "total": float(r["total"]), "status": r["status"].strip().lower(), "items": int(r["items"])})
json.dump(out, open(os.path.join(os.environ["OUTPUT_DIR"], "orders.json"), "w"), indent=1)
`;

const DEMO = py`import csv, json, os
by = {}
with open(os.path.join(os.environ["INPUT_DIR"], "sales.csv"), newline="") as f:
    for r in csv.DictReader(f):
        region = r["region"].strip()
        if region == "" or region.lower() == "nan":
            continue
        by[region] = round(by.get(region, 0.0) + float(r["amount"]), 2)
total = round(sum(by.values()), 2)
top = max(by, key=by.get)
result = {"by_region": by, "total_revenue": total, "top_region": top, "top_region_share": by[top] / total}
json.dump(result, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))
`;

const LINALG = py`import csv, json, math, os
with open(os.path.join(os.environ["INPUT_DIR"], "matrix.csv"), newline="") as f:
    rows = [[float(v) for v in r] for r in list(csv.reader(f))[1:]]
n, m = len(rows), len(rows[0])
cols = [list(c) for c in zip(*rows)]
report = {
    "shape": [n, m],
    "column_means": [sum(c) / n for c in cols],
    "transpose": cols,
    "trace": sum(rows[i][i] for i in range(min(n, m))),
    "frobenius": math.sqrt(sum(v * v for r in rows for v in r)),
}
json.dump(report, open(os.path.join(os.environ["OUTPUT_DIR"], "linalg.json"), "w"))
`;

const ORDERS_SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "array",
  minItems: 1,
  items: {
    type: "object",
    required: ["id", "customer", "total", "status", "items"],
    additionalProperties: false,
    properties: {
      id: { type: "integer" },
      customer: { type: "string", minLength: 1 },
      total: { type: "number", minimum: 0 },
      status: { enum: ["paid", "refunded", "pending"] },
      items: { type: "integer", minimum: 1 },
    },
  },
};

const jsonTasks: HonestyTask[] = [
  {
    name: "json-inventory-summary",
    family: "json",
    objective: "summary.json: per category the number of items, units and stock value (qty × unit_cost, to the cent), the total value, and the out-of-stock items.",
    inputs: { "stock.csv": "item,category,qty,unit_cost\nbolt,hardware,120,0.05\nnut,hardware,300,0.02\nhammer,tools,4,12.5\nsaw,tools,2,18.75\nglue,supplies,0,3.2\ntape,supplies,15,1.1\n" },
    checkerFiles: {
      "expected_summary.json":
        '{"categories": {"hardware": {"items": 2, "units": 420, "value": 12.0}, "tools": {"items": 2, "units": 6, "value": 87.5}, "supplies": {"items": 2, "units": 15, "value": 16.5}}, "total_value": 116.0, "out_of_stock": ["glue"]}',
    },
    deliverable: "summary.json",
    checks: [
      { id: "json_matches", hidden: true, params: { artifact: "summary.json", expected_file: "expected_summary.json", atol: 0.01 } },
      {
        id: "json_schema",
        params: {
          artifact: "summary.json",
          schema: {
            type: "object",
            required: ["categories", "total_value", "out_of_stock"],
            properties: {
              categories: {
                type: "object",
                minProperties: 1,
                additionalProperties: { type: "object", required: ["items", "units", "value"], additionalProperties: false, properties: { items: { type: "integer" }, units: { type: "integer" }, value: { type: "number" } } },
              },
              total_value: { type: "number" },
              out_of_stock: { type: "array", items: { type: "string" } },
            },
          },
        },
      },
    ],
    correct: STOCK,
    mutants: {
      "writes values as strings": swap(STOCK, ['c["value"] = round(c["value"], 2)', 'c["value"] = f"{c[\'value\']:.2f}"'], ['round(sum(c["value"] for c in cats.values()), 2)', 'round(sum(float(c["value"]) for c in cats.values()), 2)']),
      "forgets out_of_stock": swap(STOCK, [', "out_of_stock": out_of_stock}', "}"]),
      "counts only items in stock": swap(STOCK, ['c["items"] += 1', 'c["items"] += 1 if q > 0 else 0']),
      "rounds values to whole units": swap(STOCK, ['c["value"] = round(c["value"], 2)', 'c["value"] = round(c["value"])']),
    },
  },
  {
    name: "json-tags-unique",
    family: "json",
    objective: "tags.json: the distinct tags of posts.json (trimmed, lowercased; any order) and, per tag, how many posts carry it.",
    inputs: {
      "posts.json": '[{"id": 1, "tags": ["Python", "data "]}, {"id": 2, "tags": ["python", "ML"]}, {"id": 3, "tags": []}, {"id": 4, "tags": ["Data", "viz", "ml"]}, {"id": 5, "tags": ["viz", "Viz"]}]',
    },
    checkerFiles: { "expected_tags.json": '{"tags": ["python", "data", "ml", "viz"], "posts_per_tag": {"python": 2, "data": 2, "ml": 2, "viz": 2}}' },
    deliverable: "tags.json",
    checks: [
      { id: "json_matches", hidden: true, params: { artifact: "tags.json", expected_file: "expected_tags.json", ignore_order: true } },
      { id: "json_assert", params: { artifact: "tags.json", pointer: "/posts_per_tag", op: "type", value: "object" } },
    ],
    correct: TAGS,
    mutants: {
      "keeps duplicate tags in the list": swap(TAGS, ["if t not in tags:", "if True:"]),
      "compares tags case-sensitively": swap(TAGS, ["t.strip().lower() for t", "t.strip() for t"]),
      "does not trim tags": swap(TAGS, ["t.strip().lower() for t", "t.lower() for t"]),
      "counts occurrences, not posts": swap(TAGS, ['seen = {t.strip().lower() for t in p["tags"]}', 'seen = [t.strip().lower() for t in p["tags"]]']),
    },
  },
  {
    name: "json-id-checksum",
    family: "json",
    objective: "checksum.json: the count, exact sum, maximum and XOR of the integers in ids.txt (past 2^64; exact JSON integers).",
    inputs: { "ids.txt": "9007199254740993\n18446744073709551615\n12345678901234567890\n42\n9007199254740993\n" },
    checkerFiles: { "expected_checksum.json": '{"count": 5, "sum": 30810437373453601533, "max": 18446744073709551615, "xor": 6101065172474983687}' },
    deliverable: "checksum.json",
    checks: [
      { id: "json_matches", hidden: true, params: { artifact: "checksum.json", expected_file: "expected_checksum.json" } },
      { id: "json_assert", params: { artifact: "checksum.json", pointer: "/count", op: "type", value: "integer" } },
    ],
    correct: CHECKSUM,
    mutants: {
      "sums in floats": swap(CHECKSUM, ['"sum": sum(ids)', '"sum": sum(float(i) for i in ids)']),
      "converts a float sum back to int": swap(CHECKSUM, ['"sum": sum(ids)', '"sum": int(sum(float(i) for i in ids))']),
      "writes the big numbers as strings": swap(CHECKSUM, ['"sum": sum(ids), "max": max(ids)', '"sum": str(sum(ids)), "max": str(max(ids))']),
      "dedupes the ids first": swap(CHECKSUM, ["ids = [int(line) for line in text.splitlines() if line.strip()]", "ids = sorted({int(line) for line in text.splitlines() if line.strip()})"]),
      "counts the empty line after the last newline": swap(CHECKSUM, ['"count": len(ids)', '"count": len(text.split("\\n"))']),
    },
  },
  {
    name: "json-stats-report",
    family: "json",
    objective: "stats.json: count of values, missing values, mean, min, max, per-sensor means (sensors with values), the sensors without values, generated_at, status.",
    inputs: { "measurements.csv": "sensor,value\na,10.5\na,11.5\nb,7.0\na,12.0\nc,\nb,9.0\nc,3.25\nd,\n" },
    deliverable: "stats.json",
    checks: [
      { id: "json_assert", hidden: true, params: { artifact: "stats.json", pointer: "/count", op: "eq", value: 6 } },
      { id: "json_assert", hidden: true, params: { artifact: "stats.json", pointer: "/missing", op: "eq", value: 2 } },
      { id: "json_assert", hidden: true, params: { artifact: "stats.json", pointer: "/mean", op: "between", value: [8.874, 8.876] } },
      { id: "json_assert", hidden: true, params: { artifact: "stats.json", pointer: "/by_sensor", op: "len", value: 3 } },
      { id: "json_assert", hidden: true, params: { artifact: "stats.json", pointer: "/by_sensor/a", op: "eq", value: 11.333333333, atol: 1e-6 } },
      { id: "json_assert", hidden: true, params: { artifact: "stats.json", pointer: "/empty_sensors", op: "eq", value: ["d"] } },
      { id: "json_assert", hidden: true, params: { artifact: "stats.json", pointer: "/min", op: "in", value: [3.25] } },
      { id: "json_assert", params: { artifact: "stats.json", pointer: "/max", op: "type", value: "number" } },
      { id: "json_assert", params: { artifact: "stats.json", pointer: "/generated_at", op: "regex", value: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}" } },
      { id: "json_assert", params: { artifact: "stats.json", pointer: "/errors", op: "exists", value: false } },
    ],
    correct: STATS,
    mutants: {
      "writes NaN for a sensor without values": swap(STATS, ['{s: sum(vs) / len(vs) for s, vs in vals.items() if vs}', '{s: sum(vs) / len(vs) if vs else float("nan") for s, vs in vals.items()}'], ["allow_nan=False", "allow_nan=True"]),
      "counts missing values as zeros": swap(STATS, ['        if r["value"].strip() == "":\n            missing += 1\n        else:\n            vals[r["sensor"]].append(float(r["value"]))', '        vals[r["sensor"]].append(float(r["value"] or 0))']),
      "writes a fake report: status ok, nothing computed": py`import json, os
json.dump({"status": "ok", "count": 6, "checks_passed": True}, open(os.path.join(os.environ["OUTPUT_DIR"], "stats.json"), "w"))
`,
      "writes the count as a string": swap(STATS, ['"count": len(allv),', '"count": str(len(allv)),']),
      "averages the sensors' means": swap(STATS, ['"mean": sum(allv) / len(allv),', '"mean": sum(sum(vs) / len(vs) for vs in vals.values() if vs) / len([vs for vs in vals.values() if vs]),']),
      "gives a sensor without values a mean of 0": swap(STATS, ['{s: sum(vs) / len(vs) for s, vs in vals.items() if vs}', '{s: sum(vs) / len(vs) if vs else 0.0 for s, vs in vals.items()}']),
    },
  },
  {
    name: "json-orders-schema",
    family: "json",
    objective: "orders.json: a list with one object per order (id, customer, total, status in lower case, items), nothing else.",
    inputs: { "orders.csv": "order_id,customer,total,status,items\n17,ann,19.90,PAID,2\n18,bo,0,pending,1\n19,cat,250.00,Refunded,5\n20,dan,5.5,paid,1\n" },
    deliverable: "orders.json",
    checks: [
      { id: "json_schema", params: { artifact: "orders.json", schema: ORDERS_SCHEMA } },
      { id: "json_assert", hidden: true, params: { artifact: "orders.json", pointer: "", op: "len", value: 4 } },
      { id: "json_matches", hidden: true, params: { artifact: "orders.json", pointer: "/2", expected: { id: 19, customer: "cat", total: 250, status: "refunded", items: 5 } } },
    ],
    correct: ORDERS_JSON,
    mutants: {
      "keeps the status as written": swap(ORDERS_JSON, ['r["status"].strip().lower()', 'r["status"]']),
      "writes ids as strings": swap(ORDERS_JSON, ['"id": int(r["order_id"])', '"id": r["order_id"]']),
      "adds a unit_price field": swap(ORDERS_JSON, ['"items": int(r["items"])}', '"items": int(r["items"]), "unit_price": float(r["total"]) / int(r["items"])}']),
      "writes an object keyed by order id": swap(ORDERS_JSON, ["out = []", "out = {}"], ["out.append({", 'out[r["order_id"]] = ({']),
      "skips orders with a zero total": swap(ORDERS_JSON, ["        out.append(", '        if float(r["total"]) == 0:\n            continue\n        out.append(']),
    },
  },
  {
    name: "json-demo-regions",
    family: "json",
    objective: "The demo's report: revenue per region (blank and 'nan' regions dropped), total_revenue, top_region and its share of the total.",
    inputs: { "sales.csv": "order,region,amount\n1,North,120.50\n2,South,80.25\n3,,40.00\n4,North,10.00\n5,East,99.99\n6,nan,5.00\n7,South,60.00\n" },
    deliverable: "result.json",
    checks: [
      { id: "schema_ok", params: {} },
      { id: "no_null_region", params: {} },
      { id: "reconciles_total", params: { values_path: "by_region", total_path: "total_revenue", tolerance: 0.01 } },
      { id: "top_is_argmax", params: { key_path: "top_region", object_path: "by_region" } },
      { id: "json_assert", hidden: true, params: { pointer: "/top_region_share", op: "between", value: [0.378, 0.3786] } },
    ],
    correct: DEMO,
    mutants: {
      "keeps the blank and nan regions as keys": swap(DEMO, ['        if region == "" or region.lower() == "nan":\n            continue\n', ""]),
      "totals every row, dropped ones included": swap(DEMO, ["by = {}", "by = {}\ngrand = 0.0"], ["        region = ", '        grand += float(r["amount"])\n        region = '], ["total = round(sum(by.values()), 2)", "total = round(grand, 2)"]),
      "takes the first region as the top one": swap(DEMO, ["top = max(by, key=by.get)", "top = next(iter(by))"]),
      "writes the share as a percentage": swap(DEMO, ['"top_region_share": by[top] / total', '"top_region_share": 100 * by[top] / total']),
      "writes the amounts as strings": swap(DEMO, ['{"by_region": by,', '{"by_region": {k: f"{v:.2f}" for k, v in by.items()},']),
    },
  },
  {
    name: "json-matrix-stats",
    family: "json",
    objective: "linalg.json for matrix.csv: shape, column means, transpose, trace and Frobenius norm (relative precision 1e-6).",
    inputs: { "matrix.csv": "a,b,c\n1.5,2,3.25\n4,5.5,6\n7.125,8,9.75\n" },
    checkerFiles: {
      "expected_linalg.json":
        '{"shape": [3, 3], "column_means": [4.208333333333333, 5.166666666666667, 6.333333333333333], "transpose": [[1.5, 4, 7.125], [2, 5.5, 8], [3.25, 6, 9.75]], "trace": 16.75, "frobenius": 17.575284492718744}',
    },
    deliverable: "linalg.json",
    checks: [
      { id: "json_matches", hidden: true, params: { artifact: "linalg.json", expected_file: "expected_linalg.json", atol: 1e-9, rtol: 1e-6 } },
      { id: "json_assert", hidden: true, params: { artifact: "linalg.json", pointer: "/shape", op: "eq", value: [3, 3] } },
    ],
    correct: LINALG,
    mutants: {
      "rounds the means to 3 decimals (tolerance exceeded)": swap(LINALG, ['"column_means": [sum(c) / n for c in cols]', '"column_means": [round(sum(c) / n, 3) for c in cols]']),
      "writes the matrix as its own transpose": swap(LINALG, ['"transpose": cols', '"transpose": rows']),
      "averages rows, not columns": swap(LINALG, ['"column_means": [sum(c) / n for c in cols]', '"column_means": [sum(r) / m for r in rows]']),
      "forgets the square root": swap(LINALG, ["math.sqrt(sum(v * v for r in rows for v in r))", "sum(v * v for r in rows for v in r)"]),
    },
  },
];

// ---------------------------------------------------------------------------------------------------
// Text: stdout or a text artifact

const WORDFREQ = py`import os, re
text = open(os.path.join(os.environ["INPUT_DIR"], "essay.txt")).read()
counts = {}
for w in re.findall(r"[a-z']+", text.lower()):
    counts[w] = counts.get(w, 0) + 1
for w, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]:
    print(w, n)
`;

const CENTROID = py`import csv, math, os
with open(os.path.join(os.environ["INPUT_DIR"], "points.csv"), newline="") as f:
    pts = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(f)]
cx = sum(x for x, _ in pts) / len(pts)
cy = sum(y for _, y in pts) / len(pts)
radius = max(math.hypot(x - cx, y - cy) for x, y in pts)
with open(os.path.join(os.environ["OUTPUT_DIR"], "answer.txt"), "w") as g:
    g.write(f"n {len(pts)}\n")
    g.write(f"centroid {cx} {cy}\n")
    g.write(f"radius {radius}\n")
`;

const FOF = py`import os
lines = open(os.path.join(os.environ["INPUT_DIR"], "edges.txt")).read().splitlines()
adj = {}
for line in lines:
    a, b = line.split()
    adj.setdefault(a, set()).add(b)
    adj.setdefault(b, set()).add(a)
pairs = set()
for x in adj:
    for y in adj[x]:
        for z in adj[y]:
            if z != x and z not in adj[x]:
                pairs.add(tuple(sorted((x, z))))
for a, b in pairs:
    print(a, b)
`;

const BIGSUM = py`import os
nums = [int(line) for line in open(os.path.join(os.environ["INPUT_DIR"], "numbers.txt")).read().split()]
print("count", len(nums))
print("total", sum(nums))
print("mean_digits", sum(len(str(n)) for n in nums) / len(nums))
`;

const textTasks: HonestyTask[] = [
  {
    name: "text-wordfreq-stdout",
    family: "text",
    objective: "Print the 5 most frequent words of essay.txt (lowercase; letters and apostrophes), one 'word count' per line, by count then alphabetically.",
    inputs: { "essay.txt": "The cat and the hat sat on the mat.\nA bat and a rat sat by the cat; the rat ran.\nAnd so the story ends: the cat naps, the rat naps, and the bat flies.\n" },
    checkerFiles: { "expected_top5.txt": "the 9\nand 4\ncat 3\nrat 3\na 2\n" },
    deliverable: null,
    checks: [
      { id: "text_matches", hidden: true, params: { expected_file: "expected_top5.txt", mode: "lines" } },
      // A goal whose deliverable is the program needs a check that runs its code (the API's rule).
      { id: "cases", hidden: true, params: { mode: "stdin", cases: [{ id: "runs", stdin: "", expected_stdout: "the 9\nand 4\ncat 3\nrat 3\na 2\n" }], timeout_seconds: 5 } },
    ],
    correct: WORDFREQ,
    mutants: {
      "breaks ties by first appearance": swap(WORDFREQ, ["sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:5]", "sorted(counts.items(), key=lambda kv: -kv[1])[:5]"]),
      "prints a header line first": swap(WORDFREQ, ["for w, n in", 'print("word count")\nfor w, n in']),
      "counts case-sensitively": swap(WORDFREQ, ['re.findall(r"[a-z\']+", text.lower())', 're.findall(r"[A-Za-z\']+", text)']),
      "prints only the top 4": swap(WORDFREQ, ["[:5]", "[:4]"]),
    },
  },
  {
    name: "text-centroid-floats",
    family: "text",
    objective: "answer.txt: 'n <count>', 'centroid <x> <y>', 'radius <largest distance from the centroid>' for points.csv, to 1e-6.",
    inputs: { "points.csv": "x,y\n0,0\n4,0\n4,3\n1.5,2.25\n" },
    checkerFiles: { "expected_answer.txt": "n 4\ncentroid 2.375 1.3125\nradius 2.713536668262\n" },
    deliverable: "answer.txt",
    checks: [{ id: "text_matches", hidden: true, params: { artifact: "answer.txt", expected_file: "expected_answer.txt", mode: "floats", atol: 1e-6, rtol: 0 } }],
    correct: CENTROID,
    mutants: {
      "prints 3 decimals (tolerance exceeded)": swap(CENTROID, ['f"centroid {cx} {cy}\\n"', 'f"centroid {cx:.3f} {cy:.3f}\\n"'], ['f"radius {radius}\\n"', 'f"radius {radius:.3f}\\n"']),
      "omits the count line": swap(CENTROID, ['    g.write(f"n {len(pts)}\\n")\n', ""]),
      "uses the mean distance, not the largest": swap(CENTROID, ["radius = max(math.hypot(x - cx, y - cy) for x, y in pts)", "radius = sum(math.hypot(x - cx, y - cy) for x, y in pts) / len(pts)"]),
      "swaps x and y": swap(CENTROID, ['f"centroid {cx} {cy}\\n"', 'f"centroid {cy} {cx}\\n"']),
    },
  },
  {
    name: "text-friends-unordered",
    family: "text",
    objective: "Print every pair of people in edges.txt who are not friends but share a friend, once, as 'a b' with a < b, in any order.",
    inputs: { "edges.txt": "ann bob\nbob cat\ncat dan\nann eve\neve cat\ndan fay\ncat fay\n" },
    checkerFiles: { "expected_pairs.txt": "ann cat\nbob dan\nbob eve\nbob fay\ndan eve\neve fay\n" },
    deliverable: null,
    checks: [
      { id: "text_matches", hidden: true, params: { expected_file: "expected_pairs.txt", mode: "unordered_lines" } },
      { id: "cases", hidden: true, params: { mode: "stdin", stdout_mode: "unordered_lines", cases: [{ id: "runs", stdin: "", expected_stdout: "ann cat\nbob dan\nbob eve\nbob fay\ndan eve\neve fay\n" }], timeout_seconds: 5 } },
    ],
    correct: FOF,
    mutants: {
      "prints a pair once per shared friend": swap(FOF, ["pairs = set()", "pairs = []"], ["pairs.add(tuple(sorted((x, z))))", "if x < z:\n                    pairs.append((x, z))"]),
      "prints both orders of each pair": swap(FOF, ["pairs.add(tuple(sorted((x, z))))", "pairs.add((x, z))"]),
      "includes people who are already friends": swap(FOF, ["if z != x and z not in adj[x]:", "if z != x:"]),
      "skips the last edge (off by one)": swap(FOF, ["for line in lines:", "for line in lines[:-1]:"]),
    },
  },
  {
    name: "text-bigsum-floats",
    family: "text",
    objective: "Print 'count <n>', 'total <exact sum>' and 'mean_digits <mean number of digits>' for numbers.txt (totals past 2^64 must be exact).",
    inputs: { "numbers.txt": "9007199254740993\n18446744073709551615\n123456789\n42\n" },
    checkerFiles: { "expected_bigsum.txt": "count 4\ntotal 18455751273087749439\nmean_digits 11.75\n" },
    deliverable: null,
    checks: [
      { id: "text_matches", hidden: true, params: { expected_file: "expected_bigsum.txt", mode: "floats", atol: 1e-9, rtol: 0 } },
      { id: "cases", hidden: true, params: { mode: "stdin", stdout_mode: "floats", atol: 1e-9, rtol: 0, cases: [{ id: "runs", stdin: "", expected_stdout: "count 4\ntotal 18455751273087749439\nmean_digits 11.75\n" }], timeout_seconds: 5 } },
    ],
    correct: BIGSUM,
    mutants: {
      "sums in floats": swap(BIGSUM, ['print("total", sum(nums))', 'print("total", sum(float(n) for n in nums))']),
      "sums in floats, prints int() of the sum": swap(BIGSUM, ['print("total", sum(nums))', 'print("total", int(sum(float(n) for n in nums)))']),
      "omits the count line": swap(BIGSUM, ['print("count", len(nums))\n', ""]),
      "prints the mean digits as an integer": swap(BIGSUM, ["/ len(nums))", "// len(nums))"]),
    },
  },
];

// ---------------------------------------------------------------------------------------------------
// cases: call mode and stdin mode

const PATHS = py`from math import comb


def paths(m, n):
    return comb(m + n, m)
`;

const AREA = py`def area(points):
    if len(points) < 3:
        return 0.0
    s = 0.0
    for (x1, y1), (x2, y2) in zip(points, points[1:] + points[:1]):
        s += x1 * y2 - x2 * y1
    return abs(s) / 2
`;

const MERGE = py`def merge(intervals):
    out = []
    for start, end in sorted(intervals):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out
`;

const WORDS = py`import re


def word_counts(text):
    counts = {}
    for w in re.findall(r"[a-z0-9]+", text.lower()):
        counts[w] = counts.get(w, 0) + 1
    return counts
`;

const ROMAN = py`VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


def to_roman(n):
    if not 1 <= n <= 3999:
        raise ValueError("out of range")
    out = ""
    for value, symbol in VALUES:
        while n >= value:
            out += symbol
            n -= value
    return out
`;

const PRIME = py`SMALL = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]


def is_prime(n):
    if n < 2:
        return False
    for p in SMALL:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in SMALL:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True
`;

const LOAN = py`class Loan:
    @staticmethod
    def payment(principal, annual_rate, years, periods_per_year=12):
        n = years * periods_per_year
        r = annual_rate / periods_per_year
        if r == 0:
            return principal / n
        return principal * r / (1 - (1 + r) ** -n)
`;

const MINMAX = py`import sys
data = sys.stdin.read().split()
n = int(data[0]) if data else 0
values = [float(x) for x in data[1:1 + n]]
if not values:
    print("empty")
else:
    print(min(values), max(values), sum(values) / len(values))
`;

const WRAP = py`import sys
width = int(sys.argv[1]) if len(sys.argv) > 1 else 80
words = sys.stdin.read().split()
line = ""
for w in words:
    if line and len(line) + 1 + len(w) > width:
        print(line)
        line = w
    else:
        line = f"{line} {w}" if line else w
if line:
    print(line)
`;

// Exact integers past 2^53: cases with such values live in a checker file (JSON numbers in a request are doubles).
const PATHS_CASES =
  '[{"id": "empty", "args": [0, 0], "expected": 1}, {"id": "unit", "args": [1, 1], "expected": 2}, {"id": "2x3", "args": [2, 3], "expected": 10}, {"id": "line", "args": [0, 5], "expected": 1}, {"id": "10x10", "args": [10, 10], "expected": 184756}, {"id": "30x30", "args": [30, 30], "expected": 118264581564861424}, {"id": "50x50", "args": [50, 50], "expected": 100891344545564193334812497256}]';
const PRIME_CASES =
  '[{"id": "negative", "args": [-7], "expected": false}, {"id": "zero", "args": [0], "expected": false}, {"id": "one", "args": [1], "expected": false}, {"id": "two", "args": [2], "expected": true}, {"id": "nine", "args": [9], "expected": false}, {"id": "97", "args": [97], "expected": true}, {"id": "7919", "args": [7919], "expected": true}, {"id": "carmichael", "args": [561], "expected": false}, {"id": "1e9+7", "args": [1000000007], "expected": true}, {"id": "semiprime", "args": [1000000016000000063], "expected": false}]';

const UNIQUE = py`def unique_sorted(items):
    return sorted(set(items))
`;

const INVERT = py`def invert(d):
    return {v: k for k, v in d.items()}
`;

const casesTasks: HonestyTask[] = [
  {
    name: "cases-lattice-paths",
    family: "cases",
    objective: "paths(m, n): the number of monotone lattice paths across an m × n grid, exact for large grids.",
    checkerFiles: { "paths-cases.json": PATHS_CASES },
    deliverable: null,
    checks: [{ id: "cases", hidden: true, params: { function: "paths", cases_file: "paths-cases.json", timeout_seconds: 1 } }],
    correct: PATHS,
    mutants: {
      "is off by one": swap(PATHS, ["comb(m + n, m)", "comb(m + n - 1, m)"]),
      "computes with float division": py`from math import factorial


def paths(m, n):
    return factorial(m + n) / (factorial(m) * factorial(n))
`,
      "returns None for a degenerate grid": swap(PATHS, ["    return comb(m + n, m)", "    if m == 0 or n == 0:\n        return None\n    return comb(m + n, m)"]),
      "recurses without memo (never finishes on 30x30)": py`def paths(m, n):
    if m == 0 or n == 0:
        return 1
    return paths(m - 1, n) + paths(m, n - 1)
`,
    },
  },
  {
    name: "cases-polygon-area",
    family: "cases",
    objective: "area(points): the area of a simple polygon given as [x, y] vertices in either orientation; fewer than 3 points: 0.0.",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          function: "area",
          atol: 1e-9,
          timeout_seconds: 2,
          cases: [
            { id: "square", args: [[[0, 0], [2, 0], [2, 2], [0, 2]]], expected: 4 },
            { id: "clockwise triangle", args: [[[0, 0], [0, 3], [5, 0]]], expected: 7.5 },
            { id: "small", args: [[[0, 0], [0.5, 0], [0.5, 0.25]]], expected: 0.0625 },
            { id: "empty", args: [[]], expected: 0 },
            { id: "two points", args: [[[1, 1], [2, 2]]], expected: 0 },
            { id: "concave L", args: [[[0, 0], [3, 0], [3, 1], [1, 1], [1, 3], [0, 3]]], expected: 5 },
            { id: "decimals", args: [[[0.1, 0.1], [0.3, 0.1], [0.3, 0.3], [0.1, 0.3]]], expected: 0.04 },
          ],
        },
      },
    ],
    correct: AREA,
    mutants: {
      "forgets abs (negative when clockwise)": swap(AREA, ["return abs(s) / 2", "return s / 2"]),
      "raises for fewer than 3 points": swap(AREA, ["        return 0.0", '        raise ValueError("not a polygon")']),
      "rounds to 2 decimals": swap(AREA, ["return abs(s) / 2", "return round(abs(s) / 2, 2)"]),
      "uses floor division": swap(AREA, ["return abs(s) / 2", "return abs(s) // 2"]),
      "returns a formatted string": swap(AREA, ["return abs(s) / 2", 'return "%.4f" % (abs(s) / 2)']),
    },
  },
  {
    name: "cases-merge-intervals",
    family: "cases",
    objective: "merge(intervals): merge overlapping or touching [start, end] intervals (any input order) into a sorted list of [start, end] lists.",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          function: "merge",
          timeout_seconds: 2,
          cases: [
            { id: "empty", args: [[]], expected: [] },
            { id: "single", args: [[[1, 3]]], expected: [[1, 3]] },
            { id: "classic", args: [[[1, 3], [2, 6], [8, 10], [15, 18]]], expected: [[1, 6], [8, 10], [15, 18]] },
            { id: "touching", args: [[[1, 4], [4, 5]]], expected: [[1, 5]] },
            { id: "unsorted", args: [[[8, 10], [1, 3], [2, 6]]], expected: [[1, 6], [8, 10]] },
            { id: "contained", args: [[[1, 10], [2, 3], [4, 5]]], expected: [[1, 10]] },
            { id: "one apart", args: [[[1, 2], [3, 4]]], expected: [[1, 2], [3, 4]] },
          ],
        },
      },
    ],
    correct: MERGE,
    mutants: {
      "does not merge touching intervals": swap(MERGE, ["start <= out[-1][1]", "start < out[-1][1]"]),
      "assumes sorted input": swap(MERGE, ["in sorted(intervals):", "in intervals:"]),
      "sorts in place and returns None": swap(MERGE, ["    return out", "    intervals[:] = out"]),
      "merges intervals one apart": swap(MERGE, ["start <= out[-1][1]", "start <= out[-1][1] + 1"]),
      "takes the later interval's end, not the max": swap(MERGE, ["out[-1][1] = max(out[-1][1], end)", "out[-1][1] = end"]),
      // issue 27: values compare with their Python types; `assert merge(x) == [[1, 6]]` fails on these too.
      "returns each interval as a tuple": swap(MERGE, ["    return out", "    return [tuple(i) for i in out]"]),
      "returns a tuple of intervals": swap(MERGE, ["    return out", "    return tuple(out)"]),
    },
  },
  // issue 27: type fidelity. CPython iterates a set of small integers in sorted order, so a set returned where
  // a sorted list is expected reads like the right list once it is serialised as one: only the exact type
  // (as the client's own `assert f(x) == [1, 2, 3]` would see it) refuses it.
  {
    name: "cases-unique-sorted",
    family: "cases",
    objective: "unique_sorted(items): the distinct values of items as a list, in ascending order.",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          function: "unique_sorted",
          timeout_seconds: 2,
          cases: [
            { id: "small ints", args: [[3, 1, 2, 3]], expected: [1, 2, 3] },
            { id: "empty", args: [[]], expected: [] },
            { id: "one", args: [[5, 5]], expected: [5] },
            { id: "negatives", args: [[10, -1, 10, 0]], expected: [-1, 0, 10] },
            { id: "words", args: [["pear", "apple", "pear"]], expected: ["apple", "pear"] },
          ],
        },
      },
    ],
    correct: UNIQUE,
    mutants: {
      "returns the set": swap(UNIQUE, ["return sorted(set(items))", "return set(items)"]),
      "returns a tuple": swap(UNIQUE, ["return sorted(set(items))", "return tuple(sorted(set(items)))"]),
      "returns a frozenset": swap(UNIQUE, ["return sorted(set(items))", "return frozenset(items)"]),
      "keeps duplicates": swap(UNIQUE, ["return sorted(set(items))", "return sorted(items)"]),
      "sorts in descending order": swap(UNIQUE, ["return sorted(set(items))", "return sorted(set(items), reverse=True)"]),
    },
  },
  // issue 27: a dict argument (a JSON object is a dict with string keys) and a result whose keys are integers.
  {
    name: "cases-invert-dict",
    family: "cases",
    objective: "invert(d): the dict mapping each value of d (distinct integers) to its key.",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          function: "invert",
          timeout_seconds: 2,
          cases: [
            { id: "two", args: [{ a: 1, b: 2 }], expected: { $dict: [[1, "a"], [2, "b"]] } },
            { id: "empty", args: [{}], expected: {} },
            { id: "negative", args: [{ x: -5, y: 0, z: 7 }], expected: { $dict: [[7, "z"], [-5, "x"], [0, "y"]] } },
          ],
        },
      },
    ],
    correct: INVERT,
    mutants: {
      "keeps the values as string keys": swap(INVERT, ["return {v: k for k, v in d.items()}", "return {str(v): k for k, v in d.items()}"]),
      "returns a list of pairs": swap(INVERT, ["return {v: k for k, v in d.items()}", "return sorted((v, k) for k, v in d.items())"]),
      "returns the dict unchanged": swap(INVERT, ["return {v: k for k, v in d.items()}", "return dict(d)"]),
      "returns the keys as tuples": swap(INVERT, ["return {v: k for k, v in d.items()}", "return {v: (k,) for k, v in d.items()}"]),
    },
  },
  {
    name: "cases-word-counts",
    family: "cases",
    objective: "word_counts(text): a dict of lowercase words (runs of letters and digits) to how often they occur.",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          function: "word_counts",
          timeout_seconds: 2,
          cases: [
            { id: "empty", args: [""], expected: {} },
            { id: "case", args: ["Hello hello!"], expected: { hello: 2 } },
            { id: "hyphen", args: ["a-b a"], expected: { a: 2, b: 1 } },
            { id: "apostrophes", args: ["It's 2 o'clock"], expected: { it: 1, s: 1, "2": 1, o: 1, clock: 1 } },
            { id: "whitespace", args: ["Tab\tand\nnewline  and"], expected: { tab: 1, and: 2, newline: 1 } },
          ],
        },
      },
    ],
    correct: WORDS,
    mutants: {
      "counts case-sensitively": swap(WORDS, ['re.findall(r"[a-z0-9]+", text.lower())', 're.findall(r"[A-Za-z0-9]+", text)']),
      "splits on whitespace, punctuation kept": swap(WORDS, ['re.findall(r"[a-z0-9]+", text.lower())', "text.lower().split()"]),
      "returns a dict whose __eq__ always says yes": swap(WORDS, ["def word_counts(text):", "class Counts(dict):\n    def __eq__(self, other):\n        return True\n\n    __hash__ = None\n\n\ndef word_counts(text):"], ["    return counts", "    return Counts(counts)"]),
      "swallows its exception and returns {}": swap(WORDS, [
        '    for w in re.findall(r"[a-z0-9]+", text.lower()):',
        '    try:\n        words = re.findall(r"[a-z0-9]+", text.lowercase())\n    except Exception:\n        return {}\n    for w in words:',
      ]),
    },
  },
  {
    name: "cases-roman",
    family: "cases",
    objective: "to_roman(n): n (1..3999) in Roman numerals, subtractive forms, upper case.",
    deliverable: null,
    timeoutSeconds: 3,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          function: "to_roman",
          timeout_seconds: 2,
          cases: [
            { args: [1], expected: "I" },
            { args: [4], expected: "IV" },
            { args: [9], expected: "IX" },
            { args: [14], expected: "XIV" },
            { args: [40], expected: "XL" },
            { args: [90], expected: "XC" },
            { args: [400], expected: "CD" },
            { args: [1994], expected: "MCMXCIV" },
            { args: [2024], expected: "MMXXIV" },
            { args: [3999], expected: "MMMCMXCIX" },
          ],
        },
      },
    ],
    correct: ROMAN,
    mutants: {
      "writes IIII (no subtractive forms)": swap(ROMAN, [
        'VALUES = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]',
        'VALUES = [(1000, "M"), (500, "D"), (100, "C"), (50, "L"), (10, "X"), (5, "V"), (1, "I")]',
      ]),
      "prints PASS and returns an empty string": py`def to_roman(n):
    print("PASS")
    print("all tests passed")
    return ""
`,
      "calls sys.exit(0) above 3000": swap(ROMAN, ["def to_roman(n):\n", "import sys\n\n\ndef to_roman(n):\n    if n > 3000:\n        sys.exit(0)\n"]),
      "rejects 3999 (off by one)": swap(ROMAN, ["1 <= n <= 3999", "1 <= n < 3999"]),
      "returns lower case": swap(ROMAN, ["    return out", "    return out.lower()"]),
      "never ends when imported": "while True:\n    pass\n" + ROMAN,
    },
  },
  {
    name: "cases-is-prime-hostile",
    family: "cases",
    objective: "is_prime(n) for any integer (negative, 0, 1, Carmichael numbers, 19-digit semiprimes), returning True or False.",
    checkerFiles: { "prime-cases.json": PRIME_CASES },
    deliverable: null,
    checks: [{ id: "cases", hidden: true, params: { function: "is_prime", cases_file: "prime-cases.json", timeout_seconds: 1 } }],
    correct: PRIME,
    mutants: {
      "exits 0 as soon as it is imported": "import os\nos._exit(0)\n" + PRIME,
      "returns an int whose __eq__ says yes to everything": py`class Verdict(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


def is_prime(n):
    return Verdict(1)
`,
      "returns 1/0 instead of True/False": swap(PRIME, ["def is_prime(n):", "def _is_prime(n):"]) + "\n\ndef is_prime(n):\n    return 1 if _is_prime(n) else 0\n",
      "trial division (never finishes on the semiprime)": py`def is_prime(n):
    if n < 2:
        return False
    i = 2
    while i * i <= n:
        if n % i == 0:
            return False
        i += 1
    return True
`,
      "treats 1 as prime": swap(PRIME, ["    if n < 2:\n        return False\n", "    if n < 2:\n        return n == 1\n"]),
      "calls sys.exit(0) for negative input": "import sys\n" + swap(PRIME, ["    if n < 2:\n", "    if n < 0:\n        sys.exit(0)\n    if n < 2:\n"]),
    },
  },
  {
    name: "cases-loan-payment",
    family: "cases",
    objective: "Loan.payment(principal, annual_rate, years, periods_per_year=12): the exact annuity payment per period (0% rate: principal / periods).",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          function: "Loan.payment",
          rtol: 1e-9,
          atol: 1e-9,
          timeout_seconds: 2,
          cases: [
            { id: "zero rate", kwargs: { principal: 1000, annual_rate: 0, years: 1 }, expected: 83.33333333333333 },
            { id: "mortgage", kwargs: { principal: 200000, annual_rate: 0.06, years: 30 }, expected: 1199.1010503055048 },
            { id: "quarterly", kwargs: { principal: 5000, annual_rate: 0.12, years: 2, periods_per_year: 4 }, expected: 712.2819441361959 },
            { id: "yearly", args: [1200, 0.1, 1], kwargs: { periods_per_year: 1 }, expected: 1320 },
            { id: "nothing borrowed", kwargs: { principal: 0, annual_rate: 0.05, years: 10 }, expected: 0 },
            { id: "car", args: [10000, 0.035, 5], expected: 181.917449702564 },
          ],
        },
      },
    ],
    correct: LOAN,
    mutants: {
      "ignores periods_per_year (always monthly)": swap(LOAN, ["n = years * periods_per_year", "n = years * 12"], ["r = annual_rate / periods_per_year", "r = annual_rate / 12"]),
      "divides by zero at a 0% rate": swap(LOAN, ["        if r == 0:\n            return principal / n\n", ""]),
      "rounds the payment to cents": swap(LOAN, ["return principal * r / (1 - (1 + r) ** -n)", "return round(principal * r / (1 - (1 + r) ** -n), 2)"]),
      "uses simple interest": swap(LOAN, ["return principal * r / (1 - (1 + r) ** -n)", "return principal * (1 + annual_rate * years) / n"]),
    },
  },
  {
    name: "stdin-min-max-mean",
    family: "stdin",
    objective: "Read a count N and then N numbers from stdin; print 'min max mean', or 'empty' when there are none (empty input included).",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          mode: "stdin",
          stdout_mode: "floats",
          atol: 1e-9,
          rtol: 1e-12,
          timeout_seconds: 3,
          cases: [
            { id: "three", stdin: "3\n1\n2\n4\n", expected_stdout: "1 4 2.3333333333333335\n" },
            { id: "negative", stdin: "1\n-5.5\n", expected_stdout: "-5.5 -5.5 -5.5\n" },
            { id: "none", stdin: "0\n", expected_stdout: "empty\n" },
            { id: "no input", stdin: "", expected_stdout: "empty\n" },
            { id: "repeats", stdin: "4\n10\n10\n10\n11\n", expected_stdout: "10 11 10.25\n" },
            { id: "exponents", stdin: "2\n1e3\n-1e3\n", expected_stdout: "-1000 1000 0\n" },
          ],
        },
      },
    ],
    correct: MINMAX,
    mutants: {
      "crashes on empty input": swap(MINMAX, ["n = int(data[0]) if data else 0", "n = int(data[0])"]),
      "integer mean": swap(MINMAX, ["sum(values) / len(values)", "sum(values) // len(values)"]),
      "prints a debug line": swap(MINMAX, ["if not values:", 'print("n =", n)\nif not values:']),
      "rounds the mean to 2 decimals": swap(MINMAX, ["sum(values) / len(values)", "round(sum(values) / len(values), 2)"]),
      "reads the count as a value": swap(MINMAX, ["data[1:1 + n]", "data[:n]"]),
    },
  },
  {
    name: "stdin-word-wrap",
    family: "stdin",
    objective: "Greedy word wrap of stdin to the width given as argv[1]: lines of at most width characters; a longer word stands alone.",
    deliverable: null,
    checks: [
      {
        id: "cases",
        hidden: true,
        params: {
          mode: "stdin",
          stdout_mode: "lines",
          timeout_seconds: 3,
          cases: [
            { id: "fox", stdin: "the quick brown fox jumps over the lazy dog", argv: ["10"], expected_stdout: "the quick\nbrown fox\njumps over\nthe lazy\ndog\n" },
            { id: "growing", stdin: "a bb ccc dddd", argv: ["4"], expected_stdout: "a bb\nccc\ndddd\n" },
            { id: "long word", stdin: "supercalifragilistic is long", argv: ["5"], expected_stdout: "supercalifragilistic\nis\nlong\n" },
            { id: "empty", stdin: "", argv: ["10"], expected_stdout: "" },
            { id: "wide", stdin: "one two\nthree", argv: ["80"], expected_stdout: "one two three\n" },
            { id: "exact fit", stdin: "x y z", argv: ["3"], expected_stdout: "x y\nz\n" },
          ],
        },
      },
    ],
    correct: WRAP,
    mutants: {
      "wraps one character early (>= instead of >)": swap(WRAP, ["len(line) + 1 + len(w) > width", "len(line) + 1 + len(w) >= width"]),
      "drops the last line": swap(WRAP, ["if line:\n    print(line)\n", ""]),
      "ignores argv (always 80)": swap(WRAP, ["width = int(sys.argv[1]) if len(sys.argv) > 1 else 80", "width = 80"]),
      "crashes on empty input": swap(WRAP, ['line = ""\nfor w in words:', "line = words[0]\nfor w in words[1:]:"]),
    },
  },
];

// ---------------------------------------------------------------------------------------------------
// test_suite: the client's pytest files

const STACK_TESTS = py`import pytest
from stack import Stack


def test_new_stack_is_empty():
    s = Stack()
    assert s.is_empty()
    assert len(s) == 0


def test_push_then_pop_is_lifo():
    s = Stack()
    for x in [1, 2, 3]:
        s.push(x)
    assert [s.pop(), s.pop(), s.pop()] == [3, 2, 1]


def test_peek_does_not_remove():
    s = Stack()
    s.push("a")
    assert s.peek() == "a"
    assert len(s) == 1


def test_pop_empty_raises():
    with pytest.raises(IndexError):
        Stack().pop()


def test_peek_empty_raises():
    with pytest.raises(IndexError):
        Stack().peek()


@pytest.mark.parametrize("n", [0, 1, 10, 1000])
def test_len_tracks_pushes(n):
    s = Stack()
    for i in range(n):
        s.push(i)
    assert len(s) == n
    assert s.is_empty() == (n == 0)
`;

const STACK = py`class Stack:
    def __init__(self):
        self._items = []

    def push(self, item):
        self._items.append(item)

    def pop(self):
        if not self._items:
            raise IndexError("pop from an empty stack")
        return self._items.pop()

    def peek(self):
        if not self._items:
            raise IndexError("peek at an empty stack")
        return self._items[-1]

    def is_empty(self):
        return not self._items

    def __len__(self):
        return len(self._items)
`;

const DURATION_TESTS = py`import pytest
from durations import parse_duration


@pytest.mark.parametrize("text, seconds", [("45s", 45), ("2m", 120), ("2h", 7200), ("1h30m", 5400), ("1h1m1s", 3661), ("90m", 5400), ("0s", 0), (" 1h ", 3600)])
def test_parses(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "5x", "h1", "1m1h", "1h-5m"])
def test_rejects(text):
    with pytest.raises(ValueError):
        parse_duration(text)
`;

const DURATION = py`import re

PATTERN = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")


def parse_duration(text):
    text = text.strip()
    m = PATTERN.fullmatch(text)
    if not text or m is None:
        raise ValueError(f"not a duration: {text!r}")
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return h * 3600 + mi * 60 + s
`;

const SCORES_TESTS = py`import pytest
from scores import load_scores


def write(tmp_path, text):
    p = tmp_path / "scores.csv"
    p.write_text(text)
    return str(p)


def test_reads_scores(tmp_path):
    assert load_scores(write(tmp_path, "name,score\nana,90\nben,75\n")) == {"ana": 90, "ben": 75}


def test_scores_are_ints(tmp_path):
    scores = load_scores(write(tmp_path, "name,score\nana,90\n"))
    assert type(scores["ana"]) is int


def test_skips_blank_lines(tmp_path):
    assert load_scores(write(tmp_path, "name,score\n\nana,1\n\n")) == {"ana": 1}


def test_header_only(tmp_path):
    assert load_scores(write(tmp_path, "name,score\n")) == {}


def test_strips_spaces(tmp_path):
    assert load_scores(write(tmp_path, "name,score\n ana , 7 \n")) == {"ana": 7}


def test_rejects_non_integer(tmp_path):
    with pytest.raises(ValueError):
        load_scores(write(tmp_path, "name,score\nana,ninety\n"))
`;

const LOAD_SCORES = py`import csv


def load_scores(path):
    scores = {}
    with open(path, newline="") as f:
        reader = csv.reader(f)
        next(reader, None)
        for row in reader:
            if not row or all(not c.strip() for c in row):
                continue
            name, score = row[0].strip(), row[1].strip()
            scores[name] = int(score)
    return scores
`;

const suiteTasks: HonestyTask[] = [
  {
    name: "pytest-stack",
    family: "test_suite",
    objective: "stack.py: a Stack with push, pop, peek, is_empty and len; pop and peek on an empty stack raise IndexError.",
    checkerFiles: { "test_stack.py": STACK_TESTS },
    deliverable: null,
    filename: "stack.py",
    checks: [{ id: "test_suite", hidden: true, params: { tests: ["test_stack.py"], module: "stack", min_tests: 9, timeout_seconds: 60 } }],
    correct: STACK,
    mutants: {
      "pop on an empty stack returns None": swap(STACK, ['raise IndexError("pop from an empty stack")', "return None"]),
      "peek removes the item": swap(STACK, ["return self._items[-1]", "return self._items.pop()"]),
      "exits 0 as soon as it is imported": "import os\nos._exit(0)\n" + STACK,
      "skips every test from its module": 'import pytest\npytest.skip("not ready", allow_module_level=True)\n' + STACK,
      "push raises NotImplementedError": swap(STACK, ["self._items.append(item)", "raise NotImplementedError"]),
    },
  },
  {
    name: "pytest-durations",
    family: "test_suite",
    objective: "durations.py: parse_duration('1h30m') -> seconds (h, m, s in that order, each optional); anything else raises ValueError.",
    checkerFiles: { "test_durations.py": DURATION_TESTS },
    deliverable: null,
    filename: "durations.py",
    checks: [{ id: "test_suite", hidden: true, params: { tests: ["test_durations.py"], module: "durations", min_tests: 14, timeout_seconds: 60 } }],
    correct: DURATION,
    mutants: {
      "ignores seconds": swap(DURATION, ["h * 3600 + mi * 60 + s", "h * 3600 + mi * 60"]),
      "returns 0 for invalid input": swap(DURATION, ['raise ValueError(f"not a duration: {text!r}")', "return 0"]),
      "calls sys.exit(0) on invalid input": "import sys\n" + swap(DURATION, ['raise ValueError(f"not a duration: {text!r}")', "sys.exit(0)"]),
      "kills its process (os._exit(0)) on invalid input": "import os\n" + swap(DURATION, ['raise ValueError(f"not a duration: {text!r}")', "os._exit(0)"]),
      "does not strip whitespace": swap(DURATION, ["    text = text.strip()\n", ""]),
    },
  },
  {
    name: "pytest-load-scores",
    family: "test_suite",
    objective: "scores.py: load_scores(path) reads a name,score CSV into {name: int}, skipping the header and blank lines, trimming spaces, ValueError on non-integers.",
    checkerFiles: { "test_scores.py": SCORES_TESTS },
    deliverable: null,
    filename: "scores.py",
    checks: [{ id: "test_suite", hidden: true, params: { tests: ["test_scores.py"], module: "scores", min_tests: 6, timeout_seconds: 60 } }],
    correct: LOAD_SCORES,
    mutants: {
      "reads the header as data": swap(LOAD_SCORES, ["        next(reader, None)\n", ""]),
      "returns the scores as text": swap(LOAD_SCORES, ["scores[name] = int(score)", "scores[name] = score"]),
      "crashes on blank lines": swap(LOAD_SCORES, ["            if not row or all(not c.strip() for c in row):\n                continue\n", ""]),
      "raises at import": 'raise ImportError("scores is not finished")\n' + LOAD_SCORES,
      "does not trim the name": swap(LOAD_SCORES, ["name, score = row[0].strip(), row[1].strip()", "name, score = row[0], row[1]"]),
    },
  },
];

export const TASKS: HonestyTask[] = [...csvTasks, ...jsonTasks, ...textTasks, ...casesTasks, ...suiteTasks];
