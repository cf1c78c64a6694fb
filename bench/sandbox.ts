// Benchmark (issues 12, 29): what one pooled sandbox run costs beside the floor inside a started container,
// in one run, interleaved, on the real engine and image.
//
//   npx tsx bench/sandbox.ts [--n 8] [--burst 20] [--runtimes runc,runsc]
//
// Three programs: trivial (`pass`), pandas (`import pandas`), artifact (writes a 1 MiB out/a.bin). Paths,
// each with every hardening option of the sandbox:
//   cold      a container started for the run: create + attach + start + run + collect + remove
//   pooled    sandbox.run() from a pool of one (pandas pre-imported), refilling once the run is over
//             (refillDelayMs 1000): the program has the CPU to itself
//   handout   the same, refilling when the container is handed out (refillDelayMs 0, the runner's default:
//             a goal's next run comes sooner after it): the replacement's start and pandas import share the
//             CPU with the run
//   floor     the least a started container can do for the program, timed from the host as the pooled run
//             is: its PID 1 gets a line on stdin, and for trivial fork+execs `python3 -c pass`; for pandas
//             forks its pre-imported self to run the program; for artifact does the same, then writes the
//             file's bare bytes to stdout; until its "done" line (and the bytes) are in
//   cold-runsc, pooled-runsc   cold and pooled under gVisor (runsc), when the engine offers it: the second
//             wall's cost beside runc's, with the ratios (target: pooled under gVisor within 1.5x of runc's)
// Rounds rotate the order; what is timed excludes the preparation (starting the floor's container,
// warming the pool), which is done before each timed run, and every run is timed with the other paths'
// pools full and their containers removed (nothing else starting or importing beside it). Then a burst: --burst runs back to back, 300 ms
// apart (a goal's INSPECT and REFINE), on a pool of one, under each refill policy: how many went cold.
import { randomBytes } from "node:crypto";
import type { Duplex } from "node:stream";
import { parseArgs } from "node:util";
import type Docker from "dockerode";
import { createDockerSandbox, DEFAULT_LIMITS, dockerClient, engineRuntimes, pingDocker, removeLeftovers, sandboxImageTag, type RunRequest } from "@loopsmith/sandbox";
import { pct } from "./lib/stats";

const { values } = parseArgs({ options: { n: { type: "string", default: "8" }, burst: { type: "string", default: "20" }, runtimes: { type: "string", default: "runc,runsc" } } });
const rounds = Number(values.n);
const burst = Number(values.burst);
const docker = dockerClient();
await pingDocker(docker);
const image = sandboxImageTag();
const runnerId = `bench-sandbox-${randomBytes(3).toString("hex")}`;
const cold = createDockerSandbox({ docker, image, runnerId });
const pooled = createDockerSandbox({ docker, image, runnerId, pool: { size: 1, refillDelayMs: 1000 } });
const handout = createDockerSandbox({ docker, image, runnerId, pool: { size: 1, refillDelayMs: 0 } });
pooled.start();
handout.start();
// gVisor beside runc (the paths above run under runc): measured when asked for and offered.
const offered = (await engineRuntimes(docker)).runtimes;
const gvisor = values.runtimes.split(",").includes("runsc") && offered.includes("runsc");
if (!gvisor) console.log(`(no runsc path: ${offered.includes("runsc") ? "not asked for (--runtimes)" : `the engine offers ${offered.join(", ")}`})`);
const coldRunsc = createDockerSandbox({ docker, image, runnerId, ociRuntime: "runsc" });
const pooledRunsc = createDockerSandbox({ docker, image, runnerId, pool: { size: 1, refillDelayMs: 1000 }, ociRuntime: "runsc" });
if (gvisor) pooledRunsc.start();

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

