// Issue 27 (3): the self-test's junk deliverables, judged by the real checks (runChecks, as the self-test
// judges them) without a sandbox: each vacuous definition of done of bench/honesty-vacuous.ts passes at
// least one of them, each honest one fails them all. tests/e2e/evaluator/vacuous-done.test.ts sends the
// same goals through the API.
import { freezeChecks } from "@loopsmith/agents";
import { checkSpec, type FrozenCheck } from "@loopsmith/schemas";
import { runChecks } from "@loopsmith/verifier";
import { describe, expect, it } from "vitest";
import { VACUOUS, type VacuousTask } from "../../../bench/honesty-vacuous";
import { junkProbes, type JunkProbe } from "../src/states/junk-probes";

const files = (named: Record<string, string> = {}) => Object.entries(named).map(([name, text]) => ({ name, content: Buffer.from(text, "utf8") }));
const frozen = (checks: unknown[], deliverable: string | null) => freezeChecks(checkSpec.array().parse(checks), [], deliverable).checks;

function passing(checks: FrozenCheck[], task: Pick<VacuousTask, "inputs" | "checkerFiles">, probes: JunkProbe[]): string[] {
  const inputs = files(task.inputs);
  const checkerFiles = files(task.checkerFiles);
  return probes
    .filter((p) => {
      const ctx = { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 0, artifacts: p.artifacts, artifactErrors: [], inputs, checkerFiles, program: { filename: "probe.py", source: "pass\n" }, runs: [] };
      return runChecks(checks, ctx).every((o) => o.passed);
    })
    .map((p) => p.probe);
}

const text = (p: JunkProbe) => p.artifacts.map((a) => `${a.name}=${a.content.toString("utf8")}`);

describe("junk deliverables (issue 27)", () => {
  for (const task of VACUOUS) {
    for (const [what, v] of Object.entries(task.vacuous)) {
      it(`${task.name}: ${what} passes a junk deliverable, named`, () => {
        const checks = frozen(v.checks, task.deliverable);
        const passed = passing(checks, task, junkProbes(checks, files(task.inputs), files(task.checkerFiles)));
        expect(passed.some((p) => v.probe.test(`${p} passed every check`)), passed.join("; ")).toBe(true);
      });
    }
    it(`${task.name}: the honest definition fails every junk deliverable`, () => {
      const checks = frozen(task.honest, task.deliverable);
      const probes = junkProbes(checks, files(task.inputs), files(task.checkerFiles));
      expect(probes.length).toBeGreaterThanOrEqual(2);
      expect(passing(checks, task, probes)).toEqual([]);
    });
  }

  it("gives a table the expected file's header, else the columns the checks name, else the one input's header", () => {
    const expected = { "expected.csv": "a;b\n1;2\n" };
    const byFile = frozen([{ id: "csv_matches", params: { artifact: "out.csv", expected_file: "expected.csv", delimiter: ";" } }], "out.csv");
    expect(text(junkProbes(byFile, [], files(expected))[0]!)).toEqual(["out.csv=a;b\n"]);
    // The probe's name reaches the tape and the export: hidden material is used, never quoted.
    expect(junkProbes(byFile, [], files(expected))[0]!.probe).toBe("a junk deliverable: out.csv as an empty table with the expected header");
    const hiddenColumns = frozen([{ id: "csv_schema", hidden: true, params: { artifact: "out.csv", columns: ["secret_column"] } }], "out.csv");
    expect(junkProbes(hiddenColumns, [], [])[0]).toMatchObject({ probe: "a junk deliverable: out.csv as an empty table with the expected header" });
    expect(text(junkProbes(hiddenColumns, [], [])[0]!)).toEqual(["out.csv=secret_column\n"]);
    const byColumns = frozen([{ id: "csv_schema", params: { artifact: "out.csv", columns: ["id", "full name"], rules: { "x,y": { not_null: true } } } }], "out.csv");
    expect(text(junkProbes(byColumns, [], [])[0]!)).toEqual(['out.csv=id,full name,"x,y"\n']);
    const byInput = frozen([{ id: "row_count", params: { artifact: "out.csv", min: 0 } }], "out.csv");
    expect(text(junkProbes(byInput, files({ "in.csv": "p,q\r\n1,2\r\n" }), [])[0]!)).toEqual(["out.csv=p,q\n"]);
    // Nothing says what the columns are: an empty file, and no input to copy through.
    expect(junkProbes(byInput, [], []).map((p) => [p.probe, ...text(p)])).toEqual([["a junk deliverable: out.csv as an empty file", "out.csv="]]);
  });

  it("writes every artifact the checks read, {} and [] for JSON, the input copied through only when there is one", () => {
    const checks = frozen(
      [
        { id: "json_assert", params: { artifact: "report.json", pointer: "", op: "exists" } },
        { id: "text_matches", params: { artifact: "notes.txt", expected: "" } },
      ],
      "report.json",
    );
    const one = junkProbes(checks, files({ "in.txt": "hello" }), []);
    expect(one.map((p) => [p.probe, ...text(p)])).toEqual([
      ["a junk deliverable: report.json as {}, notes.txt as an empty text", "report.json={}", "notes.txt="],
      ["a junk deliverable: report.json as [], notes.txt as an empty text", "report.json=[]", "notes.txt="],
      ['a junk deliverable: the input "in.txt" copied through to report.json, notes.txt', "report.json=hello", "notes.txt=hello"],
    ]);
    expect(junkProbes(checks, files({ "a.txt": "1", "b.txt": "2" }), [])).toHaveLength(2);
  });

  it("probes nothing when no client check reads an artifact: the baseline alone, stdout, or the program's own runs", () => {
    expect(junkProbes(frozen([], "result.json"), files({ "in.csv": "a\n1\n" }), [])).toEqual([]);
    expect(junkProbes(frozen([{ id: "text_matches", params: { expected: "" } }], "result.json"), [], [])).toEqual([]);
    expect(junkProbes(frozen([{ id: "cases", params: { function: "f", cases: [{ args: [], expected: 1 }] } }], null), [], [])).toEqual([]);
    expect(junkProbes(frozen([{ id: "row_count", params: { artifact: "out.csv", min: 0 }, kind: "judgement" }], "out.csv"), [], [])).toEqual([]);
  });
});
