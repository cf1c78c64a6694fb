// A runner process killed the hard way (SIGKILL) at each dangerous point of a step, and a second runner
// process picking the goal up: the goal must end exactly once with the tape of an uninterrupted run, no
// model answer that was delivered may be asked for again, and the dead runner's container must go.
//   (a) during a model call      (b) during an execution      (c) between a commit and the enqueue
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import { EXPECTED_REPORT, EXPECTED_TAPE, program, SCRIPT_CRASHES, scriptedGoal } from "../../scripts/demo/scenario";
import { startLoop, type GoalView, type Loop } from "../support/loop";
import { randomPrefix, REDIS_URL } from "../support/services";
import { spawnRunner, startRunnerProcess, type RunnerProcess } from "../support/runner-process";
import { containersOf, FAKE_USAGE, fakeEnv, fakeGoal, fakeProvider, schemaOf, settledCalls, sleep, tapeRows, TERMINAL, waitUntil } from "./helpers";

/** The demo goal whose first program sleeps before it crashes: time to kill a runner mid-execution. */
const SLEEPY_FIRST = `import time\ntime.sleep(3)\n${SCRIPT_CRASHES}`;
const sleepyGoal = () => scriptedGoal({ generate: program(SLEEPY_FIRST, "First version: sum revenue per region.") });

interface Reference {
  goal: GoalView;
  calls: Awaited<ReturnType<typeof settledCalls>>;
  executions: number;
  fake?: { requests: string[]; completed: string[] };
}

async function reference(loop: Loop, body: unknown, fake?: FakeOpenAI): Promise<Reference> {
  const goal = await loop.run(body);
  expect(goal.state).toBe("verified");
  return {
    goal,
    calls: await settledCalls(loop.prisma, goal.id),
    executions: goal.executions.length,
    fake: fake && { requests: fake.requests.map(schemaOf), completed: fake.completed.map(schemaOf) },
  };
}

/**
 * What every crash point must satisfy once the second runner finished the goal. `possiblyBilled`: model
 * calls the crash cut off, which stay in the ledger (at their reserved estimate) besides the reference's.
 */
async function assertLikeReference(loop: Loop, id: string, ref: Reference, deadRunner: string, possiblyBilled = 0) {
  const goal = await loop.waitForEnd(id, 60_000);
  // Let anything still in flight land: a second ending would show up as a second terminal row.
  await sleep(1000);
  const rows = await tapeRows(loop.prisma, id);
  const final = (await loop.get(id)).body;
  expect(final.state).toBe(ref.goal.state);
  expect(rows.filter((r) => TERMINAL.includes(r.toState))).toHaveLength(1);
  expect(final.tape).toBe(ref.goal.tape);
  expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i));
  expect(final.attempts).toBe(ref.goal.attempts);
  expect(final.executions.map((e) => e.attempt)).toEqual(ref.goal.executions.map((e) => e.attempt));
  // Each recorded execution ran to its own end (a container removed under it would say 137).
  expect(final.executions.map((e) => e.exit_code)).toEqual(ref.goal.executions.map((e) => e.exit_code));
  expect(final.report).toEqual(ref.goal.report);

  const calls = await settledCalls(loop.prisma, id);
  expect(calls.count).toBe(ref.calls.count);
  expect(calls.byState).toEqual(ref.calls.byState);
  // Output tokens exactly. Input tokens within one per call: the scripted model estimates them from the
  // prompt's length (~4 characters a token), and the inspect and refine prompts carry each run's measured
  // duration ("exit code 0 after 87 ms"), whose digit count differs from run to run. A call billed twice
  // would add its whole prompt (hundreds of tokens), far outside this.
  expect(calls.tokensOut).toBe(ref.calls.tokensOut);
  expect(Math.abs(calls.tokensIn - ref.calls.tokensIn), `${calls.tokensIn} tokens in, reference ${ref.calls.tokensIn}`).toBeLessThanOrEqual(ref.calls.count);
  // No reservation is left unsettled: what the goal is charged is what was answered, plus the calls a
  // crash cut off, each kept as possibly billed (issue 16.8).
  expect(calls.all.filter((c) => c.error?.startsWith("reserved"))).toEqual([]);
  const aborted = calls.all.filter((c) => c.response === null);
  expect(aborted.map((c) => c.error?.slice(0, "possibly billed".length))).toEqual(Array(possiblyBilled).fill("possibly billed"));
  expect(final.cost.possibly_billed_calls).toBe(possiblyBilled);
  expect(final.cost.model_calls).toBe(ref.goal.cost.model_calls + possiblyBilled);
  const abortedTokens = [aborted.reduce((n, c) => n + c.tokensIn, 0), aborted.reduce((n, c) => n + c.tokensOut, 0)];
  // The goal is charged exactly what its ledger holds: the settled calls and the aborted ones.
  expect([final.cost.tokens_in, final.cost.tokens_out]).toEqual([calls.tokensIn + abortedTokens[0]!, calls.tokensOut + abortedTokens[1]!]);

  // The dead runner's containers are removed by the live runner's sweep once its heartbeat expired.
  const left = await waitUntil(`the containers of ${deadRunner} to be removed`, async () => ((await containersOf(deadRunner, undefined, { withIdle: true })).length === 0 ? "gone" : null), 15_000, 250);
  return { goal, final, rows, calls, containersLeft: left === "gone" ? 0 : -1 };
}

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 3 });
const runners: RunnerProcess[] = [];
const fakes: FakeOpenAI[] = [];
const loops: Loop[] = [];
async function runner(prefix: string, id: string, env: Record<string, string> = {}) {
  const r = await startRunnerProcess({ prefix, id, env });
  runners.push(r);
  return r;
}
async function newLoop(env: Record<string, string> = {}) {
  const loop = await startLoop({ runner: false, env });
  loops.push(loop);
  return loop;
}

