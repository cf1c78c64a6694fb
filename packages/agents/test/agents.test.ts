import { describe, expect, it } from "vitest";
import type { CheckOutcome, CheckSpec, Inspection } from "@loopsmith/schemas";
import {
  applyVeto,
  describeChecks,
  baselineChecks,
  freezeChecks,
  generatorRequest,
  inspectorRequest,
  plannerRequest,
  refinerRequest,
  summarizeInput,
  type RunSummary,
} from "../src/index";

const check = (id: string, params: Record<string, unknown> = {}, kind: CheckSpec["kind"] = "deterministic"): CheckSpec => ({
  id,
  params,
  kind,
  description: "",
});
const reconcile = check("reconciles_total", { values_path: "by_region", total_path: "total_revenue", tolerance: 0.01 });

describe("freezeChecks", () => {
  it("keeps the baseline and every client check exactly, then adds the planner's", () => {
    const { checks: frozen } = freezeChecks([reconcile], [check("schema_ok"), check("no_null_region")]);
    expect(frozen.map((c) => `${c.source}:${c.id}`)).toEqual([
      ...baselineChecks("result.json").map((c) => `baseline:${c.id}`),
      "client:reconciles_total",
      "planner:schema_ok",
      "planner:no_null_region",
    ]);
    expect(frozen.find((c) => c.source === "client")).toMatchObject({ params: reconcile.params });
  });

  it("a planner cannot weaken a client check: a looser copy is added beside it, never in its place", () => {
    const looser = check("reconciles_total", { values_path: "by_region", total_path: "total_revenue", tolerance: 1000 });
    const { checks: frozen } = freezeChecks([reconcile], [looser]);
    const reconciles = frozen.filter((c) => c.id === "reconciles_total");
    expect(reconciles).toHaveLength(2);
    expect(reconciles[0]).toMatchObject({ source: "client", params: { tolerance: 0.01 } });
  });

  it("drops exact duplicates, whatever the key order of their params", () => {
    const same = check("reconciles_total", { tolerance: 0.01, total_path: "total_revenue", values_path: "by_region" });
    const { checks: frozen } = freezeChecks([reconcile], [same, check("exits_clean")]);
    expect(frozen.filter((c) => c.id === "reconciles_total")).toHaveLength(1);
    expect(frozen.filter((c) => c.id === "exits_clean")).toHaveLength(1);
  });
});

describe("freezeChecks: deliverables and hidden material", () => {
  it("the baseline follows the deliverable: a CSV needs the file, a program deliverable only a clean exit", () => {
    expect(baselineChecks("clean.csv").map((c) => c.id)).toEqual(["exits_clean", "artifact_exists"]);
    expect(baselineChecks("out/report.json").map((c) => c.id)).toEqual(["exits_clean", "artifact_exists", "json_parses"]);
    expect(baselineChecks(null).map((c) => c.id)).toEqual(["exits_clean"]);
  });

  it("a client check that reads a checker file is hidden by default; the planner's never are, and may not read checker files", () => {
    const hiddenCsv = check("csv_matches", { artifact: "clean.csv", expected_file: "expected.csv" });
    const visible = { ...check("csv_matches", { artifact: "clean.csv", expected_file: "expected.csv" }), hidden: false };
    const plannerPeek = check("json_matches", { artifact: "r.json", expected_file: "expected.csv" });
    const { checks, dropped } = freezeChecks([hiddenCsv], [plannerPeek, check("row_count", { artifact: "clean.csv", min: 1 })], "clean.csv");
    expect(checks.find((c) => c.id === "csv_matches")).toMatchObject({ source: "client", hidden: true, reveal: "input" });
    expect(checks.find((c) => c.id === "row_count")).toMatchObject({ source: "planner", hidden: false });
    expect(checks.some((c) => c.id === "json_matches")).toBe(false);
    expect(dropped).toEqual([{ id: "json_matches", reason: expect.stringMatching(/checker files/) }]);
    expect(freezeChecks([visible], []).checks.find((c) => c.id === "csv_matches")).toMatchObject({ hidden: false });
  });

  it("describes a hidden check by what it reads, never by its material", () => {
    const spec = check("csv_matches", { artifact: "clean.csv", expected_file: "expected.csv", key: ["id"], row_order: "key", atol: 0.01 });
    const text = describeChecks([spec]);
    expect(text).toContain("hidden");
    expect(text).toContain("clean.csv");
    expect(text).not.toContain("expected.csv");
    const casesSpec = check("cases", { function: "add", cases: [{ args: [1, 2], expected: "CANARY-41" }] });
    const casesText = describeChecks([{ ...casesSpec, hidden: true }]);
    expect(casesText).toContain('"function":"add"');
    expect(casesText).not.toContain("CANARY-41");
  });
});

describe("applyVeto", () => {
  const yes: Inspection = { verified: true, failing_checks: [], diagnosis: "ok", fix_hint: "" };
  const outcome = (id: string, passed: boolean): CheckOutcome => ({ id, params: {}, passed, message: passed ? "ok" : "no", feedback: passed ? "ok" : "no", hidden: false, findings: [] });

  it("overrules a verified inspection over a failed check and lists the failure", () => {
    const { inspection, overruled } = applyVeto(yes, [outcome("exits_clean", true), outcome("reconciles_total", false)]);
    expect(overruled).toBe(true);
    expect(inspection.verified).toBe(false);
    expect(inspection.failing_checks).toEqual(["reconciles_total"]);
  });

  it("leaves the inspection alone when every check passed, including a refusal to verify", () => {
    expect(applyVeto(yes, [outcome("exits_clean", true)])).toEqual({ inspection: yes, overruled: false });
    const no = { ...yes, verified: false, failing_checks: ["readable"] };
    expect(applyVeto(no, [outcome("exits_clean", true)])).toEqual({ inspection: no, overruled: false });
  });
});