// PID 1 of the floor's container: pandas pre-imported as the pool's is (not for the exec floor: a small
// parent forks fastest), "ready", then one program.
const FLOOR_PY = String.raw`
import json, os, sys
if sys.argv[1] != "exec":
    import numpy, pandas
os.makedirs("/work/out", exist_ok=True)
os.chdir("/work")
out = sys.stdout.buffer
def run(mode, code):
    pid = os.fork()
    if pid == 0:
        if mode == "exec":
            os.execvp("python3", ["python3", "-c", code])
        exec(code, {"__name__": "__main__"})
        os._exit(0)
    os.waitpid(pid, 0)
# Once on nothing first, as the pool's container has warmed up: a fresh container's first interpreter
# start pays for looking up every file it opens, and the first fork for copying what the parent touches.
run("exec" if sys.argv[1] == "exec" else "fork", "pass")
out.write(b"ready\n"); out.flush()
req = json.loads(sys.stdin.buffer.readline())
run(req["mode"], req["code"])
if req["mode"] == "artifact":
    with open("/work/out/a.bin", "rb") as f:
        out.write(f.read())
out.write(b"done\n"); out.flush()
`;

/** Prepares the floor's started container; returns the timed part. */
async function floor(mode: "exec" | "fork" | "artifact", code: string, expectBytes: number): Promise<() => Promise<number>> {
  const c = await docker.createContainer(hardened(["python3", "-c", FLOOR_PY, mode]));
  const s = (await c.attach({ stream: true, stdin: true, stdout: true, stderr: true, hijack: true })) as Duplex;
  let seen = 0;
  let tail = "";
  let onDone = () => undefined as void;
  const ready = new Promise<void>((r) => {
    s.on("data", (b: Buffer) => {
      seen += b.length;
      tail = (tail + b.toString("latin1")).slice(-64);
      if (tail.includes("ready")) r();
      if (tail.includes("done") && seen >= expectBytes) onDone();
    });
  });
  await c.start();
  await ready;
  return async () => {
    const done = new Promise<void>((r) => (onDone = r));
    tail = "";
    seen = 0;
    const t0 = performance.now();
    s.write(JSON.stringify({ mode, code }) + "\n");
    await done;
    const ms = performance.now() - t0;
    s.destroy();
    await c.remove({ force: true });
    return ms;
  };
}

const req = (source: string): RunRequest => ({ files: [], script: { filename: "analysis.py", source }, command: ["python3", "analysis.py"], timeoutMs: 60_000 });

async function sandboxRun(which: Exclude<Path, "floor">, source: string): Promise<() => Promise<number>> {
  const sb = { cold, pooled, handout, "cold-runsc": coldRunsc, "pooled-runsc": pooledRunsc }[which];
  const isCold = which.startsWith("cold");
  if (!isCold) await sb.warm({ timeoutMs: 120_000 });
  return async () => {
    const t0 = performance.now();
    const res = await sb.run(req(source));
    const ms = performance.now() - t0;
    if (res.exitCode !== 0) throw new Error(`${which}: exit ${res.exitCode}: ${res.stderr}`);
    if (res.ociRuntime !== sb.ociRuntime) throw new Error(`${which}: ran under ${res.ociRuntime}`);
    if (res.pooled !== !isCold) throw new Error(`${which}: the run was ${res.pooled ? "" : "not "}pooled`);
    if (source.includes("a.bin") && res.artifacts[0]?.size !== ARTIFACT_BYTES) throw new Error(`${which}: artifact missing`);
    await sb.settled();
    return ms;
  };
}

const ARTIFACT_BYTES = 1 << 20;
const programs = { trivial: "pass", pandas: "import pandas", artifact: "import os\nopen('out/a.bin', 'wb').write(os.urandom(1 << 20))" } as const;
const floorMode = { trivial: "exec", pandas: "fork", artifact: "artifact" } as const;
const allPaths = ["cold", "pooled", "handout", "floor", "cold-runsc", "pooled-runsc"] as const;
type Path = (typeof allPaths)[number];
const paths: Path[] = allPaths.filter((p) => gvisor || !p.endsWith("-runsc"));
const runcPaths = paths.filter((p) => !p.endsWith("-runsc"));
type Program = keyof typeof programs;
const times: Record<string, number[]> = {};
/**
 * Nothing else running when a run is timed: every pool full and every removal done. A pool refills after
 * its run, so without this the previous path's replacement container (a start and a pandas import, about a
 * CPU-second) ran beside the next path's timed run: pooled pandas measured 59 ms that way, 19 ms alone.
 */
async function quiet(): Promise<void> {
  const pools = gvisor ? [pooled, handout, pooledRunsc] : [pooled, handout];
  await Promise.all(pools.map((sb) => sb.warm({ timeoutMs: 120_000 })));
  await Promise.all([cold, coldRunsc, ...pools].map((sb) => sb.settled()));
}
const prepare = async (path: Path, name: Program) => {
  const timed = path === "floor" ? await floor(floorMode[name], programs[name], name === "artifact" ? ARTIFACT_BYTES : 0) : await sandboxRun(path, programs[name]);
  await quiet();
  return timed;
};

