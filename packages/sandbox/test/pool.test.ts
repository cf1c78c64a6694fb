// issue 12: the sandbox pool. Pre-started, single-use containers, a pre-imported interpreter that never
// holds the trailer marker, a dead idle container never handed out, nothing left after shutdown, and a
// cold container whenever the pool has nothing to give.
import type Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDockerSandbox, POOL_PURPOSE, PURPOSE_LABEL, removeLeftovers, sandboxPurpose, type PooledSandbox, type RunRequest } from "../src/index";
import { containersOf, docker, ensureTestImage, quietLog, SUITE_RUNTIME, testRunnerId } from "./support";

let image: string;
const ids: string[] = [];
const sandboxes: PooledSandbox[] = [];

beforeAll(async () => {
  image = await ensureTestImage();
}, 900_000);

afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
  for (const runnerId of ids) await removeLeftovers(docker, { runnerId });
});

function pool(size: number, extra: { docker?: Docker; ttlMs?: number; refillDelayMs?: number } = {}) {
  const runnerId = testRunnerId("pool");
  ids.push(runnerId);
  const opts = { size, ...(extra.ttlMs ? { ttlMs: extra.ttlMs } : {}), ...(extra.refillDelayMs !== undefined ? { refillDelayMs: extra.refillDelayMs } : {}) };
  const s = createDockerSandbox({ docker: extra.docker ?? docker, image, runnerId, log: quietLog, pool: opts, ociRuntime: SUITE_RUNTIME });
  sandboxes.push(s);
  s.start();
  return { s, runnerId };
}

const script = (source: string, extra: Partial<RunRequest> = {}): RunRequest => ({
  files: [],
  script: { filename: "analysis.py", source },
  command: ["python3", "analysis.py"],
  timeoutMs: 30_000,
  ...extra,
});

const busy = async (runnerId: string) => (await containersOf(runnerId)).filter((c) => sandboxPurpose(c) !== "idle");
const idle = async (runnerId: string) => (await containersOf(runnerId)).filter((c) => sandboxPurpose(c) === "idle");

