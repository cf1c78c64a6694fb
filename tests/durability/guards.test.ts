// The guards that end a goal on purpose: the progress guard (stuck), the token and wall-clock budgets,
// the approval threshold (approve, reject, timeout), and a client's cancel in the middle of an execution.
// Each ends the goal in the state and with the reason a client can rely on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeAnswer, type FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { demoGoal, demoScript, EXPECTED_TAPE, INSPECT_VERIFIED, program, SCRIPT_CORRECT, SCRIPT_CRASHES, scriptedGoal } from "../../scripts/demo/scenario";
import { Webhook } from "standardwebhooks";
import { startReceiver } from "../../packages/webhooks/test/support";
import { startLoop, type Loop } from "../support/loop";
import { containersOf, settledCalls, sleep, tapeRows, waitUntil } from "./helpers";

// The fake model is priced so that the planner's call (20,000 prompt tokens at $100 per million) costs
// $2.01, over the $1 threshold; the estimate reserved before that first call stays under it.
const PRICEY_MODEL = "fake-pricey";
const PRICES = JSON.stringify({ [PRICEY_MODEL]: { input_per_mtok: 100, output_per_mtok: 100 } });
const THRESHOLD_USD = 1;
const USAGE = { Plan: [20_000, 100], GeneratedCode: [500, 400], Inspection: [700, 30] } as const;
type SchemaName = keyof typeof USAGE;
const schemaOf = (body: unknown) => (body as { response_format: { json_schema: { name: SchemaName } } }).response_format.json_schema.name;
const answer = (body: unknown): FakeAnswer => {
  const name = schemaOf(body);
  const content = { Plan: demoScript().plan, GeneratedCode: program(SCRIPT_CORRECT), Inspection: INSPECT_VERIFIED }[name];
  const [prompt_tokens, completion_tokens] = USAGE[name];
  return { content: JSON.stringify(content), usage: { prompt_tokens, completion_tokens } };
};
const priceyGoal = (threshold: number) => demoGoal({ model: { provider: "openai-compatible" }, approval_threshold_usd: threshold });

const NOT_YET = { verified: false, failing_checks: ["exits_clean"], diagnosis: "It crashes on the currency strings.", fix_hint: "Parse them." };

let fake: FakeOpenAI;
let loop: Loop;
let timeoutLoop: Loop;
beforeAll(async () => {
  fake = await startFakeOpenAI(Array.from({ length: 100 }, () => answer));
  const env = { OPENAI_COMPATIBLE_BASE_URL: fake.baseURL, OPENAI_COMPATIBLE_MODEL: PRICEY_MODEL, MODEL_PRICES: PRICES };
  loop = await startLoop({ env });
  timeoutLoop = await startLoop({ env, runnerEnv: { APPROVAL_TIMEOUT_SECONDS: "1" } });
});
afterAll(async () => {
  await loop?.close();
  await timeoutLoop?.close();
  await fake?.close();
});

