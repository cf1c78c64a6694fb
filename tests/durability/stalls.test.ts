// Runners SIGKILLed again and again during one step: a stall (a try whose runner died) counts like a
// failed try, so a goal survives any number of kills below STEP_ATTEMPTS and is parked in errored, the
// dead-letter list, once they are spent, whichever way the tries ended.
import { afterAll, describe, expect, it } from "vitest";
import { EXPECTED_TAPE, program, SCRIPT_CRASHES, scriptedGoal } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";
import { spawnRunner, startRunnerProcess, type RunnerProcess } from "../support/runner-process";
import { containersOf, sleep, tapeRows, TERMINAL, waitUntil } from "./helpers";

/** The demo goal whose first program sleeps before it crashes: time to kill its runner mid-execution. */
const SLEEPY_FIRST = `import time\ntime.sleep(4)\n${SCRIPT_CRASHES}`;
const sleepyGoal = () => scriptedGoal({ generate: program(SLEEPY_FIRST, "First version: sum revenue per region.") });

// A short sweep quiet time: on the old code the twice-stalled job failed in BullMQ and only the sweep
// parked the goal; with the default 60 s that would read as a timeout instead of the wrong end state.
const RUNNER_ENV = { SWEEP_QUIET_MS: "3000" };

const loops: Loop[] = [];
const started: RunnerProcess[] = [];
afterAll(async () => {
  await Promise.allSettled(started.map((r) => r.kill()));
  for (const l of loops) await l.close().catch(() => undefined);
});

/** Two runners up at all times: the one holding the step is killed, a fresh one takes its place. */
async function crew(prefix: string, name: string, env: Record<string, string>) {
  const alive = new Map<string, RunnerProcess>();
  let n = 0;
  const add = (r: RunnerProcess) => {
    started.push(r);
    alive.set(r.id, r);
    return r;
  };
  await Promise.all([1, 2].map(async () => add(await startRunnerProcess({ prefix, id: `${name}-${++n}`, env }))));
  return {
    alive,
    /** Kills the runner, and starts its replacement without waiting for it to be ready. */
    async replace(id: string) {
      const killed = await alive.get(id)!.kill();
      expect(killed.signal).toBe("SIGKILL");
      alive.delete(id);
      add(spawnRunner({ prefix, id: `${name}-${++n}`, env }));
    },
  };
}

/**
 * The step's job and the live runner holding it once it picked the job up after `after` and runs the
 * program (its sandbox container is up).
 */
async function holder(loop: Loop, jobId: string, alive: Map<string, RunnerProcess>, after: number) {
  const goalId = jobId.replace(/-v\d+$/, "");
  return waitUntil(`a runner to pick up ${jobId} again and run the program`, async () => {
    const goal = (await loop.get(goalId)).body;
    if (goal.state !== "execute") throw new Error(`the goal left execute before the next pickup: ${goal.tape}; ${JSON.stringify(goal.transitions.at(-1)?.detail)}`);
    const job = await loop.queue.getJob(jobId);
    if (!job?.processedOn || job.processedOn <= after || !job.processedBy || !alive.has(job.processedBy)) return null;
    const running = (await containersOf(job.processedBy, "program")).some((c) => c.state === "running");
    return running ? { id: job.processedBy, pickedAt: job.processedOn } : null;
  }, 60_000, 50);
}

/** Submits the sleepy goal and returns its id and the job id of its EXECUTE step. */
async function submit(loop: Loop) {
  const res = await loop.post(sleepyGoal());
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  const atExecute = await loop.waitForEnd(id, 60_000, ["execute", ...TERMINAL, "errored"]);
  expect(atExecute.state, `tape: ${atExecute.tape}; last detail: ${JSON.stringify(atExecute.transitions.at(-1)?.detail)}`).toBe("execute");
  return { id, jobId: `${id}-v${atExecute.transitions.at(-1)!.seq}` };
}

/** Kills the runner running the step's program `kills` times in a row, each time after a new pickup. */
async function killDuringStep(loop: Loop, jobId: string, runners: Awaited<ReturnType<typeof crew>>, kills: number) {
  const killed: string[] = [];
  let after = 0;
  for (let i = 0; i < kills; i++) {
    const h = await holder(loop, jobId, runners.alive, after);
    // Inside the program's time.sleep by now.
    await sleep(500);
    after = Date.now();
    await runners.replace(h.id);
    killed.push(h.id);
  }
  return killed;
}

describe("issue 16.6: stalls count like failed tries of a step", () => {
  it("two runners killed during the same EXECUTE step: the goal still finishes, like an uninterrupted run", async () => {
    const loop = await startLoop({ runner: false });
    loops.push(loop);
    const runners = await crew(loop.prefix, "stall-two", RUNNER_ENV);
    const { id, jobId } = await submit(loop);

    const killed = await killDuringStep(loop, jobId, runners, 2);
    const goal = await loop.waitForEnd(id, 120_000);
    expect(goal.state, `tape: ${goal.tape}; last detail: ${JSON.stringify(goal.transitions.at(-1)?.detail)}`).toBe("verified");
    expect(goal.tape).toBe(EXPECTED_TAPE);
    const rows = await tapeRows(loop.prisma, id);
    expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i));
    // The killed runs left no execution behind: the third try ran the program to its end, once counted.
    expect(goal.executions.map((e) => e.attempt)).toEqual([1, 2, 3]);
    expect(goal.executions[0]!.duration_ms).toBeGreaterThanOrEqual(4000);
    const job = await loop.queue.getJob(jobId);
    // Two tries ended with their runner gone; BullMQ counts only the third, which completed, in attemptsMade.
    expect([job?.stalledCounter, job?.attemptsMade, await job?.getState()]).toEqual([2, 1, "completed"]);
    expect(killed).toHaveLength(2);
    expect(job?.processedBy).not.toBe(killed[0]);
    expect(job?.processedBy).not.toBe(killed[1]);
  }, 180_000);

  it("STEP_ATTEMPTS kills during one step park the goal in errored, saying its runner stopped on every try", async () => {
    const env = { STEP_ATTEMPTS: "3", STEP_BACKOFF_MS: "100" };
    const loop = await startLoop({ runner: false, env });
    loops.push(loop);
    const runners = await crew(loop.prefix, "stall-cap", { ...RUNNER_ENV, ...env });
    const { id, jobId } = await submit(loop);

    await killDuringStep(loop, jobId, runners, 3);
    const goal = await loop.waitForEnd(id, 60_000);
    expect(goal.state).toBe("errored");
    expect(goal.tape).toBe("plan → generate → execute → errored");
    const parked = goal.transitions.at(-1)!;
    expect(parked).toMatchObject({ from: "execute", to: "errored", detail: { tries: 3, stalls: 3, error_code: "LS_ERR_INTERNAL" } });
    expect(String(parked.detail.error)).toMatch(/runner stopped before the step ended .* on 3 of 3 tries/);
    // The fourth pickup parked the goal instead of starting the program again.
    expect(goal.executions).toEqual([]);
    const job = await loop.queue.getJob(jobId);
    expect(job?.stalledCounter).toBe(3);
    const parker = runners.alive.get(job!.processedBy!);
    expect(parker?.output()).toMatch(/"msg":"goal step out of tries"/);
  }, 180_000);
});
