import { configDefaults, defineConfig } from "vitest/config";

// Integration tests share one Postgres, one Redis and one Docker engine. Every test scopes what it
// touches (its own queue prefix, tenant, runner ids and container labels), so most files run two at a
// time: much of a file's time is spent waiting (on a container, a model's scripted turn, a poll), not on
// the CPU. Afterwards, one at a time with nothing beside them, run the files that either take a shared
// service away from everyone (infra-restart stops Postgres, Redis and the Docker engine), load the machine
// on purpose (the sandbox exploits: fork, memory and output bombs), or assert on timing that a busy
// neighbour would change (crash recovery within lock and heartbeat windows, fairness bounds, a worker
// killed milliseconds after a delivery). Run side by side on a loaded machine, those were the ones that
// failed.
const EXCLUSIVE = [
  "tests/durability/**/*.test.ts",
  // The sandbox exploits that load the machine on purpose (fork, memory, output and descriptor bombs) or
  // hold a timing bound (orphans and SIGTERM-ignoring loops end at once, a slow check is cut at its
  // limit). The other exploits (escapes, secrets, forged results, path spellings) and tests/exploits/judge/
  // run side by side with the rest.
  "tests/exploits/fork-bomb.test.ts",
  "tests/exploits/memory-bomb.test.ts",
  "tests/exploits/stdout-flood.test.ts",
  "tests/exploits/open-files.test.ts",
  "tests/exploits/orphan-process.test.ts",
  "tests/exploits/sigterm-loop.test.ts",
  "tests/exploits/slow-check.test.ts",
  "tests/e2e/tenant-limits.test.ts",
  "packages/webhooks/test/worker.test.ts",
  // Failed once side by side in CI and never alone: the sweep test read a delivery's status before the
  // worker recorded it (now waited for); the receipts test's webhook tape did not verify against the
  // receipt (cause not found yet; its assertion now prints the problems).
  "tests/e2e/receipts.test.ts",
  "apps/runner/test/sweep.test.ts",
];

// The sandbox exploits run a second time with every sandbox under gVisor (runsc), as a runner on an engine
// that offers it does by default; the first time (and the rest of the suite) under runc. What the kernel
// decides is what differs between the two walls: process and memory limits, descriptors, files, uids,
// /proc, the network, signals. So every exploit runs under gVisor too (a new one as well), except those that
// cannot meet the kernel differently: the judge battery's attacks on the interpreter (.pth, sitecustomize, a
// shadowed module, a patched assert, npm's configuration: the same binary under either kernel; they took
// 350 s more of a worker under gVisor) and the admin path spellings (no sandbox at all). The battery's
// attacks that do meet the kernel (a process outliving the program to edit the tests or the report, the
// hidden tests' and the report's permissions) run under both. The closed loop and the workspace files took
// 313 s more under gVisor, covering nothing the battery does not.
const NOT_UNDER_GVISOR = [
  "tests/exploits/admin-path-spellings.test.ts",
  ...[
    "dist-info-plugin", "exec-exit-at-import", "exec-sys-exit", "exit-at-import", "extra-test-file", "node-bin-shadow",
    "node-dot-node-modules", "node-extra-test-file", "node-patched-assert", "npmrc", "package-json-script", "patch-runtest",
    "pth-exec-exit", "pth-user-site", "root-conftest", "sitecustomize", "stdlib-shadow", "suite-exit-at-import",
    "suite-lying-eq", "suite-patch-pytest", "swallow-assertions", "usercustomize",
  ].map((name) => `tests/exploits/judge/${name}.test.ts`),
  // The output flood's relay under gVisor is clipped and counted in packages/sandbox/test/sandbox.test.ts, and a
  // slow check is stopped by the engine the same way under both.
  "tests/exploits/stdout-flood.test.ts",
  "tests/exploits/slow-check.test.ts",
];
const UNDER_GVISOR = ["tests/exploits/**/*.test.ts"];
const GVISOR_ENV = { SANDBOX_RUNTIME: "runsc" };

const common = {
  testTimeout: 60_000,
  hookTimeout: 300_000,
  // The files of a worker share one module graph: each file imported the API, the runner and their
  // dependencies afresh (2-4 s of CPU per file on a CPU-bound suite). Every file cleans up what it
  // starts (its loop, its servers, its spies), which the shared graph relies on.
  isolate: false,
  // The API and the runner run as processes from their compiled bundles: built once, before the workers.
  globalSetup: ["./tests/support/build.ts"],
};

export default defineConfig({
  test: {
    reporters: ["default", "./scripts/lib/slowest-files.ts"],
    projects: [
      {
        test: {
          ...common,
          name: "shared",
          include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "tests/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...EXCLUSIVE],
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...common,
          name: "gvisor",
          include: UNDER_GVISOR,
          exclude: [...configDefaults.exclude, ...EXCLUSIVE, ...NOT_UNDER_GVISOR],
          env: GVISOR_ENV,
          // Vitest runs the projects of one group in one pool: the shared phase's two workers take these too.
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          ...common,
          name: "exclusive",
          include: EXCLUSIVE,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
      {
        test: {
          ...common,
          name: "gvisor-exclusive",
          include: EXCLUSIVE.filter((f) => f.startsWith("tests/exploits/")),
          exclude: [...configDefaults.exclude, ...NOT_UNDER_GVISOR],
          env: GVISOR_ENV,
          fileParallelism: false,
          sequence: { groupOrder: 2 },
        },
      },
    ],
  },
});
