import { configDefaults, defineConfig } from "vitest/config";

// Integration tests share one Postgres, one Redis and one Docker engine. Every test scopes what it
// touches (its own queue prefix, tenant, runner ids and container labels), so two files run side by
// side: most of a file's time is spent waiting (on a lock to expire, a container to start, a sweep), not
// on the CPU. Files that take a shared service away from everyone (infra-restart stops Postgres, Redis
// and the Docker engine) run afterwards, one at a time, with nothing beside them.
const EXCLUSIVE = ["tests/durability/infra-restart.test.ts"];

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