/** --burst runs on a pool of one, 300 ms apart: how many found the pool empty, and their median. */
async function burstRun(sb: typeof pooled): Promise<{ cold: number; ms: number[] }> {
  await sb.warm({ timeoutMs: 120_000 });
  let coldRuns = 0;
  const ms: number[] = [];
  for (let i = 0; i < burst; i++) {
    const t0 = performance.now();
    const res = await sb.run(req(programs.pandas));
    ms.push(performance.now() - t0);
    if (!res.pooled) coldRuns++;
    await new Promise((r) => setTimeout(r, 300));
  }
  await sb.settled();
  return { cold: coldRuns, ms };
}

const bursts: Record<string, { cold: number; ms: number[] }> = {};
try {
  // Warm-up: the image's first use, the engine's caches, tsx's module loading.
  for (const path of paths) await (await prepare(path, "pandas"))();
  for (let r = 0; r < rounds; r++) {
    for (const name of Object.keys(programs) as Program[]) {
      const order = paths.map((_, i) => paths[(i + r) % paths.length]!);
      for (const path of order) {
        const timed = await prepare(path, name);
        (times[`${name}/${path}`] ??= []).push(await timed());
      }
    }
  }
  if (burst > 0) {
    bursts.handout = await burstRun(handout);
    bursts.pooled = await burstRun(pooled);
  }
} finally {
  await Promise.all([pooled.close(), handout.close(), pooledRunsc.close()]);
  await removeLeftovers(docker, { runnerId });
}

const med = (k: string) => pct(times[k]!, 50);
const fmt = (k: string) => `${Math.round(med(k))} (${Math.round(pct(times[k]!, 90))}) ms`;
console.log(`sandbox bench: ${rounds} interleaved rounds, medians (p90)`);
console.log(`${"".padEnd(10)}${runcPaths.map((p) => p.padStart(16)).join("")}${"pooled/floor".padStart(16)}`);
for (const name of Object.keys(programs)) {
  const ratio = (med(`${name}/pooled`) / med(`${name}/floor`)).toFixed(2);
  console.log(`${name.padEnd(10)}${runcPaths.map((p) => fmt(`${name}/${p}`).padStart(16)).join("")}${`${ratio}x`.padStart(16)}`);
}
if (gvisor) {
  console.log(`runc beside runsc (gVisor), same rounds; target: pooled under gVisor within 1.5x of pooled under runc`);
  console.log(`${"".padEnd(10)}${["cold runc", "cold runsc", "runsc/runc", "pooled runc", "pooled runsc", "runsc/runc"].map((h) => h.padStart(16)).join("")}`);
  for (const name of Object.keys(programs)) {
    const r = (a: string, b: string) => `${(med(`${name}/${a}`) / med(`${name}/${b}`)).toFixed(2)}x`;
    const cells = [fmt(`${name}/cold`), fmt(`${name}/cold-runsc`), r("cold-runsc", "cold"), fmt(`${name}/pooled`), fmt(`${name}/pooled-runsc`), r("pooled-runsc", "pooled")];
    console.log(`${name.padEnd(10)}${cells.map((c) => c.padStart(16)).join("")}`);
  }
}
console.log(`target: pooled within 1.3x of the floor; floors: trivial fork+exec of python3, pandas a fork of the pre-imported parent, artifact that fork plus the bare bytes`);
for (const name of Object.keys(programs)) {
  console.log(`${name}: refill at hand-out / after the run: ${(med(`${name}/handout`) / med(`${name}/pooled`)).toFixed(2)}x; cold / pooled: ${(med(`${name}/cold`) / med(`${name}/pooled`)).toFixed(2)}x`);
}
for (const [policy, b] of Object.entries(bursts)) {
  console.log(`burst of ${burst} pandas runs 300 ms apart, pool of one, refill ${policy === "pooled" ? "after the run" : "at hand-out"}: ${b.cold}/${burst} cold (${Math.round((100 * b.cold) / burst)}%), median ${Math.round(pct(b.ms, 50))} ms`);
}
