// Issue 17: a step that fails for infrastructure reasons parks its goal in errored, and that tape row is
// the tenant's to read. It used to carry the raw error: Prisma's "Invalid `tx.plan.create()` invocation
// in /path/to/plan.ts:12:5" with a code frame of our source, or Docker's text. Now it carries a code and a
// short message; the full error goes to the runner's log. Real Postgres (a trigger makes the write fail
// the way a broken database does), real Redis, real Docker (an image that is not there).
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGoal } from "../../../scripts/demo/scenario";
import { startLoop, type Loop } from "../../../tests/support/loop";

const marker = `issue17-${randomBytes(4).toString("hex")}`;
const fn = `ls_test_refuse_${marker.replace(/-/g, "_")}`;
const env = { STEP_ATTEMPTS: "1", STEP_BACKOFF_MS: "50" };
let loop: Loop;
let noImage: Loop;
let noEngine: Loop;

beforeAll(async () => {
  loop = await startLoop({ env });
  noImage = await startLoop({ env, sandboxImage: "loopsmith/does-not-exist:issue17" });
  noEngine = await startLoop({ env, dockerHost: "unix:///nonexistent/issue17/docker.sock" });
  // Only this test's goals (their objective carries the marker) have their plan refused.
  await loop.prisma.$executeRawUnsafe(`
    CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF EXISTS (SELECT 1 FROM goals WHERE id = NEW.goal_id AND objective LIKE '%${marker}%') THEN
        RAISE EXCEPTION 'disk full at /var/lib/postgresql/15/main/base/16384 (test)';
      END IF;
      RETURN NEW;
    END $$`);
  await loop.prisma.$executeRawUnsafe(`CREATE TRIGGER ${fn} BEFORE INSERT ON plans FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
});
afterAll(async () => {
  await loop?.prisma.$executeRawUnsafe(`DROP TRIGGER IF EXISTS ${fn} ON plans`).catch(() => undefined);
  await loop?.prisma.$executeRawUnsafe(`DROP FUNCTION IF EXISTS ${fn}()`).catch(() => undefined);
  await loop?.close();
  await noImage?.close();
  await noEngine?.close();
});

/** What must not be on a tenant-readable row: source paths, code frames, engine internals. */
const LEAK = /invocation|\/work\/|\/app\/|\.ts:\d|node_modules|→|\/var\/lib|\n/;

describe("the errored tape row (issue 17)", () => {
  it("a database failure: LS_ERR_DATABASE and the database's sentence, no code frame or paths", async () => {
    const goal = await loop.run(demoGoal({ objective: `Summarise the CSV (${marker})` }), 60_000);
    expect(goal.state).toBe("errored");
    const parked = goal.transitions.at(-1)!;
    expect(parked).toMatchObject({ from: "plan", to: "errored", detail: { error_code: "LS_ERR_DATABASE", tries: 1 } });
    const error = String(parked.detail.error);
    // The move's one statement goes through node-postgres (sendStatement): the trigger's SQLSTATE.
    expect(error).toMatch(/^Postgres P0001: .*disk full at <path> \(test\)/);
    expect(error).not.toMatch(LEAK);
    expect(error.length).toBeLessThanOrEqual(300);
  });

  it("a sandbox failure: LS_ERR_SANDBOX_UNAVAILABLE and the engine's short message", async () => {
    // PLAN's self-test is the first step to start a container.
    const goal = await noImage.run(demoGoal(), 60_000);
    expect(goal.state).toBe("errored");
    const parked = goal.transitions.at(-1)!;
    expect(parked).toMatchObject({ to: "errored", detail: { error_code: "LS_ERR_SANDBOX_UNAVAILABLE", tries: 1 } });
    const error = String(parked.detail.error);
    expect(error).toContain("loopsmith/does-not-exist:issue17");
    expect(error).not.toMatch(LEAK);
  });

  it("no Docker engine at the socket: the errno, not the socket's path", async () => {
    const goal = await noEngine.run(demoGoal(), 60_000);
    expect(goal.state).toBe("errored");
    const parked = goal.transitions.at(-1)!;
    expect(parked).toMatchObject({ to: "errored", detail: { error_code: "LS_ERR_SANDBOX_UNAVAILABLE", tries: 1 } });
    const error = String(parked.detail.error);
    expect(error).toMatch(/ENOENT/);
    expect(error).not.toMatch(/nonexistent|docker\.sock/);
    expect(error).not.toMatch(LEAK);
  });
});
