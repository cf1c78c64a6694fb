// A vitest reporter that prints, after the run, the ten test files that took longest (import, hooks and
// tests) and how long each project (the shared phase, the exclusive phase) took from its first file's
// start to its last file's end, so a contributor sees where the suite's time goes without reading the
// whole log. With FILE_TIMES=<path> it also writes every file's start, end and duration there as JSON.
import { writeFileSync } from "node:fs";
import type { Reporter, TestModule } from "vitest/node";

export default class SlowestFiles implements Reporter {
  private readonly started = new Map<string, number>();
  private readonly ended = new Map<string, number>();

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    this.ended.set(module.moduleId, Date.now());
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const rows = modules
      .map((m) => {
        const d = m.diagnostic();
        return {
          file: m.relativeModuleId,
          project: m.project.name,
          ms: d.collectDuration + d.setupDuration + d.duration,
          start: this.started.get(m.moduleId) ?? 0,
          end: this.ended.get(m.moduleId) ?? 0,
        };
      })
      .sort((a, b) => b.ms - a.ms);
    if (rows.length === 0) return;
    const out = process.env.FILE_TIMES;
    if (out) writeFileSync(out, JSON.stringify(rows, null, 1));
    const lines = rows
      .slice(0, 10)
      .map((r) => `  ${(r.ms / 1000).toFixed(1).padStart(7)} s  ${r.project.padEnd(9)}  ${r.file}`);
    const phases = [...new Set(rows.map((r) => r.project))].map((project) => {
      const mine = rows.filter((r) => r.project === project && r.start > 0 && r.end > 0);
      if (mine.length === 0) return `  ${project}: no timings`;
      const wall = Math.max(...mine.map((r) => r.end)) - Math.min(...mine.map((r) => r.start));
      return `  ${project.padEnd(9)}  ${(wall / 1000).toFixed(1).padStart(7)} s wall, ${mine.length} files`;
    });
    process.stdout.write(
      `\nThe slowest 10 test files (import, hooks and tests):\n${lines.join("\n")}\n` +
        `Phases (first file's start to last file's end):\n${phases.join("\n")}\n`,
    );
  }
}
