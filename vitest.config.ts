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
  // The sandbox exploits at the top level; tests/exploits/judge/ (issue 26) runs side by side with the rest.
  "tests/exploits/*.test.ts",
  "tests/e2e/tenant-limits.test.ts",
  "packages/webhooks/test/worker.test.ts",
  // Failed once side by side in CI and never alone: the sweep test read a delivery's status before the
  // worker recorded it (now waited for); the receipts test's webhook tape did not verify against the
  // receipt (cause not found yet; its assertion now prints the problems).
  "tests/e2e/receipts.test.ts",
  "apps/runner/test/sweep.test.ts",
];

const common = {
  testTimeout: 60_000,
  hookTimeout: 300_000,
};

export default defineConfig({
  test: {
    reporters: ["default"],
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
          name: "exclusive",
          include: EXCLUSIVE,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