describe("progress guard and budgets", () => {
  it("the same failing script forever ends failed/stuck at attempt 3, far from the attempt cap, with a full failure report", async () => {
    const goal = await loop.run(
      scriptedGoal({ generate: program(SCRIPT_CRASHES), inspect: [NOT_YET], refine: [program(SCRIPT_CRASHES, "Try again.")] }, { max_attempts: 10 }),
    );
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("stuck");
    expect(goal.attempts).toBe(3);
    expect(goal.max_attempts).toBe(10);
    expect(goal.tape).toBe("plan → generate → execute → inspect → refine → execute → inspect → refine → execute → inspect → failed");

    const report = goal.failure_report!;
    expect(report.stuck_hashes).toHaveLength(3);
    expect(new Set(report.stuck_hashes).size).toBe(1);
    expect(report.stuck_hashes![0]).toBe(goal.transitions.at(-1)!.detail.outcome_hash);
    // Everything a client needs to see why, without reading the whole tape.
    expect(report.reason).toBe("stuck");
    expect(report.message).toMatch(/same outcome/);
    expect(report.last_transitions.length).toBeGreaterThan(0);
    expect(report.last_transitions.at(-1)).toMatchObject({ from: "inspect", to: "failed" });
    expect(report.last_run).toMatchObject({ attempt: 3, exit_code: 1, timed_out: false, oom_killed: false });
    expect(report.last_run!.stderr_tail).toMatch(/ValueError/);
    expect(report.failing_checks.map((c) => c.id)).toEqual(expect.arrayContaining(["exits_clean", "artifact_exists"]));
    expect(report.last_diagnosis).toBe(NOT_YET.diagnosis);
    expect(report.last_script).toBe(SCRIPT_CRASHES);
    console.log(`[guards] stuck: ${goal.tape}; attempts ${goal.attempts}/${goal.max_attempts}; stuck_hashes ${report.stuck_hashes!.join(",")}`);
  });

  it("a token budget that runs out mid-loop ends failed/budget_tokens without spending past it", async () => {
    // An uninterrupted run tells what each call takes; the budget covers the first four calls (plan,
    // generate, inspect, refine) and a little, so the loop runs out after its second execution. (Half of
    // the whole run, as before, now goes on the planner alone: its prompt carries the check catalogue.)
    const full = await loop.run(demoGoal());
    expect(full.tape).toBe(EXPECTED_TAPE);
    const fullCalls = await settledCalls(loop.prisma, full.id);
    const budget = fullCalls.settled.slice(0, 4).reduce((n, c) => n + c.tokensIn + c.tokensOut, 0) + 10;

    const goal = await loop.run(demoGoal({ budget: { max_tokens: budget } }));
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("budget_tokens");
    expect(goal.cost.tokens_in + goal.cost.tokens_out).toBeLessThanOrEqual(budget);
    // Mid-loop: it got somewhere, not all the way.
    expect(goal.attempts).toBeGreaterThanOrEqual(1);
    expect(goal.transitions.length).toBeLessThan(full.transitions.length);
    const stop = goal.transitions.at(-1)!.detail as { turn: string; tokens_used: number; tokens_estimate: number; max_tokens: number };
    expect(stop.max_tokens).toBe(budget);
    expect(stop.tokens_used + stop.tokens_estimate).toBeGreaterThan(budget);
    expect(goal.failure_report).toMatchObject({ reason: "budget_tokens" });
    // Nothing left reserved: every call that ran settled.
    const calls = await settledCalls(loop.prisma, goal.id);
    expect(calls.all.filter((c) => c.response === null)).toEqual([]);
    expect(calls.tokensIn + calls.tokensOut).toBeLessThanOrEqual(budget);
    console.log(
      `[guards] token budget ${budget} (the first four calls of a full run of ${full.cost.tokens_in + full.cost.tokens_out}, plus 10): ${goal.tape}; ` +
        `spent ${goal.cost.tokens_in + goal.cost.tokens_out}; stopped before ${stop.turn} (${stop.tokens_used} used + ${stop.tokens_estimate} estimated)`,
    );
  });

  it("a wall-clock budget ends failed/budget_wall: the run is cut at what is left of it", async () => {
    const slow = `import time\ntime.sleep(20)\n${SCRIPT_CORRECT}`;
    const started = Date.now();
    const goal = await loop.run(
      scriptedGoal({ generate: program(slow), inspect: [INSPECT_VERIFIED] }, { budget: { max_wall_seconds: 2 }, execution_timeout_seconds: 60 }),
    );
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("budget_wall");
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(goal.executions).toHaveLength(1);
    expect(goal.executions[0]!.timed_out).toBe(true);
    const exec = goal.transitions.find((t) => t.from === "execute")!.detail as { timeout_ms: number; timeout_clipped_by_wall_budget?: boolean };
    expect(exec.timeout_clipped_by_wall_budget).toBe(true);
    expect(exec.timeout_ms).toBeLessThanOrEqual(2000);
    expect(goal.failure_report).toMatchObject({ reason: "budget_wall" });
    console.log(`[guards] wall budget 2 s: ${goal.tape}; run cut at ${exec.timeout_ms} ms (timed out), ended after ${goal.cost.wall_time_ms} ms`);
  });
});

