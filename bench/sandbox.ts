// Benchmark (issue 12): what one sandbox run costs, in one run, interleaved, on the real engine and image.
//
//   npx tsx bench/sandbox.ts [--n 8]
//
// Four ways to run a trivial program (`pass`) and a pandas program (`import pandas`), each with every
// hardening option of the sandbox:
//   cold      today's path without a pool: create + attach + start + run + collect + remove (sandbox.run())
//   pooled    sandbox.run() with a pool: a pre-started container whose interpreter pre-imported pandas
//   exec      floor for a fresh interpreter: `docker exec python3 -c ...` into an already started container,
//             until the exec's output ends
//   zygote    floor for a pre-imported interpreter: a started container whose PID 1 already imported pandas
//             gets the script on stdin, until the script's output is complete (a line it prints last;
//             the container's own exit, ~100-300 ms of teardown here, is not part of the floor, and the
//             pooled path does not wait for it either)
//   zygote+exit  the same floor, until the container has stopped (what `docker wait` sees)
// Rounds rotate the order of the four; what is timed excludes the preparation (starting the floors'
// containers, refilling the pool), which is done before each timed run.
import { randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import { parseArgs } from "node:util";
import type Docker from "dockerode";
import { createDockerSandbox, DEFAULT_LIMITS, dockerClient, pingDocker, removeLeftovers, sandboxImageTag, type RunRequest } from "@loopsmith/sandbox";
import { pct } from "./lib/stats";

const { values } = parseArgs({ options: { n: { type: "string", default: "8" } } });
const rounds = Number(values.n);
const docker = dockerClient();
await pingDocker(docker);
const image = sandboxImageTag();
const runnerId = `bench-sandbox-${randomBytes(3).toString("hex")}`;
const cold = createDockerSandbox({ docker, image, runnerId });
const pooled = createDockerSandbox({ docker, image, runnerId, pool: { size: 1 } });
pooled.start();

const L = DEFAULT_LIMITS;
// The sandbox's hardening, for the floors' containers (see hostConfig in packages/sandbox).
const hardened = (cmd: string[]): Docker.ContainerCreateOptions => ({
  Image: image,
  Entrypoint: cmd,
  User: "10001:10001",
  WorkingDir: "/work",
  Env: ["HOME=/work", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1"],
  Labels: { "loopsmith.sandbox": "1", "loopsmith.runner": runnerId, "loopsmith.purpose": "probe" },
  AttachStdin: true,
  AttachStdout: true,
  AttachStderr: true,
  OpenStdin: true,
  StdinOnce: true,
  NetworkDisabled: true,
  HostConfig: {
    NetworkMode: "none",
    ReadonlyRootfs: true,
    Tmpfs: { "/work": `rw,nosuid,nodev,noexec,size=${L.workTmpfsBytes},uid=10001,gid=10001,mode=0700`, "/tmp": `rw,nosuid,nodev,noexec,size=${L.tmpTmpfsBytes},mode=1777` },
    CapDrop: ["ALL"],
    SecurityOpt: ["no-new-privileges"],
    PidsLimit: L.pidsLimit,
    Memory: L.memoryBytes,
    MemorySwap: L.memoryBytes,
    NanoCpus: L.nanoCpus,
    IpcMode: "private",
    Ulimits: [
      { Name: "nofile", Soft: L.nofile, Hard: L.nofile },
      { Name: "fsize", Soft: L.fileSizeBytes, Hard: L.fileSizeBytes },
    ],
    Init: true,
    LogConfig: { Type: "none", Config: {} },
  },
});

const streamEnd = (s: Duplex) =>
  new Promise<void>((resolve) => {
    s.on("data", () => undefined);
    s.once("end", resolve);
    s.once("close", resolve);
    s.once("error", () => resolve());
  });

/** Prepares a started container for an exec; returns the timed part. */
async function execFloor(code: string): Promise<() => Promise<number>> {
  const c = await docker.createContainer(hardened(["sleep", "infinity"]));
  await c.start();
  return async () => {
    const t0 = performance.now();
    const exec = await c.exec({ Cmd: ["python3", "-c", code], AttachStdout: true, AttachStderr: true, User: "10001:10001", WorkingDir: "/work" });
    const s = (await exec.start({ hijack: true, stdin: false })) as Duplex;
    await streamEnd(s);
    const ms = performance.now() - t0;
    await c.remove({ force: true });
    return ms;
  };
}

/** Prepares a started container whose PID 1 imported pandas and waits for a script on stdin. */
async function zygoteFloor(code: string, untilExit = false): Promise<() => Promise<number>> {
  const c = await docker.createContainer(hardened(["python3", "-c", "import numpy, pandas, sys\nprint('ready', flush=True)\nexec(sys.stdin.read())"]));
  const s = (await c.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as Duplex;
  let seen = "";
  let onDone = () => undefined as void;
  const ready = new Promise<void>((r) => {
    s.on("data", (b: Buffer) => {
      seen += b.toString("latin1");
      if (seen.includes("ready")) r();
      if (seen.includes("script-done")) onDone();
    });
  });
  await c.start();
  await ready;
  return async () => {
    const done = new Promise<void>((r) => (onDone = r));
    const t0 = performance.now();
    s.end(`${code}\nprint("script-" + "done", flush=True)\n`);
    await (untilExit ? c.wait() : done);
    const ms = performance.now() - t0;
    await c.remove({ force: true });
    return ms;
  };
}

const req = (source: string): RunRequest => ({ files: [], script: { filename: "analysis.py", source }, command: ["python3", "analysis.py"], timeoutMs: 60_000 });

async function sandboxRun(which: "cold" | "pooled", source: string): Promise<() => Promise<number>> {
  if (which === "pooled") await pooled.warm({ timeoutMs: 120_000 });
  return async () => {
    const t0 = performance.now();
    const res = await (which === "cold" ? cold : pooled).run(req(source));
    const ms = performance.now() - t0;
    if (res.exitCode !== 0) throw new Error(`${which}: exit ${res.exitCode}: ${res.stderr}`);
    if (res.pooled !== (which === "pooled")) throw new Error(`${which}: the run was ${res.pooled ? "" : "not "}pooled`);
    await pooled.settled();
    return ms;
  };
}

const programs = { trivial: "pass", pandas: "import pandas" } as const;
const paths = ["cold", "pooled", "exec", "zygote", "zygote+exit"] as const;
type Path = (typeof paths)[number];
const times: Record<string, number[]> = {};
const prepare = (path: Path, code: string) =>
  path === "cold" || path === "pooled" ? sandboxRun(path, code) : path === "exec" ? execFloor(code) : zygoteFloor(code, path === "zygote+exit");

try {
  // Warm-up: the image's first use, the engine's caches, tsx's module loading.
  for (const path of paths) await (await prepare(path, programs.pandas))();
  for (let r = 0; r < rounds; r++) {
    for (const [name, code] of Object.entries(programs)) {
      const order = paths.map((_, i) => paths[(i + r) % paths.length]!);
      for (const path of order) {
        const timed = await prepare(path, code);
        (times[`${name}/${path}`] ??= []).push(await timed());
      }
    }
  }
} finally {
  await pooled.close();
  await removeLeftovers(docker, { runnerId });
}

const med = (k: string) => pct(times[k]!, 50);
console.log(`sandbox bench: ${rounds} interleaved rounds, medians (p90)`);
console.log(`${"".padEnd(10)}${paths.map((p) => p.padStart(16)).join("")}`);
for (const name of Object.keys(programs)) {
  console.log(`${name.padEnd(10)}${paths.map((p) => `${Math.round(med(`${name}/${p}`))} (${Math.round(pct(times[`${name}/${p}`]!, 90))}) ms`.padStart(16)).join("")}`);
}
const ratio = (a: string, b: string) => (med(a) / med(b)).toFixed(2);
console.log(`pooled trivial / exec floor:   ${ratio("trivial/pooled", "trivial/exec")}x (target <= 1.3x)`);
console.log(`pooled pandas / zygote floor:  ${ratio("pandas/pooled", "pandas/zygote")}x (target <= 1.3x); to its exit: ${ratio("pandas/pooled", "pandas/zygote+exit")}x`);
console.log(`cold / pooled, trivial:        ${ratio("trivial/cold", "trivial/pooled")}x`);
console.log(`cold / pooled, pandas:         ${ratio("pandas/cold", "pandas/pooled")}x`);
