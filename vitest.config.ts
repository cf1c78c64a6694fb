import { defineConfig } from "vitest/config";

// Integration tests share one Postgres, one Redis and one Docker engine: run files one at a time so
// that container-heavy suites do not fight over the machine's two cores.
export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "apps/*/test/**/*.test.ts", "tests/**/*.test.ts"],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 300_000,
    reporters: ["default"],
  },
});
