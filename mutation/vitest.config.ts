import { defineConfig } from "vitest/config";

// The unit tests a mutation run uses: pure tests, no services. MUTATE_TESTS is a comma-separated list of
// globs (set by scripts/mutate.ts for each target).
export default defineConfig({
  test: {
    include: (process.env.MUTATE_TESTS ?? "packages/machine/test/**/*.test.ts").split(","),
    testTimeout: 120_000,
    reporters: ["dot"],
    // Without static mutants (MUTATE_STATIC=0), no mutant needs its modules evaluated afresh: each mutant is
    // switched on at run time, so the worker keeps its imports between mutant runs instead of re-importing
    // zod and the verifier for every one.
    isolate: process.env.MUTATE_STATIC !== "0",
  },
});