describe("approval threshold", () => {
  /**
   * Mid-loop (the default): the planner's call, estimated under the $1 threshold, really costs $2.01; the
   * generator's call would go further past it, so the goal waits in GENERATE's place.
   * Up front (threshold $0.05): even the planner's estimate is over it, so no call is made at all.
   */
  async function toApproval(l: Loop, upFront = false) {
    const threshold = upFront ? 0.05 : THRESHOLD_USD;
    const before = fake.requests.length;
    const res = await l.post(priceyGoal(threshold));
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const waiting = await l.waitForEnd(id, 30_000);
    expect(waiting.state).toBe("awaiting_approval");
    const from = upFront ? "plan" : "generate";
    expect(waiting.tape).toBe(upFront ? "plan → awaiting_approval" : "plan → generate → awaiting_approval");
    expect(fake.requests.slice(before).map(schemaOf)).toEqual(upFront ? [] : ["Plan"]);
    if (!upFront) {
      expect(waiting.cost.cost_usd).toBeCloseTo(((USAGE.Plan[0] + USAGE.Plan[1]) * 100) / 1e6, 6);
      expect(waiting.cost.cost_usd).toBeGreaterThan(threshold);
    } else {
      expect(waiting.cost.cost_usd).toBe(0);
    }
    const row = waiting.transitions.at(-1)!;
    expect(row).toMatchObject({ from, to: "awaiting_approval" });
    expect(row.detail).toMatchObject({ turn: from, approval_threshold_usd: threshold });
    const d = row.detail as { cost_usd_used: number; cost_usd_estimate: number };
    expect(d.cost_usd_used + d.cost_usd_estimate).toBeGreaterThan(threshold);
    console.log(
      `[guards] approval (${upFront ? "up front" : "mid-loop"}): waiting in place of ${from}; spent $${d.cost_usd_used.toFixed(4)} + next call estimated $${d.cost_usd_estimate.toFixed(4)} > threshold $${threshold}`,
    );
    return id;
  }

  it("approve resumes the goal in the state it left, and it verifies", async () => {
    const id = await toApproval(loop);
    const approved = await loop.request("POST", `/goals/${id}/approve`, { body: {} });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.state).toBe("generate");
    const goal = await loop.waitForEnd(id, 60_000);
    expect(goal.state).toBe("verified");
    expect(goal.tape).toBe("plan → generate → awaiting_approval → generate → execute → inspect → verified");
  });

  it("approve of a goal that waited before its first call resumes PLAN, and it verifies", async () => {
    const id = await toApproval(loop, true);
    const approved = await loop.request("POST", `/goals/${id}/approve`, { body: {} });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.state).toBe("plan");
    const goal = await loop.waitForEnd(id, 60_000);
    expect(goal.tape).toBe("plan → awaiting_approval → plan → generate → execute → inspect → verified");
  });

  it("approve can raise the budget: a goal whose cost cap would stop it goes on and verifies", async () => {
    const before = fake.requests.length;
    const receiver = await startReceiver([204]);
    const res = await loop.post(
      demoGoal({ model: { provider: "openai-compatible" }, approval_threshold_usd: THRESHOLD_USD, budget: { max_cost_usd: 2.05 }, webhook: { url: receiver.url } }),
    );
    const id = res.body.id as string;
    const waiting = await loop.waitForEnd(id, 30_000);
    expect(waiting.tape).toBe("plan → generate → awaiting_approval");
    // The client hears about the request for approval, signed like every event.
    const asked = await waitUntil("the goal.awaiting_approval webhook", async () => receiver.received[0]);
    const event = new Webhook(loop.tenant.webhook_secret).verify(asked.body, asked.headers as Record<string, string>) as { type: string; data: { state: string } };
    expect(event).toMatchObject({ type: "goal.awaiting_approval", data: { state: "awaiting_approval" } });
    // Over the server's maximum: refused with its path, and the goal keeps waiting.
    const tooMuch = await loop.request("POST", `/goals/${id}/approve`, { body: { budget: { max_cost_usd: 10_000 } } });
    expect(tooMuch.status).toBe(400);
    expect(JSON.stringify(tooMuch.body)).toContain("body.budget.max_cost_usd");
    expect((await loop.get(id)).body.state).toBe("awaiting_approval");

    const approved = await loop.request("POST", `/goals/${id}/approve`, { body: { budget: { max_cost_usd: 10 }, approval_threshold_usd: null } });
    expect(approved.status, JSON.stringify(approved.body)).toBe(200);
    expect(approved.body.budgets).toMatchObject({ max_cost_usd: 10, approval_threshold_usd: null });
    const goal = await loop.waitForEnd(id, 60_000);
    expect(goal.state).toBe("verified");
    expect(fake.requests.slice(before).map(schemaOf)).toEqual(["Plan", "GeneratedCode", "Inspection"]);
    await waitUntil("the goal.verified webhook", async () => receiver.received[1]);
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual(["goal.awaiting_approval", "goal.verified"]);
    await receiver.close();
  });

  it("without approval, the same cost cap ends the goal failed/budget_cost before the call that would cross it", async () => {
    const before = fake.requests.length;
    const res = await loop.post(demoGoal({ model: { provider: "openai-compatible" }, budget: { max_cost_usd: 2.05 } }));
    const goal = await loop.waitForEnd(res.body.id as string, 30_000);
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("budget_cost");
    expect(goal.tape).toBe("plan → generate → failed");
    // The planner's $2.01 is all that was spent: the generator's call was never made.
    expect(fake.requests.slice(before).map(schemaOf)).toEqual(["Plan"]);
    expect(goal.cost.cost_usd).toBeCloseTo(2.01, 6);
    expect(goal.cost.cost_usd).toBeLessThanOrEqual(2.05);
    expect(goal.failure_report).toMatchObject({ reason: "budget_cost" });
    expect(goal.failure_report!.message).toMatch(/\$2\.05 budget/);
  });

  it("reject ends it failed/rejected", async () => {
    const id = await toApproval(loop);
    const rejected = await loop.request("POST", `/goals/${id}/reject`);
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({ state: "failed", failure_reason: "rejected" });
    // The approval-timeout job still queued for this goal finds it moved on and does nothing.
    await sleep(500);
    const goal = (await loop.get(id)).body;
    expect(goal.tape).toBe("plan → generate → awaiting_approval → failed");
    expect(goal.failure_report).toMatchObject({ reason: "rejected" });
  });

  it("no answer within APPROVAL_TIMEOUT_SECONDS ends it failed/approval_timeout", async () => {
    const id = await toApproval(timeoutLoop);
    const goal = await timeoutLoop.waitForEnd(id, 15_000, ["failed", "verified", "cancelled"]);
    expect(goal.state).toBe("failed");
    expect(goal.failure_reason).toBe("approval_timeout");
    expect(goal.tape).toBe("plan → generate → awaiting_approval → failed");
    const waited = new Date(goal.transitions.at(-1)!.at).getTime() - new Date(goal.transitions.at(-2)!.at).getTime();
    expect(waited).toBeGreaterThanOrEqual(1000);
  });
});

