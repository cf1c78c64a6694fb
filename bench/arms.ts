// Benchmark: do the loop, real feedback and best-of-N help? One suite of goals, run in several arms, against
// an OpenAI-compatible provider, through real API and runner processes. Prints per arm: goals verified,
// attempts, model calls, tokens and cost. The arms (seed 004's three, and the feedback control):
//   single       one attempt, no loop (max_attempts 1)
//   loop         the closed loop with full feedback (the refiner sees the run, the failed checks, the diagnosis)
//   best-of-3    the loop, each GENERATE and REFINE sampling 3 programs the verifier picks from (candidates 3)
//   retry_only   the loop told only that the attempt was wrong (the feedback control arm)
//
//   npx tsx bench/arms.ts                         # the fake OpenAI-compatible server (CI, offline)
//   OPENAI_COMPATIBLE_BASE_URL=http://host:8080/v1 OPENAI_COMPATIBLE_MODEL=qwen2.5-coder npx tsx bench/arms.ts [--repeats 3] [--arms single,loop,best-of-3]
//
// With the fake server the replies are scripted (a wrong first program, the right one when refining), the
// same for every candidate: the loop arms are equal by construction and the output says so instead of
// implying a result; only "single" differs (it never gets to refine).
import { parseArgs } from "node:util";
import type { GoalView } from "@loopsmith/schemas";
import { startFakeOpenAI, type FakeOpenAI } from "../packages/models/test/support/fake-openai";
import { runGoal, startStack } from "../scripts/lib/stack";

const ARMS = {
  single: { feedback: "full", max_attempts: 1 },
  loop: { feedback: "full", max_attempts: 4 },
  "best-of-3": { feedback: "full", max_attempts: 4, candidates: 3 },
  retry_only: { feedback: "retry_only", max_attempts: 4 },
} as const;
type Arm = keyof typeof ARMS;

const { values } = parseArgs({ options: { repeats: { type: "string", default: "1" }, arms: { type: "string", default: Object.keys(ARMS).join(",") } } });
const repeats = Number(values.repeats);
const arms = values.arms.split(",").map((a) => a.trim()) as Arm[];
for (const a of arms) if (!(a in ARMS)) throw new Error(`unknown arm ${a}; the arms are ${Object.keys(ARMS).join(", ")}`);

interface Task {
  name: string;
  body: Record<string, unknown>;
  /** For the fake server: a first program that fails, and the fixed one. */
  wrong: string;
  right: string;
}

const out = (file: string, expr: string) => `import json, os\nopen(os.path.join(os.environ["OUTPUT_DIR"], "${file}"), "w").write(${expr})\n`;
const TASKS: Task[] = [
  {
    name: "revenue per region",
    body: {
      objective: "From sales.csv compute revenue (units x price) per region into result.json as {\"by_region\": {...}}.",
      inputs: [{ name: "sales.csv", text: "region,units,price\nNorth,3,2.50\nSouth,10,$1.25\nNorth,1,2.50\n" }],
      checker_files: [{ name: "expected.json", text: '{"North": 10.0, "South": 12.5}' }],
      checks: [{ id: "json_matches", params: { pointer: "/by_region", expected_file: "expected.json", atol: 0.001 } }],
    },
    wrong: `import csv, json, os\nby = {}\nfor r in csv.DictReader(open(os.environ["INPUT_PATH"])):\n    by[r["region"]] = by.get(r["region"], 0) + int(r["units"]) * float(r["price"])\njson.dump({"by_region": by}, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))\n`,
    right: `import csv, json, os\nby = {}\nfor r in csv.DictReader(open(os.environ["INPUT_PATH"])):\n    by[r["region"]] = by.get(r["region"], 0) + int(r["units"]) * float(r["price"].replace("$", ""))\njson.dump({"by_region": by}, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))\n`,
  },
  {
    name: "dedupe a CSV",
    body: {
      objective: "Write ids.csv with the distinct ids of ids_in.csv in first-seen order.",
      inputs: [{ name: "ids_in.csv", text: "id\n3\n1\n3\n2\n1\n" }],
      deliverable: "ids.csv",
      checker_files: [{ name: "expected.csv", text: "id\n3\n1\n2\n" }],
      checks: [{ id: "csv_matches", params: { artifact: "ids.csv", expected_file: "expected.csv" } }],
    },
    wrong: out("ids.csv", '"id\\n1\\n2\\n3\\n"'),
    right: out("ids.csv", '"id\\n3\\n1\\n2\\n"'),
  },
  {
    name: "fib with hidden cases",
    body: {
      objective: "Write fib(n) in solution.py, exact for large n.",
      deliverable: null,
      checks: [{ id: "cases", hidden: true, params: { function: "fib", cases: [{ args: [0], expected: 0 }, { args: [10], expected: 55 }] } }],
    },
    wrong: "def fib(n):\n    return n\n",
    right: "def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
  },
];

