// issue 16.2: a goal's outcome is recorded once, and a program is never run again because the database
// refused its evidence. Real Postgres, the real sandbox; the only stand-in is a sandbox wrapper that adds
// what a sanitising gap would let through, since the real sandbox no longer produces unstorable output.
import { SUITE_RUNTIME } from "../../../packages/sandbox/test/support";
import { createServer, connect, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, LoopSmithError, parseConfig } from "@loopsmith/core";
import { createPrisma, sendStatement, type PrismaClient } from "@loopsmith/db";
import { createDockerSandbox, dockerClient, sandboxImageTag, type RunResult, type Sandbox } from "@loopsmith/sandbox";
import { DATABASE_URL } from "../../../tests/support/services";
import { hostileGoal, startLoop, type Loop } from "../../../tests/support/loop";
import { runnerConfigSchema } from "../src/config";
import { dataRefusal, runStep, type StepRunnerDeps } from "../src/step";
import { stepDeps } from "./support/step-deps";
import { createCheckPool } from "@loopsmith/verifier";

let loop: Loop;
let real: Sandbox;
const log = createLogger({ name: "test", level: "silent" });
const config = parseConfig(runnerConfigSchema, { LOOPSMITH_SCRIPTED_MODEL: "true" });

const checks = createCheckPool({ timeoutMs: 30_000 });

beforeAll(async () => {
  loop = await startLoop({ runner: false });
  real = createDockerSandbox({ docker: dockerClient(), image: sandboxImageTag(), runnerId: loop.prefix, log, ociRuntime: SUITE_RUNTIME });
});
afterAll(async () => {
  await checks.close();
  await loop?.close();
});

function depsWith(sandbox: Sandbox, prisma: PrismaClient = loop.prisma): StepRunnerDeps {
  return stepDeps({ prisma, sandbox, checks, config, log });
}

/** The real sandbox, with `spoil` applied to each result; counts the runs. */
function spoiling(spoil: (r: RunResult) => RunResult) {
  const box = {
    runs: 0,
    image: real.image,
    ociRuntime: real.ociRuntime,
    run: async (req: Parameters<Sandbox["run"]>[0]) => {
      box.runs++;
      return spoil(await real.run(req));
    },
  };
  return box;
}

/** A goal brought to EXECUTE (version 2) by the real plan and generate steps. */
async function goalAtExecute(source: string): Promise<string> {
  const res = await loop.post(hostileGoal(source));
  expect(res.status).toBe(202);
  const id = res.body.id as string;
  const d = depsWith(real);
  await runStep(d, { goalId: id, version: 0 });
  await runStep(d, { goalId: id, version: 1 });
  expect((await loop.get(id)).body.state).toBe("execute");
  return id;
}