// A live runner on another queue prefix, sharing the Docker engine for the whole file. It can see none of
// these runners' heartbeats, so it must leave their containers alone (regression: its sweep used to
// remove every container whose owner had no heartbeat under its own prefix, live runners' included).
let bystander: RunnerProcess;

let scriptedRef: Reference;
let fakeRef: Reference;
const observed: string[] = [];
const note = (line: string) => {
  observed.push(line);
  console.log(`[crash-resume] ${line}`);
};

beforeAll(async () => {
  bystander = await runner(randomPrefix("bystander"), "bystander");
  // The references: the same goals, uninterrupted, on an in-process runner.
  const fake = await fakeProvider();
  fakes.push(fake);
  const loop = await startLoop({ env: fakeEnv(fake) });
  loops.push(loop);
  scriptedRef = await reference(loop, sleepyGoal());
  expect(scriptedRef.goal.tape).toBe(EXPECTED_TAPE);
  expect(scriptedRef.goal.report).toEqual(EXPECTED_REPORT);
  fakeRef = await reference(loop, fakeGoal(), fake);
  expect(fakeRef.goal.tape).toBe("plan → generate → execute → inspect → verified");
  expect(fakeRef.fake!.requests).toEqual(["Plan", "GeneratedCode", "Inspection"]);
  note(`reference (scripted): ${scriptedRef.goal.tape}; ${scriptedRef.calls.count} settled calls, ${scriptedRef.calls.tokensIn}+${scriptedRef.calls.tokensOut} tokens`);
  note(`reference (fake provider): ${fakeRef.goal.tape}; ${fakeRef.calls.count} settled calls, ${fakeRef.calls.tokensIn}+${fakeRef.calls.tokensOut} tokens; fake answered ${fakeRef.fake!.completed.join(", ")}`);
});

afterAll(async () => {
  await Promise.allSettled(runners.map((r) => r.kill()));
  for (const l of loops) await l.close().catch(() => undefined);
  for (const f of fakes) await f.close().catch(() => undefined);
  await redis.quit();
  console.log(`[crash-resume] summary:\n  ${observed.join("\n  ")}`);
});