const reply = (o: unknown) => ({ content: JSON.stringify(o), usage: { prompt_tokens: 600, completion_tokens: 150 } });

/** The fake provider: answers by turn, the same way in both arms (the inspector's yes is vetoed by the checks when they fail). */
async function startFake(): Promise<FakeOpenAI> {
  return startFakeOpenAI(
    Array.from({ length: 1000 }, () => (body: unknown) => {
      const req = body as { response_format: { json_schema: { name: string } }; messages: { content: string }[] };
      const prompt = req.messages.map((m) => m.content).join("\n");
      const task = TASKS.find((t) => prompt.includes(String(t.body.objective))) ?? TASKS[0]!;
      switch (req.response_format.json_schema.name) {
        case "Plan":
          return reply({ objective: task.body.objective, approach: ["read", "compute", "write"], output_contract: "as the checks say", checks: [] });
        case "Inspection":
          return reply({ verified: true, failing_checks: [], diagnosis: "looks right", fix_hint: "" });
        default: {
          const refining = prompt.includes("Write a different solution") || prompt.includes("What really happened");
          return reply({ filename: "solution.py", language: "python", source: refining ? task.right : task.wrong, notes: "" });
        }
      }
    }),
  );
}

const real = process.env.OPENAI_COMPATIBLE_BASE_URL !== undefined;
const fake = real ? undefined : await startFake();
const stack = await startStack({
  ...process.env,
  OPENAI_COMPATIBLE_BASE_URL: fake?.baseURL ?? process.env.OPENAI_COMPATIBLE_BASE_URL,
  OPENAI_COMPATIBLE_MODEL: process.env.OPENAI_COMPATIBLE_MODEL ?? "fake-coder",
  QUEUE_PREFIX: `loopsmith-bench-arms-${process.pid}`,
});
try {
  console.log(`provider: ${real ? `${process.env.OPENAI_COMPATIBLE_BASE_URL} (${process.env.OPENAI_COMPATIBLE_MODEL ?? "server default"})` : "the fake OpenAI-compatible server (scripted replies)"}; ${TASKS.length} tasks x ${repeats}`);
  const rows: { arm: string; verified: number; goals: number; attempts: number; calls: number; tokens: number; cost: number }[] = [];
  for (const arm of arms) {
    const row = { arm, verified: 0, goals: 0, attempts: 0, calls: 0, tokens: 0, cost: 0 };
    for (let r = 0; r < repeats; r++) {
      for (const t of TASKS) {
        const { goal } = await runGoal<GoalView>(stack, { ...t.body, ...ARMS[arm], model: { provider: "openai-compatible" } });
        row.goals++;
        if (goal.state === "verified") row.verified++;
        row.attempts += goal.attempts;
        row.calls += goal.cost.model_calls;
        row.tokens += goal.cost.tokens_in + goal.cost.tokens_out;
        row.cost += goal.cost.cost_usd;
        console.log(`  ${arm.padEnd(10)} ${t.name.padEnd(24)} ${goal.state.padEnd(9)} attempts ${goal.attempts}  model calls ${goal.cost.model_calls}  tokens ${goal.cost.tokens_in + goal.cost.tokens_out}`);
      }
    }
    rows.push(row);
  }
  console.log(`\n${"arm".padEnd(11)} ${"verified".padStart(9)} ${"attempts".padStart(9)} ${"mean".padStart(6)} ${"calls".padStart(6)} ${"tokens".padStart(8)} ${"cost $".padStart(9)}`);
  for (const r of rows) {
    console.log(
      `${r.arm.padEnd(11)} ${`${r.verified}/${r.goals}`.padStart(9)} ${String(r.attempts).padStart(9)} ${(r.attempts / r.goals).toFixed(2).padStart(6)} ${String(r.calls).padStart(6)} ${String(r.tokens).padStart(8)} ${r.cost.toFixed(4).padStart(9)}`,
    );
  }
  if (!real) {
    console.log("\nThe fake server's replies are scripted (wrong first, right when refining) and identical for every candidate, so the");
    console.log("loop arms are equal by construction (best-of-3 only costs more): this run shows that the bench and its arms work,");
    console.log("not which arm is better. Point OPENAI_COMPATIBLE_BASE_URL at a real model for that.");
  }
} finally {
  await stack.stop();
  await fake?.close();
}
