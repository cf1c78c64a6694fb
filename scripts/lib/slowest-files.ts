// A vitest reporter that prints, after the run, the ten test files that took longest (import, hooks and
// tests), so a contributor sees where the suite's time goes without reading the whole log.
import type { Reporter, TestModule } from "vitest/node";

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => {
        const d = m.diagnostic();
        return { file: m.relativeModuleId, project: m.project.name, ms: d.collectDuration + d.setupDuration + d.duration };
      })
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10);
    if (rows.length === 0) return;
    const lines = rows.map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.project.padEnd(9)}  ${r.file}`);
    process.stdout.write(`\nThe slowest ${rows.length} test files (import, hooks and tests):\n${lines.join("\n")}\n`);
  }
}
