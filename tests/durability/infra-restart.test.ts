// The services under a running goal go away and come back: Redis restarted empty mid-execution; Postgres
// down when an execution ends (its move cannot be written); the
// Docker engine stopped while the goal waits on a slow model, and stopped in the middle of an execution,
// both back within the step retries; and the engine down past the retry cap (the goal is parked in
// `errored`, listed as a dead letter, and an operator's retry finishes it). Whatever happens, the services
// are brought back the way scripts/setup.sh starts them before the test ends (finally + afterAll).
// Note: setup.sh runs Redis without persistence, so stopping it empties it for every user of this machine.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGoal, EXPECTED_TAPE, program, SCRIPT_CRASHES, scriptedGoal } from "../../scripts/demo/scenario";
import { startLoop, type GoalView, type Loop } from "../support/loop";
import { startRunnerProcess, type RunnerProcess } from "../support/runner-process";
import type { FakeOpenAI } from "../../packages/models/test/support/fake-openai";
import {
  containersOf, dockerUp, ensureDockerd, ensurePostgres, ensureRedis, fakeEnv, fakeGoal, fakeProvider, schemaOf, sleep, stopDockerd, stopPostgres, stopRedis, tapeRows, TERMINAL, waitUntil,
} from "./helpers";

const ADMIN_API_KEY = "durability-admin-key-0123456789abcdef";
/** The demo goal whose first program runs for a while: long enough to restart Redis under it. */
const SLOW_FIRST = `import time\ntime.sleep(4)\n${SCRIPT_CRASHES}`;
const slowGoal = () => scriptedGoal({ generate: program(SLOW_FIRST, "First version: sum revenue per region.") });

/** The runner's log lines saying a step of goal `id` failed (and will be retried or parked). */
function stepFailures(r: RunnerProcess, id: string): string[] {
  return r.output().split("\n").filter((l) => l.includes(`"goalId":"${id}"`) && l.includes('"msg":"goal step failed"'));
}

/** The runner's warnings and errors, counted by message: what the outage looked like from inside. */
function complaints(r: RunnerProcess): string {
  const counts = new Map<string, number>();
  for (const line of r.output().split("\n")) {
    try {
      const l = JSON.parse(line) as { level: number; msg: string };
      if (l.level >= 40) counts.set(l.msg, (counts.get(l.msg) ?? 0) + 1);
    } catch {
      // not a log line
    }
  }
  return [...counts].map(([m, n]) => `${m} ×${n}`).join(", ") || "none";
}

const loops: Loop[] = [];
const fakes: FakeOpenAI[] = [];
const runners: RunnerProcess[] = [];
const observed: string[] = [];
const note = (line: string) => {
  observed.push(line);
  console.log(`[infra-restart] ${line}`);
};

async function newLoop(env: Record<string, string> = {}) {
  const loop = await startLoop({ runner: false, env: { ADMIN_API_KEY, ...env } });
  // The test's own queue handles see the outage too; an unheard 'error' event would crash the test.
  for (const q of [loop.queue, loop.webhookQueue]) q.on("error", () => undefined);
  loops.push(loop);
  return loop;
}
async function runner(prefix: string, id: string, env: Record<string, string> = {}) {
  const r = await startRunnerProcess({ prefix, id, env });
  runners.push(r);
  return r;
}

async function assertLike(loop: Loop, id: string, ref: GoalView) {
  const rows = await tapeRows(loop.prisma, id);
  const goal = (await loop.get(id)).body;
  expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i));
  expect(rows.filter((r) => TERMINAL.includes(r.toState))).toHaveLength(1);
  expect(goal.state).toBe("verified");
  expect(goal.report).toEqual(ref.report);
  return goal;
}

let slowRef: GoalView;
let demoRef: GoalView;
let fakeRef: GoalView;
beforeAll(async () => {
  await Promise.all([ensureRedis(), ensureDockerd()]);
  // The references: the same goals, uninterrupted, on an in-process runner.
  const fake = await fakeProvider();
  fakes.push(fake);
  const loop = await startLoop({ env: fakeEnv(fake) });
  loops.push(loop);
  slowRef = await loop.run(slowGoal());
  demoRef = await loop.run(demoGoal());
  fakeRef = await loop.run(fakeGoal());
  for (const ref of [slowRef, demoRef]) {
    expect(ref.state).toBe("verified");
    expect(ref.tape).toBe(EXPECTED_TAPE);
  }
  expect(fakeRef.tape).toBe("plan → generate → execute → inspect → verified");
  await loop.close();
  loops.pop();
});

afterAll(async () => {
  // Services first: closing the loops needs Redis.
  await Promise.allSettled([ensureRedis(), ensureDockerd(), ensurePostgres()]);
  await Promise.allSettled(runners.map((r) => r.kill()));
  for (const l of loops) await l.close().catch(() => undefined);
  for (const f of fakes) await f.close().catch(() => undefined);
  console.log(`[infra-restart] summary:\n  ${observed.join("\n  ")}`);
});