describe("a runner SIGKILLed mid-step, a second runner resumes the goal", () => {
  it("(a) during a model call: the unanswered call is asked again once, every delivered answer is reused", async () => {
    const fake = await fakeProvider({ firstGenerate: { delayMs: 15_000 } });
    fakes.push(fake);
    const loop = await newLoop(fakeEnv(fake));
    const a = await runner(loop.prefix, "crash-a-1", fakeEnv(fake));
    const res = await loop.post(fakeGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;

    // The generator's request reached the provider, whose answer is 15 s away: kill the runner now.
    await waitUntil("the generate request at the fake provider", () => fake.requests.some((r) => schemaOf(r) === "GeneratedCode"), 30_000, 20);
    const reserved = await loop.prisma.modelCall.findMany({ where: { goalId: id, state: "generate" } });
    const killed = await a.kill();
    expect(killed.signal).toBe("SIGKILL");
    const atCrash = (await loop.get(id)).body;
    expect(atCrash.state).toBe("generate");
    // The reservation made before the call is there, unsettled.
    expect(reserved).toHaveLength(1);
    expect(reserved[0]!.response).toBeNull();
    expect(reserved[0]!.error).toMatch(/^reserved/);

    const b = await runner(loop.prefix, "crash-a-2", fakeEnv(fake));
    const { final, calls } = await assertLikeReference(loop, id, fakeRef, a.id, 1);
    await b.stop();
    // The fake never wrote the first generate answer (its client was dead): that request, and only that
    // one, was sent again. Every answer the provider delivered was delivered exactly once.
    await waitUntil("the abandoned answer to be dropped by the fake", () => fake.aborted.length === 1, 20_000, 100);
    expect(fake.requests.map(schemaOf)).toEqual(["Plan", "GeneratedCode", "GeneratedCode", "Inspection"]);
    expect(fake.completed.map(schemaOf)).toEqual(fakeRef.fake!.completed);
    expect(fake.aborted.map(schemaOf)).toEqual(["GeneratedCode"]);
    // issue 16.8: the ledger counts the aborted call. The provider had the killed request and may bill it,
    // so its reservation stays, marked possibly billed, beside the settled row of its retry (which the
    // retry reserved afresh under the request's own key), and the budget counts both.
    const generateRows = calls.all.filter((c) => c.state === "generate");
    expect(generateRows).toHaveLength(2);
    const [settledGenerate, abortedGenerate] = [generateRows.find((c) => c.response !== null)!, generateRows.find((c) => c.response === null)!];
    expect([settledGenerate.tokensIn, settledGenerate.tokensOut]).toEqual([...FAKE_USAGE.GeneratedCode]);
    expect(abortedGenerate).toMatchObject({ id: reserved[0]!.id, tokensIn: reserved[0]!.tokensIn, tokensOut: reserved[0]!.tokensOut, costUsd: reserved[0]!.costUsd });
    expect(abortedGenerate.error).toMatch(/^possibly billed: the runner making this call stopped before the answer came back/);
    expect(abortedGenerate.requestHash).toBe(`${settledGenerate.requestHash}:possibly-billed:${reserved[0]!.id}`);
    expect(abortedGenerate.costUsd).toBeGreaterThan(0);
    expect(final.cost.cost_usd).toBeCloseTo(fakeRef.goal.cost.cost_usd + abortedGenerate.costUsd, 9);
    note(
      `(a) model call: killed ${a.id} while the fake held the generate answer; tape after resume: ${final.tape}; ` +
        `fake requests ${fake.requests.map(schemaOf).join(", ")} (aborted: ${fake.aborted.map(schemaOf).join(", ")}; completed: ${fake.completed.map(schemaOf).join(", ")}); ` +
        `billed ${calls.count} settled calls, ${calls.tokensIn}+${calls.tokensOut} tokens (reference ${fakeRef.calls.count}, ${fakeRef.calls.tokensIn}+${fakeRef.calls.tokensOut}) ` +
        `and ${final.cost.possibly_billed_calls} possibly billed (${abortedGenerate.tokensIn}+${abortedGenerate.tokensOut} tokens reserved); containers of ${a.id} left: 0`,
    );
  });

  it("(b) during an execution: the orphaned container is removed and the execution runs again, once counted", async () => {
    const loop = await newLoop();
    // Pooled (runner processes default to none): the killed runner's idle containers are leftovers too.
    const a = await runner(loop.prefix, "crash-b-1", { SANDBOX_POOL_SIZE: "1" });
    const res = await loop.post(sleepyGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;

    const seen = await waitUntil("the sandbox container of the first execution, running", async () => {
      const c = await containersOf(a.id, "program");
      return c.some((x) => x.state === "running") ? c : null;
    }, 30_000, 50);
    // Inside its time.sleep(3) by now.
    await sleep(500);
    const killed = await a.kill();
    expect(killed.signal).toBe("SIGKILL");
    const atCrash = (await loop.get(id)).body;
    expect(atCrash.state).toBe("execute");
    expect(atCrash.executions).toHaveLength(0);
    // Docker does not know the runner died: its container is still there.
    const orphaned = await containersOf(a.id, "program");
    expect(orphaned.map((c) => c.id)).toEqual(seen.map((c) => c.id));

    const b = await runner(loop.prefix, "crash-b-2");
    const { final, calls } = await assertLikeReference(loop, id, scriptedRef, a.id);
    await b.stop();
    expect(final.executions[0]!.duration_ms).toBeGreaterThanOrEqual(3000);
    const removedBy = /removed (leftover sandbox containers|sandbox containers of dead runners)/.exec(b.output())?.[0] ?? "(not logged)";
    note(
      `(b) execution: killed ${a.id} while its container ${seen.map((c) => `${c.id} (${c.state})`).join(", ")} ran the program; tape after resume: ${final.tape}; ` +
        `executions ${final.executions.length} (reference ${scriptedRef.executions}); billed ${calls.count} settled calls, ${calls.tokensIn}+${calls.tokensOut} tokens ` +
        `(reference ${scriptedRef.calls.count}, ${scriptedRef.calls.tokensIn}+${scriptedRef.calls.tokensOut}); orphaned container gone, ${b.id} logged "${removedBy}"`,
    );
  });

  for (const state of ["execute", "plan"] as const) {
    it(`(c) between the commit out of ${state} and the enqueue of the next step (RUNNER_FAULT=after-commit:${state})`, async () => {
      const loop = await newLoop();
      const a = spawnRunner({ prefix: loop.prefix, id: `crash-c-${state}-1`, env: { RUNNER_FAULT: `after-commit:${state}` } });
      runners.push(a);
      // Regression: a starting runner is alive (its heartbeat is set) before its self-check container
      // exists; it used to start beating only after the self-check, so a live runner's sweep could remove
      // that container and fail the start-up.
      const selfCheck = await waitUntil("the self-check container", async () => (await containersOf(a.id))[0], 30_000, 20);
      expect(await redis.exists(`${loop.prefix}:runner:${a.id}`), `heartbeat while self-check container ${selfCheck.id} exists`).toBe(1);
      await a.ready();
      const res = await loop.post(sleepyGoal());
      expect(res.status).toBe(202);
      const id = res.body.id as string;

      const exit = await a.proc.exited;
      const crashedAt = Date.now();
      expect(exit.signal).toBe("SIGKILL");
      // The move is committed, and nothing scheduled the step after it.
      const atCrash = (await loop.get(id)).body;
      const next = state === "execute" ? "inspect" : "generate";
      expect(atCrash.state).toBe(next);
      const version = atCrash.transitions.at(-1)!.seq;
      expect(await loop.queue.getJob(`${id}-v${version}`)).toBeUndefined();
      const stuckJob = await loop.queue.getJob(`${id}-v${version - 1}`);
      expect(await stuckJob?.getState()).toBe("active");
      const crashTape = atCrash.tape;

      const b = await runner(loop.prefix, `crash-c-${state}-2`);
      const readyAt = Date.now();
      const { final, calls } = await assertLikeReference(loop, id, scriptedRef, a.id);
      const movedAgain = final.transitions.find((t) => t.seq === version + 1)!;
      await b.stop();
      note(
        `(c) after-commit:${state}: heartbeat set while the starting runner's self-check container ${selfCheck.id} existed; second runner ready ${readyAt - crashedAt} ms after the crash, next move at +${new Date(movedAgain.at).getTime() - crashedAt} ms, ` +
          `goal ended at +${new Date(final.finished_at!).getTime() - crashedAt} ms`,
      );
      note(
        `(c) after-commit:${state}: ${a.id} died with tape "${crashTape}" and no job for v${version}; tape after resume: ${final.tape}; ` +
          `billed ${calls.count} settled calls, ${calls.tokensIn}+${calls.tokensOut} tokens (reference ${scriptedRef.calls.count}); containers of ${a.id} left: 0`,
      );
    });
  }

  it("(regression) a live runner of another queue prefix, sweeping every second throughout, disturbed none of it", async () => {
    // Had it removed these runners' containers, a self-check would have failed a start-up, or an execution
    // would have ended early with exit 137 instead of the reference's exit codes (asserted above).
    expect(bystander.alive()).toBe(true);
    note(`bystander runner on another prefix swept every second throughout and stayed alive; every execution above kept the reference's exit code`);
  });
});