describe("sandbox pool", () => {
  it("uses a container for one run only: what a program leaves in /tmp or /work is not there for the next", async () => {
    const { s, runnerId } = pool(2);
    await s.warm({ timeoutMs: 60_000 });
    const leave = await s.run(
      script("import os, socket\nopen('/tmp/left', 'w').write('x')\nopen('/work/left', 'w').write('x')\nopen('out/left.txt', 'w').write('x')\nprint(socket.gethostname())\n"),
    );
    expect(leave).toMatchObject({ exitCode: 0, pooled: true });
    const look = await s.run(
      script("import os, socket\nprint(socket.gethostname())\nprint(sorted(os.listdir('/tmp')), sorted(os.listdir('/work')), os.listdir('/work/out'))\n"),
    );
    expect(look).toMatchObject({ exitCode: 0, pooled: true });
    const [host, listing] = look.stdout.trim().split("\n");
    expect(host).not.toBe(leave.stdout.trim());
    expect(listing).toBe("[] ['analysis.py', 'inputs', 'out'] []");
    expect(look.artifacts).toEqual([]);
    // Both containers are gone: the pool never takes one back.
    await s.settled();
    const left = await containersOf(runnerId);
    expect(left.map((c) => c.Id.slice(0, 12))).not.toContain(host);
    expect(left.map((c) => c.Id.slice(0, 12))).not.toContain(leave.stdout.trim());
  }, 120_000);

  it("runs the program in the pre-imported interpreter with the contract of python3 <file>", async () => {
    const { s } = pool(1);
    const cold = createDockerSandbox({ docker, image, runnerId: testRunnerId("pool-cold"), log: quietLog, ociRuntime: SUITE_RUNTIME });
    const cases: [string, string[]][] = [
      [
        "import os, sys\nprint(__name__, __file__, sys.argv, sys.path[0], os.getcwd(), repr(sys.stdin.read()))\nprint(sorted(k for k in os.environ))\nprint(os.environ['INPUT_DIR'])",
        ["python3", "analysis.py", "a", "b c"],
      ],
      ["import sys\nprint('x')\nsys.exit(3)", ["python3", "analysis.py"]],
      ["import sys\nsys.exit('bye')", ["python3", "analysis.py"]],
      ["def f():\n    1/0\nf()", ["python3", "analysis.py"]],
      ["import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", ["python3", "analysis.py"]],
      ["raise KeyboardInterrupt", ["python3", "analysis.py"]],
      ["x = (", ["python3", "analysis.py"]],
      ["import atexit\natexit.register(lambda: print('atexit ran'))\nf = open('out/unclosed.txt', 'w')\nf.write('flushed at exit')", ["python3", "analysis.py"]],
      ["import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.3), print('thread joined'))).start()", ["python3", "analysis.py"]],
      // Leaves by os._exit with a forked child still holding every descriptor it inherited: ends at once.
      ["import os, time\nif os.fork() == 0:\n    time.sleep(30)\n    os._exit(0)\nprint('left', flush=True)\nos._exit(4)", ["python3", "analysis.py"]],
    ];
    for (const [source, command] of cases) {
      await s.warm({ timeoutMs: 60_000 });
      const req = script(source, { command, env: { INPUT_DIR: "/work/inputs" }, timeoutMs: 20_000 });
      const [p, c] = [await s.run(req), await cold.run(req)];
      expect(p.pooled, source).toBe(true);
      const norm = (r: typeof p) => ({
        exitCode: r.exitCode,
        stdout: r.stdout,
        // The traceback's caret lines aside, the streams are the same as a fresh interpreter's.
        stderr: r.stderr,
        artifacts: r.artifacts.map((a) => [a.name, a.content.toString()]),
      });
      expect(norm(p), source).toEqual(norm(c));
    }
    // A program whose directory shadows a module the interpreter has already imported runs in a fresh
    // process, so that it imports its own file, as `python3 <file>` would.
    await s.warm({ timeoutMs: 60_000 });
    const shadow: RunRequest = { files: [], script: { filename: "json.py", source: "import sys, json\nprint(json.__file__, 'pandas' in sys.modules)" }, command: ["python3", "json.py"], timeoutMs: 30_000 };
    const [ps, cs] = [await s.run(shadow), await cold.run(shadow)];
    expect(ps.pooled).toBe(true);
    expect(ps.stdout).toContain("/work/json.py False\n");
    expect(ps.stdout).toBe(cs.stdout);
    // The first case's modules: pandas was already there for the pooled program, not for the cold one.
    await s.warm({ timeoutMs: 60_000 });
    const probe = script("import sys\nprint('pandas' in sys.modules)");
    expect((await s.run(probe)).stdout).toBe("True\n");
    expect((await cold.run(probe)).stdout).toBe("False\n");
    // Opting out: a pristine interpreter, in a pool container all the same.
    await s.warm({ timeoutMs: 60_000 });
    const pristine = await s.run({ ...probe, preimport: false });
    expect(pristine).toMatchObject({ pooled: true, stdout: "False\n" });
  }, 300_000);

  // issue 29: the importer caches of /work are dropped by the parent before the fork, not cleared in the
  // program's process; the program must still import what it was given and what it writes, as a fresh
  // interpreter does, and a directory that shadows a pre-imported library still sends it to a fresh process.
  it("imports the program's own modules, given or written at run time, and runs a shadowing package fresh", async () => {
    const { s } = pool(1);
    const cold = createDockerSandbox({ docker, image, runnerId: testRunnerId("pool-cold"), log: quietLog, ociRuntime: SUITE_RUNTIME });
    const helper = { path: "helper.py", content: Buffer.from("X = 'given'\n") };
    const cases: RunRequest[] = [
      script("import helper, sys\nprint(helper.X, helper.__file__)", { workFiles: [helper] }),
      script("open('written.py', 'w').write('Y = 7\\n')\nimport os\nos.makedirs('pkg', exist_ok=True)\nopen('pkg/__init__.py', 'w').write('Z = 8\\n')\nimport written, pkg\nprint(written.Y, pkg.Z)"),
      script("import pandas\nprint(pandas.__file__, pandas.X)", { workFiles: [{ path: "pandas/__init__.py", content: Buffer.from("X = 'mine'\n") }] }),
    ];
    for (const req of cases) {
      await s.warm({ timeoutMs: 60_000 });
      const [p, c] = [await s.run(req), await cold.run(req)];
      expect(p.pooled).toBe(true);
      expect({ exitCode: p.exitCode, stdout: p.stdout, stderr: p.stderr }).toEqual({ exitCode: c.exitCode, stdout: c.stdout, stderr: c.stderr });
      expect(p.exitCode, p.stderr).toBe(0);
    }
  }, 180_000);

  it("never lets the program see the trailer marker: not in its memory, its stdin, or any process it can read", async () => {
    const { s } = pool(1);
    // Proof that the scan finds a marker where one is: one assembled at run time (from argv, so that the
    // compiler cannot fold it into a constant) in its own memory.
    const HUNT = `import glob, os, re, sys
planted = "-".join(["loopsmith", "trailer", sys.argv[1] * 16]) if len(sys.argv) > 1 else None
pat = re.compile(rb"loopsmith-trailer-[0-9a-f]{32}")
found = []
def scan(pid):
    try:
        maps = open("/proc/%s/maps" % pid).read().splitlines()
        mem = open("/proc/%s/mem" % pid, "rb", 0)
    except OSError:
        return
    for line in maps:
        addr, perms = line.split()[:2]
        if not perms.startswith("r"):
            continue
        lo, hi = (int(x, 16) for x in addr.split("-"))
        try:
            mem.seek(lo)
            if pat.search(mem.read(hi - lo)):
                found.append("mem of %s" % pid)
                return
        except (OSError, ValueError, OverflowError):
            pass
for pid in [p.split("/")[2] for p in glob.glob("/proc/[0-9]*")]:
    scan(pid)
    for what in ("environ", "cmdline"):
        try:
            if pat.search(open("/proc/%s/%s" % (pid, what), "rb").read()):
                found.append("%s of %s" % (what, pid))
        except OSError:
            pass
    for fd in glob.glob("/proc/%s/fd/*" % pid):
        try:
            f = os.open(fd, os.O_RDONLY | os.O_NONBLOCK)
            if pat.search(os.read(f, 1 << 20)):
                found.append(fd)
        except OSError:
            pass
if pat.search(sys.stdin.buffer.read()):
    found.append("stdin")
print(sorted(set(found)))
`;
    await s.warm({ timeoutMs: 60_000 });
    const control = await s.run(script(HUNT, { command: ["python3", "analysis.py", "ab"] }));
    expect(control.pooled).toBe(true);
    expect(control.stdout).toMatch(/mem of \d+/);
    await s.warm({ timeoutMs: 60_000 });
    const res = await s.run(script(HUNT));
    expect(res).toMatchObject({ exitCode: 0, pooled: true, stderr: "" });
    expect(res.stdout).toBe("[]\n");
  }, 120_000);

  it("never hands out an idle container that was killed from outside", async () => {
    const { s, runnerId } = pool(1);
    for (let round = 0; round < 2; round++) {
      await s.warm({ timeoutMs: 60_000 });
      const [victim] = await idle(runnerId);
      expect(victim).toBeDefined();
      await docker.getContainer(victim!.Id).kill({ signal: "SIGKILL" });
      // At once, before the pool may have heard of it (round 0), and once it surely has (round 1).
      if (round === 1) await new Promise((r) => setTimeout(r, 500));
      const res = await s.run(script("import socket\nprint(socket.gethostname())"));
      expect(res.exitCode).toBe(0);
      expect(res.stdout.trim()).not.toBe(victim!.Id.slice(0, 12));
      expect(res.artifactErrors).toEqual([]);
    }
  }, 180_000);

  it("leaves no container behind after shutdown, with a run in flight", async () => {
    const { s, runnerId } = pool(2);
    await s.warm({ timeoutMs: 60_000 });
    const inFlight = s.run(script("import time\ntime.sleep(1.5)\nprint('done')"));
    await new Promise((r) => setTimeout(r, 300));
    await s.close();
    expect(await inFlight).toMatchObject({ exitCode: 0, stdout: "done\n", pooled: true });
    await s.settled();
    expect(await containersOf(runnerId)).toEqual([]);
    // A closed pool does not refill; a later run goes cold and cleans up after itself.
    expect(await s.run(script("print(1)"))).toMatchObject({ exitCode: 0, pooled: false });
    expect(await containersOf(runnerId)).toEqual([]);
  }, 120_000);

  it("falls back to a cold container while the engine refuses to start the pool's containers, and refills after", async () => {
    let refuse = true;
    let refused = 0;
    // The engine as the pool sees it: creating a pool container fails for a moment (a burst, an engine hiccup).
    const flaky = new Proxy(docker, {
      get(target, prop, receiver) {
        if (prop === "createContainer") {
          return async (o: Docker.ContainerCreateOptions) => {
            if (refuse && o.Labels?.[PURPOSE_LABEL] === POOL_PURPOSE) {
              refused++;
              throw Object.assign(new Error("(HTTP code 500) server error - engine busy"), { statusCode: 500 });
            }
            return target.createContainer(o);
          };
        }
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
    const { s, runnerId } = pool(1, { docker: flaky });
    await new Promise((r) => setTimeout(r, 300));
    expect(refused).toBeGreaterThan(0);
    const res = await s.run(script("print('cold all the same')"));
    expect(res).toMatchObject({ exitCode: 0, stdout: "cold all the same\n", pooled: false });
    expect(await busy(runnerId)).toEqual([]);
    refuse = false;
    await s.warm({ timeoutMs: 60_000 });
    expect(await s.run(script("print('pooled again')"))).toMatchObject({ exitCode: 0, pooled: true });
  }, 120_000);

  it("labels a pool container as such and names it for its use once handed out", async () => {
    const { s, runnerId } = pool(1);
    await s.warm({ timeoutMs: 60_000 });
    const [idle] = await containersOf(runnerId);
    expect(idle!.Labels[PURPOSE_LABEL]).toBe(POOL_PURPOSE);
    expect(sandboxPurpose(idle!)).toBe("idle");
    const run = s.run(script("import time\ntime.sleep(1)", { purpose: "check" }));
    await new Promise((r) => setTimeout(r, 500));
    const named = (await containersOf(runnerId)).find((c) => c.Id === idle!.Id);
    expect(named && sandboxPurpose(named)).toBe("check");
    await run;
  }, 120_000);

  it("replaces an idle container older than the TTL", async () => {
    // A TTL a loaded machine can start (and warm) a container within: with 2 s, none became ready in time.
    const { s, runnerId } = pool(1, { ttlMs: 6000 });
    await s.warm({ timeoutMs: 60_000 });
    const [first] = await containersOf(runnerId);
    await new Promise((r) => setTimeout(r, 7500));
    await s.warm({ timeoutMs: 60_000 });
    const now = await containersOf(runnerId);
    expect(now.map((c) => c.Id)).not.toContain(first!.Id);
    expect(now.filter((c) => sandboxPurpose(c) === "idle")).toHaveLength(1);
  }, 120_000);

  // issue 29: a replacement started at hand-out shared the CPU with the program it was replacing.
  it("starts the replacement for a handed-out container once its run is over, not while the program runs", async () => {
    const { s, runnerId } = pool(1, { refillDelayMs: 60_000 });
    await s.warm({ timeoutMs: 60_000 });
    const run = s.run(script("import time\ntime.sleep(1.5)\nprint('done')"));
    await new Promise((r) => setTimeout(r, 800));
    expect(s.poolStats()).toMatchObject({ idle: 0, creating: false });
    expect(await idle(runnerId)).toEqual([]);
    expect(await run).toMatchObject({ exitCode: 0, pooled: true });
    expect(s.poolStats().creating || s.poolStats().idle === 1).toBe(true);
    await s.warm({ timeoutMs: 60_000 });
    expect(await s.run(script("print(1)"))).toMatchObject({ exitCode: 0, pooled: true });
  }, 120_000);

  // The default: a goal's next run comes a moment after this one ends, so its container is made beside this run.
  it("with refillDelayMs 0, starts the replacement for a handed-out container while its program runs", async () => {
    const { s, runnerId } = pool(1, { refillDelayMs: 0 });
    await s.warm({ timeoutMs: 60_000 });
    // Long enough for a loaded machine to create the replacement well before the program ends.
    const run = s.run(script("import time\ntime.sleep(6)\nprint('done')"));
    // Once the warm container is handed out (renamed for its run), the one made beside it is idle.
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline && (await busy(runnerId)).length === 0) await new Promise((r) => setTimeout(r, 50));
    expect(await busy(runnerId)).toHaveLength(1);
    while (Date.now() < deadline && (await idle(runnerId)).length === 0) await new Promise((r) => setTimeout(r, 100));
    expect(await idle(runnerId)).toHaveLength(1);
    expect(await busy(runnerId)).toHaveLength(1);
    expect(s.poolStats().creating || s.poolStats().idle === 1).toBe(true);
    expect(await run).toMatchObject({ exitCode: 0, pooled: true, stdout: "done\n" });
  }, 120_000);

  // A run that came while its replacement was being made went cold: a second container start beside the
  // first, on the same cores, for a run the first would have served sooner.
  it("a run that finds the pool empty while its replacement is being made waits for that container instead of starting a cold one", async () => {
    // Refilled when the run ends, so that the replacement is still being made when the next run comes.
    const { s, runnerId } = pool(1, { refillDelayMs: 1000 });
    await s.warm({ timeoutMs: 60_000 });
    expect(await s.run(script("print(1)"))).toMatchObject({ exitCode: 0, pooled: true });
    // The replacement is being made now (its refill starts when the run ends).
    expect(s.poolStats()).toMatchObject({ creating: true });
    const res = await s.run(script("import socket\nprint(socket.gethostname())"));
    expect(res).toMatchObject({ exitCode: 0, pooled: true });
    // One container per run: no cold container was started beside the one being made.
    await s.settled();
    expect((await containersOf(runnerId)).filter((c) => sandboxPurpose(c) !== "idle")).toEqual([]);
  }, 120_000);

  it("refills during a run that outlasts refillDelayMs, so that a long run does not leave the pool empty", async () => {
    const { s } = pool(1, { refillDelayMs: 300 });
    await s.warm({ timeoutMs: 60_000 });
    // A run that would go on for a minute; once the pool has refilled beside it, it is stopped (aborted).
    const stop = new AbortController();
    const run = s.run(script("import time\ntime.sleep(60)", { timeoutMs: 90_000, signal: stop.signal }));
    await s.warm({ timeoutMs: 30_000 });
    expect(s.poolStats()).toMatchObject({ idle: 1 });
    stop.abort();
    expect(await run).toMatchObject({ aborted: true, timedOut: false, pooled: true });
  }, 120_000);

  it("keeps idle memory bounded: no more idle containers than the budget holds at one memory limit each", () => {
    const mk = (size: number, maxIdleBytes: number) =>
      createDockerSandbox({ docker, image, runnerId: "unused", pool: { size, maxIdleBytes }, limits: { memoryBytes: 512 * 1024 * 1024 } }).poolStats().target;
    expect(mk(5, 1024 * 1024 * 1024)).toBe(2);
    expect(mk(1, 1024 * 1024 * 1024)).toBe(1);
    expect(mk(4, 100 * 1024 * 1024)).toBe(0);
  });
});