describe("infrastructure restarts under a running goal", () => {
  it("Redis stopped during an execution and restarted empty: the goal still verifies with the reference tape", async () => {
    const loop = await newLoop();
    const r = await runner(loop.prefix, "infra-redis");
    const res = await loop.post(slowGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    await waitUntil("the first execution's container", async () => (await containersOf(r.id, "program")).some((c) => c.state === "running"), 30_000, 50);
    const stoppedAt = Date.now();
    try {
      await stopRedis();
      // Down for a while, with the program still running.
      await sleep(1500);
    } finally {
      await ensureRedis();
    }
    const restartedAt = Date.now();
    const atRestart = (await loop.get(id)).body;
    expect(atRestart.state).toBe("execute");
    expect(atRestart.executions).toHaveLength(0);

    await loop.waitForEnd(id, 60_000);
    const goal = await assertLike(loop, id, slowRef);
    expect(goal.tape).toBe(slowRef.tape);
    expect(goal.attempts).toBe(slowRef.attempts);
    expect(r.alive()).toBe(true);
    await r.stop();
    note(
      `Redis: stopped ${restartedAt - stoppedAt} ms during execution 1 (SHUTDOWN NOSAVE, restarted empty); tape ${goal.tape}; ` +
        `attempts ${goal.attempts} (reference ${slowRef.attempts}); runner survived; ended ${new Date(goal.finished_at!).getTime() - restartedAt} ms after the restart; runner warnings: ${complaints(r)}`,
    );
  });

  it("Postgres down when an execution ends: the move cannot be written, the step is retried once it is back, no attempt spent", async () => {
    const loop = await newLoop();
    const r = await runner(loop.prefix, "infra-postgres");
    const res = await loop.post(slowGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    await waitUntil("the first execution's container", async () => (await containersOf(r.id, "program")).some((c) => c.state === "running"), 30_000, 50);
    const stoppedAt = Date.now();
    try {
      await stopPostgres();
      // The program finishes while the database is gone: its result cannot be committed.
      await waitUntil("the first execution to end", async () => (await containersOf(r.id, "program")).length === 0, 30_000, 100);
      await sleep(1000);
    } finally {
      await ensurePostgres();
    }
    const restartedAt = Date.now();

    await loop.waitForEnd(id, 90_000);
    const goal = await assertLike(loop, id, slowRef);
    expect(goal.tape).toBe(slowRef.tape);
    // The uncommitted run left nothing behind and spent nothing: it simply ran again.
    expect(goal.attempts).toBe(slowRef.attempts);
    expect(goal.executions.map((e) => e.exit_code)).toEqual(slowRef.executions.map((e) => e.exit_code));
    const failures = stepFailures(r, id).length;
    expect(failures).toBeGreaterThanOrEqual(1);
    expect(r.alive()).toBe(true);
    await r.stop();
    note(
      `Postgres: stopped (-m fast) during execution 1 for ${restartedAt - stoppedAt} ms, past the program's end; the step failed ${failures} time(s) and ran again; ` +
        `tape ${goal.tape}; attempts ${goal.attempts} (reference ${slowRef.attempts}); runner warnings: ${complaints(r)}`,
    );
  });

  it("the Docker engine stopped while the goal waits in GENERATE on a slow model, back within the retry window: verified, no attempt spent", async () => {
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const fake = await fakeProvider({ firstGenerate: { gate } });
    fakes.push(fake);
    const retry = { STEP_ATTEMPTS: "5", STEP_BACKOFF_MS: "1000" };
    const loop = await newLoop({ ...retry, ...fakeEnv(fake) });
    const r = await runner(loop.prefix, "infra-docker-window", { ...retry, ...fakeEnv(fake) });
    const res = await loop.post(fakeGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    let stoppedAt = 0;
    try {
      // The generator's call is in flight (held by the fake): stop the engine under the goal.
      await waitUntil("the generate request at the fake provider", () => fake.requests.some((b) => schemaOf(b) === "GeneratedCode"), 30_000, 20);
      expect((await loop.get(id)).body.state).toBe("generate");
      stoppedAt = Date.now();
      await stopDockerd();
      open();
      // EXECUTE finds no engine: the step fails and is retried with backoff (1 s, 2 s, 4 s, 8 s).
      await waitUntil("EXECUTE to fail on the missing engine", () => r.output().includes(`"goalId":"${id}","version":2,"tries":1`), 30_000, 100);
      const mid = (await loop.get(id)).body;
      expect(mid.state).toBe("execute");
      expect(mid.attempts).toBe(0);
    } finally {
      open();
      await ensureDockerd();
    }
    const restartedAt = Date.now();
    await loop.waitForEnd(id, 60_000);
    const failures = stepFailures(r, id).length;
    expect(failures).toBeGreaterThanOrEqual(1);
    const goal = await assertLike(loop, id, fakeRef);
    expect(goal.tape).toBe(fakeRef.tape);
    expect(goal.attempts).toBe(fakeRef.attempts);
    expect(goal.executions).toHaveLength(fakeRef.executions.length);
    // Each model call was asked once: the outage cost no model spend either.
    expect(fake.requests.map(schemaOf)).toEqual(["Plan", "GeneratedCode", "Inspection"]);
    expect([goal.cost.tokens_in, goal.cost.tokens_out]).toEqual([fakeRef.cost.tokens_in, fakeRef.cost.tokens_out]);
    await r.stop();
    note(
      `dockerd stopped while GENERATE waited on the model: down ${restartedAt - stoppedAt} ms (SIGTERM, restarted as setup.sh does); EXECUTE failed ${failures} time(s) and was retried; ` +
        `tape ${goal.tape}; attempts ${goal.attempts} (reference ${fakeRef.attempts}); runner warnings: ${complaints(r)}`,
    );
  });

  it("the Docker engine stopped during an execution: the interrupted run is not the program's outcome; it runs again once the engine is back", async () => {
    const retry = { STEP_ATTEMPTS: "5", STEP_BACKOFF_MS: "1000" };
    const loop = await newLoop(retry);
    const r = await runner(loop.prefix, "infra-docker-exec", retry);
    const res = await loop.post(slowGoal());
    expect(res.status).toBe(202);
    const id = res.body.id as string;
    await waitUntil("the first execution's container", async () => (await containersOf(r.id, "program")).some((c) => c.state === "running"), 30_000, 50);
    await sleep(500);
    const stoppedAt = Date.now();
    try {
      // dockerd's own stop: it SIGTERMs every container, ours included, in the middle of the program.
      await stopDockerd();
    } finally {
      await ensureDockerd();
    }
    const restartedAt = Date.now();
    await loop.waitForEnd(id, 60_000);
    const goal = await assertLike(loop, id, slowRef);
    expect(goal.tape).toBe(slowRef.tape);
    expect(goal.attempts).toBe(slowRef.attempts);
    // Regression: the run the engine killed (exit 143, no trailer) used to be recorded as attempt 1, the
    // program's own outcome, spending an attempt on an outage and showing the inspector a fake crash.
    expect(goal.executions.map((e) => e.exit_code)).toEqual(slowRef.executions.map((e) => e.exit_code));
    expect(goal.executions[0]!.stderr_tail).toMatch(/ValueError/);
    const failures = stepFailures(r, id);
    expect(failures.length).toBeGreaterThanOrEqual(1);
    await r.stop();
    note(
      `dockerd stopped during execution 1: down ${restartedAt - stoppedAt} ms; EXECUTE failed ${failures.length} time(s) (${failures.map((l) => (JSON.parse(l) as { err: { message: string } }).err.message.slice(0, 70)).join(" | ")}) and ran again; ` +
        `tape ${goal.tape}; attempts ${goal.attempts}; exit codes ${goal.executions.map((e) => e.exit_code).join(",")} (reference ${slowRef.executions.map((e) => e.exit_code).join(",")})`,
    );
  });

  it("the Docker engine down past the retry cap: errored, listed as a dead letter, and an operator retry verifies it", async () => {
    const retry = { STEP_ATTEMPTS: "2", STEP_BACKOFF_MS: "200" };
    const loop = await newLoop(retry);
    const r = await runner(loop.prefix, "infra-docker-cap", retry);
    let id = "";
    let parked: GoalView | undefined;
    let letter: Record<string, unknown> | undefined;
    try {
      await stopDockerd();
      const res = await loop.post(demoGoal());
      expect(res.status).toBe(202);
      id = res.body.id as string;
      parked = await loop.waitForEnd(id, 30_000);
      expect(parked.state).toBe("errored");
      expect(parked.tape).toBe("plan → generate → execute → errored");
      expect(parked.attempts).toBe(0);

      const list = await loop.request("GET", "/admin/dead-letters", { key: ADMIN_API_KEY });
      expect(list.status).toBe(200);
      letter = (list.body.dead_letters as Record<string, unknown>[]).find((d) => d.goal_id === id);
      expect(letter).toMatchObject({ goal_id: id, errored_in: "execute", tries: 2 });
      // Not retried while the engine is still down would only park it again: retry once it is back.
      expect(await dockerUp()).toBe(false);
    } finally {
      await ensureDockerd();
    }
    const retried = await loop.request("POST", `/admin/dead-letters/${id}/retry`, { key: ADMIN_API_KEY });
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.body).toMatchObject({ goal_id: id, state: "execute" });

    await loop.waitForEnd(id, 60_000);
    const goal = await assertLike(loop, id, demoRef);
    expect(goal.tape).toBe(`plan → generate → execute → errored → ${demoRef.tape.split(" → ").slice(2).join(" → ")}`);
    expect(goal.attempts).toBe(demoRef.attempts);
    const after = await loop.request("GET", "/admin/dead-letters", { key: ADMIN_API_KEY });
    expect((after.body.dead_letters as { goal_id: string }[]).map((d) => d.goal_id)).not.toContain(id);
    await r.stop();
    note(
      `dockerd past the cap (STEP_ATTEMPTS=2): parked "${parked!.tape}", dead letter ${JSON.stringify({ errored_in: letter!.errored_in, tries: letter!.tries, error: String(letter!.error).slice(0, 80) })}; ` +
        `after the operator retry: ${goal.tape}; attempts ${goal.attempts} (reference ${demoRef.attempts})`,
    );
  });
});