describe("committing an EXECUTE result the database refuses", () => {
  it("issue 16.2: records the outcome once without the refused evidence, and the goal moves on to INSPECT", async () => {
    const id = await goalAtExecute("import sys\nprint('hello')\nopen('out/result.json', 'w').write('{}')\nsys.exit(3)\n");
    // NUL in stdout (Postgres text: 22021) and a lone surrogate in an artifact error (jsonb: 22P02).
    const sandbox = spoiling((r) => ({ ...r, stdout: r.stdout + "\0", artifactErrors: [...r.artifactErrors, "\udcff: skipped"] }));
    expect(await runStep(depsWith(sandbox), { goalId: id, version: 2 })).toEqual({ done: true, from: "execute", to: "inspect", version: 3 });
    expect(sandbox.runs).toBe(1);

    const execs = await loop.prisma.execution.findMany({ where: { goalId: id }, include: { artifactFiles: true } });
    expect(execs).toHaveLength(1);
    const [exec] = execs;
    expect(exec).toMatchObject({ attempt: 1, exitCode: 3, timedOut: false, oomKilled: false, artifacts: [], artifactFiles: [] });
    // The tape row is written first: its jsonb refuses the surrogate before the NUL reaches the text column.
    expect(exec!.stdout).toMatch(/^the run's output could not be stored \(Postgres 22P02: invalid input syntax for type json\): /);
    expect(exec!.stderr).toBe(exec!.stdout);

    const goal = (await loop.get(id)).body;
    expect(goal.tape).toBe("plan → generate → execute → inspect");
    expect(goal.attempts).toBe(1);
    const row = goal.transitions.find((t) => t.from === "execute")!.detail;
    expect(row).toMatchObject({ exit_code: 3, evidence_dropped: true, artifacts: [] });
    expect((row.artifact_errors as string[])[0]).toBe(exec!.stdout);
    expect((row.notes as string[]).at(-1)).toBe(exec!.stdout);
  });

  it("issue 16.2: a connection failure during the commit still throws (the step is retried) and writes nothing", async () => {
    const id = await goalAtExecute("print('fine')\n");
    const proxy = await tcpProxy(5432);
    const url = new URL(DATABASE_URL);
    url.port = String(proxy.port);
    const viaProxy = createPrisma(url.toString());
    try {
      // Postgres goes away while the program runs: the commit cannot reach it.
      const sandbox = spoiling((r) => r);
      const run = sandbox.run;
      sandbox.run = async (req) => {
        const r = await run(req);
        await proxy.cut();
        return r;
      };
      await expect(runStep(depsWith(sandbox, viaProxy), { goalId: id, version: 2 })).rejects.toThrow();
      expect(sandbox.runs).toBe(1);
    } finally {
      await viaProxy.$disconnect().catch(() => undefined);
      await proxy.cut();
    }
    expect(await loop.prisma.execution.count({ where: { goalId: id } })).toBe(0);
    expect((await loop.get(id)).body).toMatchObject({ state: "execute", attempts: 0 });
  });
});

describe("dataRefusal", () => {
  it("issue 16.2: names the data errors Postgres and Prisma really raise, and nothing else", async () => {
    const refusedBy = async (f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (e) {
        return dataRefusal(e);
      }
      throw new Error("expected the database to refuse");
    };
    const p = loop.prisma;
    expect(await refusedBy(() => p.$executeRaw`SELECT ${"a\0b"}::text`)).toBe('Postgres 22021: invalid byte sequence for encoding "UTF8": 0x00');
    expect(await refusedBy(() => p.$executeRaw`SELECT ${2861870540}::int`)).toBe('Postgres 22003: value "2861870540" is out of range for type integer');
    expect(await refusedBy(() => p.$executeRaw`SELECT ${'{"a":"\\udcff"}'}::jsonb`)).toMatch(/^Postgres 22P02: /);
    expect(await refusedBy(() => p.$executeRaw`SELECT ${"\\u0000"}::jsonb`)).toMatch(/^Postgres 22P0[25]: /);
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 100_000; i++) at.push((at = []));
    const missing = "00000000-0000-4000-8000-000000000000";
    expect(await refusedBy(() => p.transition.updateMany({ where: { goalId: missing }, data: { detail: deep as never } }))).toBe(
      "RangeError: Maximum call stack size exceeded",
    );

    // Not data: retried as today.
    const closed = createPrisma(Object.assign(new URL(DATABASE_URL), { port: "1" }).toString());
    try {
      expect(await refusedBy(() => closed.tenant.findFirst())).toBeUndefined();
    } finally {
      await closed.$disconnect();
    }
    expect(await refusedBy(() => p.$executeRaw`SELECT * FROM no_such_table`)).toBeUndefined();
    // The same through node-postgres, as a move's one statement is sent (sendStatement).
    expect(await refusedBy(() => sendStatement(p, "SELECT $1::text", ["a\0b"]))).toBe('Postgres 22021: invalid byte sequence for encoding "UTF8": 0x00');
    expect(await refusedBy(() => sendStatement(p, "SELECT $1::int", [2861870540]))).toBe('Postgres 22003: value "2861870540" is out of range for type integer');
    expect(await refusedBy(() => sendStatement(p, "SELECT * FROM no_such_table", []))).toBeUndefined();
    const unreachable = createPrisma(Object.assign(new URL(DATABASE_URL), { port: "1" }).toString());
    try {
      expect(await refusedBy(() => sendStatement(unreachable, "SELECT 1", []))).toBeUndefined();
    } finally {
      await unreachable.$disconnect();
    }
    expect(dataRefusal(new LoopSmithError("LS_ERR_STALE_VERSION", "moved on"))).toBeUndefined();
    expect(dataRefusal(new TypeError("a bug of ours"))).toBeUndefined();
  });
});

/** A TCP forwarder to a local port that can be cut: every connection dropped and no new one accepted. */
async function tcpProxy(target: number): Promise<{ port: number; cut: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  let closed: Promise<void> | undefined;
  return {
    port,
    cut: () =>
      (closed ??= new Promise<void>((r) => {
        server.close(() => r());
        for (const s of sockets) s.destroy();
      })),
  };
}