describe("cancel", () => {
  it("during a long execution: cancelled at once, the container is gone within seconds, and no tape row follows", async () => {
    const slow = `import time\ntime.sleep(60)\n${SCRIPT_CORRECT}`;
    const res = await loop.post(scriptedGoal({ generate: program(slow), inspect: [INSPECT_VERIFIED] }, { execution_timeout_seconds: 120 }));
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    const running = await waitUntil("the execution's container", async () => {
      const c = await containersOf(loop.prefix, "program");
      return c.some((x) => x.state === "running") ? c : null;
    }, 30_000, 50);

    const asked = Date.now();
    const cancelled = await loop.request("POST", `/goals/${id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.state).toBe("cancelled");
    expect(Date.now() - asked).toBeLessThan(2000);

    await waitUntil("the cancelled goal's container to be removed", async () => (await containersOf(loop.prefix)).length === 0, 5000, 100);
    const goneAfter = Date.now() - asked;
    const rows = await tapeRows(loop.prisma, id);
    expect(rows.at(-1)).toMatchObject({ fromState: "execute", toState: "cancelled" });
    // The abandoned step finishes without a trace: no later row, no execution recorded.
    await sleep(2500);
    expect(await tapeRows(loop.prisma, id)).toEqual(rows);
    const goal = (await loop.get(id)).body;
    expect(goal.state).toBe("cancelled");
    expect(goal.executions).toEqual([]);
    console.log(`[guards] cancel: container ${running[0]!.id} gone ${goneAfter} ms after POST /cancel; tape ${goal.tape}`);
  });
});
