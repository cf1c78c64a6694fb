// Records the replay fixtures again (issue 15): runs the reference goals (scripts/replay/reference.ts) on
// a loop in this process, the real sandbox and checks, and writes each goal's export, as
// GET /goals/:id/script returns it, to tests/fixtures/replay/<name>.json.
//
//   DATABASE_URL=... npx tsx scripts/replay/record.ts [--out tests/fixtures/replay]
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { parseArgs } from "node:util";
import { startFakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { startLoop } from "../../tests/support/loop";
import { demoGoal } from "../demo/scenario";
import { csvCleaningGoal, csvCleaningReplies } from "./reference";

const { values } = parseArgs({ options: { out: { type: "string", default: "tests/fixtures/replay" } } });
const fake = await startFakeOpenAI(csvCleaningReplies());
const loop = await startLoop({ env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: "fake-coder" } });
try {
  for (const [name, body] of [["demo", demoGoal()], ["csv-cleaning", csvCleaningGoal()]] as const) {
    const goal = await loop.run(body);
    const res = await loop.request("GET", `/goals/${goal.id}/script`);
    if (res.status !== 200) throw new Error(`export of ${name}: ${res.status} ${JSON.stringify(res.body)}`);
    const file = path.join(values.out, `${name}.json`);
    await writeFile(file, JSON.stringify(res.body, null, 2) + "\n");
    console.log(`${file}: ${goal.state}, ${goal.tape}`);
  }
} finally {
  await loop.close();
  await fake.close();
}
