// Real runs become regression tests (issue 15): a finished goal exported with GET /goals/:id/script
// replays through POST /goals to the same tape, the programs and checks really running again; the
// reference fixtures (tests/fixtures/replay) replay to the tapes they recorded; a changed check makes a
// replay differ and the comparison names the check; hidden checker material stays out of every
// model-visible part of an export.
import { randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "@loopsmith/db";
import { compareRuns, describeComparison } from "@loopsmith/replay";
import type { GoalScript } from "@loopsmith/schemas";
import { startFakeOpenAI, type FakeOpenAI, type FakeReply } from "../../packages/models/test/support/fake-openai";
import { startLoop, type Loop } from "../support/loop";

const FIXTURES = new URL("../fixtures/replay/", import.meta.url);
const replies: FakeReply[] = [];
let fake: FakeOpenAI;
let loop: Loop;

beforeAll(async () => {
  fake = await startFakeOpenAI(replies);
  loop = await startLoop({ env: { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: "fake-coder" } });
});
afterAll(async () => {
  await loop?.close();
  await fake?.close();
});

async function fixture(name: string): Promise<GoalScript> {
  return JSON.parse(await readFile(new URL(name, FIXTURES), "utf8")) as GoalScript;
}

async function exported(id: string): Promise<GoalScript> {
  const res = await loop.request("GET", `/goals/${id}/script`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as unknown as GoalScript;
}

const PREFIX = "LSCAN" + "ARY";
const reply = (o: unknown) => ({ content: JSON.stringify(o), usage: { prompt_tokens: 100, completion_tokens: 50 } });

describe("export and replay", () => {
  it("an exported goal replays offline to the same tape; hidden material is in no model-visible part", async () => {
    const canary = `${PREFIX}-${randomBytes(8).toString("hex")}`;
    const program = `import json, os\njson.dump({"answer": "guess"}, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))\n`;
    replies.push(
      reply({ objective: "answer", approach: ["guess"], output_contract: "result.json", checks: [] }),
      reply({ filename: "solution.py", language: "python", source: program, notes: "" }),
      reply({ verified: true, failing_checks: [], diagnosis: "done", fix_hint: "" }),
    );
    const original = await loop.run({
      objective: "Answer the hidden question.",
      inputs: [{ name: "data.csv", text: "id\n1\n" }],
      checker_files: [{ name: "expected.txt", text: `${canary}\n` }],
      checks: [
        { id: "json_matches", hidden: true, params: { artifact: "result.json", pointer: "/answer", expected: canary } },
        { id: "text_matches", params: { artifact: "result.json", expected_file: "expected.txt" } },
      ],
      max_attempts: 1,
      model: { provider: "openai-compatible" },
    });
    expect(original.tape).toBe("plan → generate → execute → inspect → failed");

    const script = await exported(original.id);
    expect(script.gaps).toEqual([]);
    expect(script.original).toMatchObject({ state: "failed", tape: original.tape, provider: "openai-compatible", model: "fake-coder" });
    expect(script.body.model).toMatchObject({ provider: "scripted", script: { inspect: [{ verified: true }], refine: [] } });
    // Model-visible parts: what the models were given and what they answered.
    const { checker_files, checks, ...visible } = script.body;
    for (const [part, value] of Object.entries(visible)) expect(JSON.stringify(value), part).not.toContain(canary.slice(PREFIX.length));
    for (const c of checks.filter((c) => !c.hidden)) expect(JSON.stringify(c)).not.toContain(canary.slice(PREFIX.length));
    // The owner's checker material is there, in its own part.
    expect(checker_files).toEqual([{ name: "expected.txt", text: `${canary}\n` }]);
    expect(checks.find((c) => c.id === "json_matches")).toMatchObject({ hidden: true, params: { expected: canary } });
    // Another tenant cannot export it.
    expect((await loop.request("GET", `/goals/${original.id}/script`, { key: "lsk_unknown" })).status).toBe(401);

    const calls = fake.requests.length;
    const replayed = await loop.run(script.body);
    expect(fake.requests.length, "the replay asked no model").toBe(calls);
    const cmp = compareRuns(script.original, replayed);
    expect(cmp.same, describeComparison(cmp).join("\n")).toBe(true);
    expect(replayed.tape).toBe(original.tape);
    // The programs really ran again.
    expect(replayed.executions).toHaveLength(1);
  });

  it("the reference fixtures replay to the tapes they recorded", async () => {
    const names = (await readdir(FIXTURES)).filter((n) => n.endsWith(".json")).sort();
    expect(names).toEqual(["csv-cleaning.json", "demo.json"]);
    for (const name of names) {
      const f = await fixture(name);
      const replayed = await loop.run(f.body);
      const cmp = compareRuns(f.original, replayed);
      expect(cmp.same, `${name}:\n${describeComparison(cmp).join("\n")}`).toBe(true);
      expect(replayed.tape).toBe(f.original.tape);
    }
  });

  it("a changed check makes the replay differ, and the comparison names the check", async () => {
    const f = await fixture("csv-cleaning.json");
    // The answer key now wants West's revenue rounded the other way: the last attempt no longer matches.
    const body = structuredClone(f.body);
    const key = body.checker_files[0]!;
    expect(key.name).toBe("expected.csv");
    key.text = key.text!.replace("West,12.35", "West,12.34");
    const replayed = await loop.run(body);
    const cmp = compareRuns(f.original, replayed);
    expect(cmp.same).toBe(false);
    expect(cmp.state).toEqual({ original: "verified", replayed: "failed" });
    expect(cmp.checks).toEqual([expect.objectContaining({ attempt: 2, id: "csv_matches", original: true, replayed: false })]);
    expect(describeComparison(cmp).join("\n")).toMatch(/check csv_matches \(attempt 2, #\d\): pass → FAIL/);
  });

  it("only a goal that ended can be exported; an unknown goal is a 404", async () => {
    expect((await loop.request("GET", "/goals/00000000-0000-4000-8000-000000000000/script")).body).toMatchObject({ error: { code: "LS_ERR_NOT_FOUND" } });
    const queued = await loop.prisma.goal.findFirstOrThrow({ where: { tenantId: loop.tenant.tenant_id }, select: { id: true } });
    await loop.prisma.goal.update({ where: { id: queued.id }, data: { state: "execute" } });
    const res = await loop.request("GET", `/goals/${queued.id}/script`);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: { code: "LS_ERR_GOAL_STATE" } });
  });
});

/** A one-file goal on the scripted model: each program writes {"answer": n}; the check wants 42. */
function answerGoal(programs: number[], inspector: boolean[]) {
  const code = (n: number, i: number) => ({
    filename: "answer.py",
    language: "python",
    source: `import json, os\n# attempt ${i + 1}\njson.dump({"answer": ${n}}, open(os.path.join(os.environ["OUTPUT_DIR"], "result.json"), "w"))\n`,
    notes: "",
  });
  return {
    objective: "Write the answer.",
    checks: [{ id: "json_matches", params: { artifact: "result.json", pointer: "/answer", expected: 42 } }],
    max_attempts: programs.length,
    model: {
      provider: "scripted",
      script: {
        plan: { objective: "answer", approach: ["write it"], output_contract: "result.json", checks: [] },
        generate: code(programs[0]!, 0),
        inspect: inspector.map((verified) => ({ verified, failing_checks: [], diagnosis: verified ? "right" : "wrong", fix_hint: "" })),
        refine: programs.slice(1).map((n, i) => code(n, i + 1)),
      },
    },
  };
}

describe("GET /reports/judges", () => {
  it("counts the inspector/check disagreements the scripted model arranged, and what the false rejects cost", async () => {
    // A tenant of its own, so that only these goals count.
    const t = await createTenant(loop.prisma, { name: `${loop.prefix}-judges`, secretBox: loop.secretBox });
    const since = new Date(Date.now() - 1000).toISOString();
    const run = async (body: unknown) => {
      const res = await loop.request("POST", "/goals", { body, key: t.api_key });
      expect(res.status, JSON.stringify(res.body)).toBe(202);
      const id = res.body.id as string;
      for (;;) {
        const g = await loop.request("GET", `/goals/${id}`, { key: t.api_key });
        if (["verified", "failed"].includes(g.body.state as string)) return g.body as unknown as { id: string; tape: string };
        await new Promise((r) => setTimeout(r, 150));
      }
    };
    // A false accept: verified said over a wrong answer; the veto stops it and the one attempt is spent.
    const accept = await run(answerGoal([41], [true]));
    // A false reject: the right answer called wrong, one more attempt spent on it.
    const reject = await run(answerGoal([42, 42], [false, true]));
    expect(accept.tape).toBe("plan → generate → execute → inspect → failed");
    expect(reject.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → verified");
    const spent = await loop.prisma.modelCall.findMany({ where: { goalId: reject.id, OR: [{ state: "refine", attempt: 1 }, { state: "inspect", attempt: 2 }] } });
    const tokens = spent.reduce((s, c) => s + c.tokensIn + c.tokensOut, 0);

    const res = await loop.request("GET", `/reports/judges?since=${encodeURIComponent(since)}`, { key: t.api_key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const counts = { goals: 2, inspections: 3, agree: 1, false_accepts: 1, false_rejects: 1, false_reject_attempts: 1, false_reject_tokens: tokens, false_reject_cost_usd: 0 };
    expect(res.body.tenant).toEqual(counts);
    expect(res.body.by_model).toEqual([{ provider: "scripted", model: "scripted", ...counts }]);
    expect(res.body.by_check).toEqual([{ id: "json_matches", false_accepts: 1 }]);
    const goals = res.body.goals as { goal_id: string; false_accepts: number; false_rejects: number; vetoed_by: string[] }[];
    expect(goals.map((g) => [g.goal_id, g.false_accepts, g.false_rejects, g.vetoed_by])).toEqual([
      [reject.id, 0, 1, []],
      [accept.id, 1, 0, ["json_matches"]],
    ]);
    // Only the calling tenant's goals: the loop's own tenant has others, this one sees none of them.
    const mine = await loop.request("GET", `/reports/judges?since=${encodeURIComponent(since)}`);
    expect((mine.body.goals as { goal_id: string }[]).map((g) => g.goal_id)).not.toContain(accept.id);
    const bad = await loop.request("GET", "/reports/judges?since=yesterday", { key: t.api_key });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: "LS_ERR_VALIDATION", details: [{ path: "querystring.since" }] } });
  });
});
