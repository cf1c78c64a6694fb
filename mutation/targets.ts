// What `npm run mutate` mutates, which unit tests (no services) must notice, and the score each target
// must keep. Equivalent mutants (changes no test can observe because behaviour is the same) are marked in
// the source with `// Stryker disable next-line <mutator>: <reason>`, so the reason sits beside the code.
export interface MutationTarget {
  name: string;
  mutate: string[];
  tests: string[];
  /** Minimum mutation score, percent. */
  threshold: number;
  /**
   * Skip static mutants (module-level code such as param schemas and constants): each reruns every test
   * of the target, which on the verifier's parts costs most of the run. They are reported as ignored.
   */
  ignoreStatic?: boolean;
}

export const TARGETS: MutationTarget[] = [
  { name: "machine", mutate: ["packages/machine/src/**/*.ts"], tests: ["packages/machine/test/**/*.test.ts"], threshold: 90 },
  // The verifier in parts: the whole package is 6,500 mutants, and its large-artifact tests run for minutes
  // once instrumented, so each part runs the unit tests that exercise it. What each part scored, and when,
  // is in the README's "Mutation testing" table.
  {
    name: "checks-demo",
    mutate: ["artifact-exists", "json-parses", "exits-clean", "no-blank-keys", "aliases", "top-is-argmax", "reconciles-total", "json-schema", "support"].map(
      (f) => `packages/verifier/src/checks/${f}.ts`,
    ),
    tests: ["packages/verifier/test/checks.test.ts", "packages/verifier/test/checks-edges.test.ts"],
    threshold: 90,
    ignoreStatic: true,
  },
  {
    name: "verifier-core",
    mutate: ["run", "registry", "define", "format", "reveal", "artifacts", "json-path"].map((f) => `packages/verifier/src/${f}.ts`),
    tests: ["run", "validate", "json-path", "core"].map((f) => `packages/verifier/test/${f}.test.ts`),
    threshold: 90,
    ignoreStatic: true,
  },
  {
    name: "checks-json",
    // The exact reader lives in core (issue 25); its own test imports it by relative path, so that the
    // sandbox's instrumented copy is the one tested (a package import resolves to the checkout's).
    mutate: ["packages/verifier/src/checks/json-matches.ts", "packages/verifier/src/checks/json-assert.ts", "packages/core/src/json.ts"],
    tests: ["packages/verifier/test/json-checks.test.ts", "packages/verifier/test/json-path.test.ts", "packages/core/test/json-exact.test.ts"],
    threshold: 90,
    ignoreStatic: true,
  },
  {
    name: "checks-text",
    mutate: ["packages/verifier/src/checks/text-matches.ts", "packages/verifier/src/lib/text.ts", "packages/verifier/src/lib/regex.ts"],
    tests: ["packages/verifier/test/text-matches.test.ts", "packages/verifier/test/regex-guard.test.ts"],
    threshold: 90,
    ignoreStatic: true,
  },
  // The table checks are the largest part (about 2,000 lines), so they run in four.
  {
    name: "checks-csv-matches",
    mutate: ["checks/csv-matches", "lib/numbers"].map((f) => `packages/verifier/src/${f}.ts`),
    tests: ["csv-matches", "bench-findings", "numbers"].map((f) => `packages/verifier/test/${f}.test.ts`),
    threshold: 90,
    ignoreStatic: true,
  },
  {
    name: "checks-csv-schema",
    mutate: ["checks/csv-schema", "checks/row-count"].map((f) => `packages/verifier/src/${f}.ts`),
    tests: ["csv-schema", "row-count"].map((f) => `packages/verifier/test/${f}.test.ts`),
    threshold: 90,
    ignoreStatic: true,
  },
  {
    name: "checks-csv-repair",
    mutate: ["packages/verifier/src/checks/csv-repair.ts"],
    tests: ["packages/verifier/test/csv-repair.test.ts"],
    threshold: 90,
    ignoreStatic: true,
  },
  {
    name: "checks-csv-lib",
    mutate: ["lib/csv", "lib/values"].map((f) => `packages/verifier/src/${f}.ts`),
    tests: ["csv", "csv-matches", "json-checks", "values"].map((f) => `packages/verifier/test/${f}.test.ts`),
    threshold: 90,
    ignoreStatic: true,
  },
  {
    name: "checks-run",
    mutate: ["checks/cases", "checks/cases-harness", "checks/test-suite", "lib/python"].map((f) => `packages/verifier/src/${f}.ts`),
    tests: ["packages/verifier/test/cases.test.ts", "packages/verifier/test/test-suite.test.ts"],
    threshold: 90,
    // Its tests are quick, so its static mutants (the param schema, the harness, the exception names) run too.
  },
  // issue 14's workspace goals: the command check, the JUnit reader it shares with test_suite, and the
  // workspace archive reader and diff (all pure: the command's container run arrives as evidence).
  {
    name: "checks-workspace",
    mutate: ["checks/command", "lib/junit", "workspace"].map((f) => `packages/verifier/src/${f}.ts`),
    tests: ["command", "workspace", "test-suite"].map((f) => `packages/verifier/test/${f}.test.ts`),
    threshold: 90,
    ignoreStatic: true,
  },
  { name: "schemas", mutate: ["packages/schemas/src/**/*.ts"], tests: ["packages/schemas/test/**/*.test.ts"], threshold: 90 },
  { name: "sign", mutate: ["packages/webhooks/src/sign.ts"], tests: ["packages/webhooks/test/sign.test.ts"], threshold: 90 },
  { name: "ssrf", mutate: ["packages/webhooks/src/ssrf.ts"], tests: ["packages/webhooks/test/ssrf.test.ts", "packages/webhooks/test/ssrf-edges.test.ts"], threshold: 90 },
  { name: "progress", mutate: ["packages/agents/src/progress.ts"], tests: ["packages/agents/test/progress.test.ts"], threshold: 90 },
];