describe("requests", () => {
  const plan = { objective: "Sum revenue", approach: ["read", "sum"], output_contract: "{...}", checks: [] };
  const run: RunSummary = {
    attempt: 2,
    exitCode: 1,
    timedOut: false,
    oomKilled: false,
    durationMs: 420,
    stdout: "",
    stderr: "ValueError: could not convert string to float: '$1,299.00'",
    artifacts: [],
    deliverable: { name: "result.json", text: null },
  };
  const inputs = [summarizeInput("sales.csv", Buffer.from("order_id,revenue\n1,\"$1,299.00\"\n"))];

  it("the planner sees the goal, the inputs, the binding checks and the check library", () => {
    const req = plannerRequest({ objective: "Sum revenue", success: "totals reconcile", inputs, clientChecks: [reconcile] });
    expect(req).toMatchObject({ turn: "plan", index: 0, schemaName: "Plan" });
    expect(req.prompt).toContain("order_id,revenue");
    expect(req.prompt).toContain("totals reconcile");
    expect(req.prompt).toMatch(/binding checks:\n- reconciles_total/);
    expect(req.prompt).toMatch(/- top_is_argmax/);
  });

  it("the generator is told the sandbox contract", () => {
    const req = generatorRequest({ plan, checks: [reconcile], inputs });
    expect(req.system).toMatch(/INPUT_PATH/);
    expect(req.system).toMatch(/OUTPUT_DIR.*result\.json/s);
    expect(req.prompt).toContain("reconciles_total");
  });

  it("the inspector and refiner see the real failure, numbered by attempt", () => {
    const failed = [{ id: "exits_clean", params: {}, passed: false, message: "exit code 1", feedback: "exit code 1", hidden: false, findings: [] }];
    const insp = inspectorRequest({ plan, success: "one entry per real region", checks: [reconcile], outcomes: failed, run });
    expect(insp.prompt).toContain("one entry per real region");
    expect(insp).toMatchObject({ turn: "inspect", index: 1 });
    expect(insp.prompt).toContain("FAIL exits_clean: exit code 1");
    expect(insp.prompt).toContain("could not convert string to float");
    const ref = refinerRequest({
      plan,
      code: { filename: "a.py", language: "python", source: "print(1)", notes: "" },
      run,
      failed,
      inspection: { verified: false, failing_checks: ["exits_clean"], diagnosis: "currency strings", fix_hint: "strip $" },
    });
    expect(ref).toMatchObject({ turn: "refine", index: 1, schemaName: "GeneratedCode" });
    for (const s of ["print(1)", "could not convert", "FAIL exits_clean", "currency strings", "strip $"]) expect(ref.prompt).toContain(s);
  });

  it("issue 27: the inspector and both refiner arms are offered the give-up, and their schemas require the field", async () => {
    const failed = [{ id: "exits_clean", params: {}, passed: false, message: "exit code 1", feedback: "exit code 1", hidden: false, findings: [] }];
    const insp = inspectorRequest({ plan, success: null, checks: [reconcile], outcomes: failed, run });
    const base = { plan, code: { filename: "a.py", language: "python" as const, source: "print(1)", notes: "" }, run, failed, inspection: { verified: false, failing_checks: [], diagnosis: "d", fix_hint: "f" } };
    const full = refinerRequest(base);
    const control = refinerRequest({ ...base, feedback: "retry_only" });
    for (const req of [insp, full, control]) {
      expect(req.system).toMatch(/infeasible/);
      expect(req.system).toMatch(/never verifies the goal/);
      expect(req.schema.safeParse({ ...(req === insp ? base.inspection : base.code), infeasible: { reason: "contradiction" } }).success).toBe(true);
      expect(req.schema.safeParse({ ...(req === insp ? base.inspection : base.code), infeasible: { reason: "" } }).success).toBe(false);
    }
  });

  it("issue 27: after the client overruled a give-up, the refiner hears the reason and the note; the control arm only the note", () => {
    const failed = [{ id: "exits_clean", params: {}, passed: false, message: "exit code 1", feedback: "exit code 1", hidden: false, findings: [] }];
    const base = { plan, code: { filename: "a.py", language: "python" as const, source: "print(1)", notes: "" }, run, failed, inspection: { verified: false, failing_checks: [], diagnosis: "d", fix_hint: "f" } };
    const overruledGiveUp = { reason: "exits_clean contradicts the objective", note: "The check is right." };
    const full = refinerRequest({ ...base, overruledGiveUp });
    expect(full.prompt).toContain("Earlier this goal was declared infeasible: exits_clean contradicts the objective");
    expect(full.prompt).toContain("The client's note: The check is right.");
    const control = refinerRequest({ ...base, feedback: "retry_only", overruledGiveUp });
    expect(control.prompt).toContain("The client's note: The check is right.");
    expect(control.prompt).not.toContain("exits_clean");
    // Without a give-up the prompt says nothing of one.
    expect(refinerRequest(base).prompt).not.toMatch(/declared infeasible|client's note/);
  });

  it("binary inputs are described without their bytes", () => {
    expect(summarizeInput("x.bin", Buffer.from([0, 1, 2, 3]))).toEqual({ name: "x.bin", size: 4, head: null });
  });
});
