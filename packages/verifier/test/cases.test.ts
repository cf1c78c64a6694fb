// The cases check judged on crafted sandbox evidence, without services (issue 18): what its run request
// carries (never expected values), and how it judges every result status, forged and missing results,
// tolerances both ways, and the stdin mode. issue 27: the results are the judge's file (the judge runs
// beside the program under its own uid), values compare with their exact Python types, and held-out
// cases reach a model only as a count.
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { listChecks, planCheckRuns, publicCheck, runChecks, validateCheckSpec, visibilityOf, type NamedFile, type RunEvidence } from "../src/index";
import { BRIDGE_WIRE_PY } from "../src/checks/bridge-py";
import { CASES_JUDGE_PY, CASES_SERVER_PY } from "../src/checks/cases-harness";
import { heldOut, MALFORMED_RESULTS, MAX_CASES } from "../src/checks/cases";
import { CASES_MODULE_SHADOWS, safeExceptionName, STARTUP_MODULES } from "../src/lib/python";
import { check, emptyCtx, file } from "./support";

const PROGRAM = { filename: "analysis.py", source: "def add(a, b):\n    return a + b\n" };

/** What the judge of a case run left: its exit code, the files it wrote in its own out/, its collection errors. */
type Judged = { exitCode?: number; files?: NamedFile[]; errors?: string[] };

/** A case run whose judge wrote these result lines (`run` is the container's side: its end, its artifacts). */
function evidence(records: unknown[] | string, judged: Judged = {}, run: Partial<RunEvidence> = {}): RunEvidence {
  const text = typeof records === "string" ? records : records.map((r) => JSON.stringify(r)).join("\n");
  return {
    exitCode: 0,
    timedOut: false,
    oomKilled: false,
    stdout: "",
    stderr: "",
    durationMs: 50,
    artifacts: [],
    artifactErrors: [],
    judge: { exitCode: 0, files: [file("cases.jsonl", text)], errors: [], ...judged },
    ...run,
  };
}

function judge(params: Record<string, unknown>, runs: RunEvidence[], over: Partial<CheckSpec> = {}, checkerFiles = [] as ReturnType<typeof file>[]) {
  const spec = { ...check("cases", params), ...over };
  const [o] = runChecks([spec], emptyCtx({ program: PROGRAM, checkerFiles }), () => runs);
  if (o === undefined) throw new Error("no outcome");
  return o;
}

const plan = (params: Record<string, unknown>) => planCheckRuns(check("cases", params), { program: PROGRAM, checkerFiles: [], inputs: [] });
const specOf = (req: { files: { path: string; content: Buffer }[] }) => JSON.parse(req.files.find((f) => f.path === ".judge/cases.json")!.content.toString()) as unknown;

const ADD = { function: "add", cases: [{ id: "small", args: [2, 3], expected: 5 }, { args: [-1, 1], expected: 0 }] };
// Result lines as the judge writes them (issue 25: anything else is refused).
const ok = (id: string, value: unknown) => ({ id, status: "ok", value, duration_ms: 3 });
const called = (id: string, rec: Record<string, unknown>) => ({ id, duration_ms: 3, ...rec });
const printed = (id: string, rec: Record<string, unknown>) => ({ id, status: "ok", duration_ms: 3, exit_code: 0, stdout: "", stdout_clipped: false, stderr_tail: "", ...rec });

describe("cases: the run request", () => {
  // issue 27: the cases (ids and inputs) sit in the judge's directory; the program's side gets the server
  // and the wire, and one case's inputs at a time over a pipe.
  it("carries the program and the server to the program's side, the cases to the judge's, never the expected values", () => {
    const [req, ...rest] = plan({ ...ADD, cases: [{ id: "secret-id", args: ["INPUT-7781", 22], kwargs: { c: 1 }, expected: "EXPECTED-4242" }] });
    expect(rest).toEqual([]);
    expect(req!.command).toEqual(["python3", ".loopsmith/cases_server.py"]);
    expect(req!.judge).toEqual({ dir: ".judge", command: ["python3", "-I", "-B", "cases_judge.py"] });
    expect(req!.files.map((f) => f.path)).toEqual(["solution.py", ".loopsmith/cases_server.py", ".loopsmith/loopsmith_wire.py", ".judge/cases_judge.py", ".judge/loopsmith_wire.py", ".judge/cases.json"]);
    const content = (path: string) => req!.files.find((f) => f.path === path)!.content.toString();
    expect(content("solution.py")).toBe(PROGRAM.source);
    expect(content(".loopsmith/cases_server.py")).toBe(CASES_SERVER_PY);
    expect(content(".loopsmith/loopsmith_wire.py")).toBe(BRIDGE_WIRE_PY);
    expect(content(".judge/cases_judge.py")).toBe(CASES_JUDGE_PY);
    expect(content(".judge/loopsmith_wire.py")).toBe(BRIDGE_WIRE_PY);
    expect(specOf(req!)).toEqual({ mode: "call", module: "solution", function: "add", timeout: 10, import_timeout: 30, cases: [{ id: "secret-id", args: ["INPUT-7781", 22], kwargs: { c: 1 } }] });
    for (const f of req!.files) {
      expect(f.content.toString(), f.path).not.toContain("EXPECTED-4242");
      // Outside the judge's directory, nothing names a case or holds its inputs.
      if (!f.path.startsWith(".judge/")) expect(f.content.toString(), f.path).not.toMatch(/INPUT-7781|secret-id/);
    }
    // The judge writes the results in its own out/, which comes back as judge.files.
    expect(CASES_JUDGE_PY).toContain('OUT = os.path.join(here, "out")');
    expect(CASES_JUDGE_PY).toContain('os.path.join(OUT, "cases.jsonl")');
    // One case: its limit (10 s + 0.5), the import's 30 s and 15 s of room.
    expect(req!.timeoutMs).toBe(55_500);
  });

  it("sends the typed notation of the arguments as written", () => {
    const args = [{ $tuple: [1, 2] }, { $set: [3] }, { $dict: [[1, "a"]] }, { $bytes: "AAE=" }];
    const [req] = plan({ function: "f", cases: [{ id: "c", args, kwargs: { k: { $frozenset: [] } }, expected: null }] });
    expect(specOf(req!)).toMatchObject({ cases: [{ id: "c", args, kwargs: { k: { $frozenset: [] } } }] });
  });

  // issue 27: the program's side decodes the wire's strict notation, where a plain object is no value (a dict
  // is a $dict): sent as written, every program raised ValueError on a case with a dict argument.
  it("sends a plain object, at any depth, as the $dict the program's side decodes", () => {
    const [req] = plan({ function: "f", cases: [{ id: "c", args: [{ b: 2, a: [{ x: {} }] }, { $tuple: [{ k: 1 }] }], kwargs: { opts: { deep: { $set: [1] } } }, expected: null }] });
    expect(specOf(req!)).toMatchObject({
      cases: [{ id: "c", args: [{ $dict: [["b", 2], ["a", [{ $dict: [["x", { $dict: [] }]] }]]] }, { $tuple: [{ $dict: [["k", 1]] }] }], kwargs: { opts: { $dict: [["deep", { $set: [1] }]] } } }],
    });
  });

  it("stdin mode sends stdin and argv only; the module name is the file name", () => {
    const p = { mode: "stdin", module: "prog", timeout_seconds: 2, cases: [{ stdin: "1 2\n", expected_stdout: "3\n" }, { id: "b", argv: ["-v"], expected_stdout: "EXPECTED-OUT-4242" }] };
    const [req] = plan(p);
    expect(req!.files[0]!.path).toBe("prog.py");
    expect(req!.command).toEqual(["python3", ".loopsmith/cases_server.py"]);
    expect(specOf(req!)).toEqual({
      mode: "stdin",
      module: "prog",
      function: "",
      timeout: 2,
      import_timeout: 30,
      cases: [
        { id: "case 1", stdin: "1 2\n", argv: [] },
        { id: "b", stdin: "", argv: ["-v"] },
      ],
    });
    for (const f of req!.files) expect(f.content.toString(), f.path).not.toContain("EXPECTED-OUT-4242");
    expect(req!.timeoutMs).toBe(50_000);
  });

  it("caps the overall time limit at ten minutes", () => {
    const many = Array.from({ length: MAX_CASES }, (_, i) => ({ args: [i], expected: i }));
    const [req] = plan({ function: "f", cases: many, timeout_seconds: 60 });
    expect(req!.timeoutMs).toBe(600_000);
  });

  it("reads the cases from a checker file, which makes the check hidden; no run when the file is bad", () => {
    const spec = check("cases", { function: "add", cases_file: "cases.json" });
    expect(visibilityOf(spec).hidden).toBe(true);
    const good = file("cases.json", JSON.stringify([{ args: [1, 2], expected: 3 }]));
    expect(planCheckRuns(spec, { program: PROGRAM, checkerFiles: [good], inputs: [] })).toHaveLength(1);
    expect(planCheckRuns(spec, { program: PROGRAM, checkerFiles: [], inputs: [] })).toEqual([]);
    expect(planCheckRuns(spec, { program: PROGRAM, checkerFiles: [file("cases.json", "[")], inputs: [] })).toEqual([]);
    // A malformed tag is an invalid case too: no container for it.
    expect(planCheckRuns(spec, { program: PROGRAM, checkerFiles: [file("cases.json", '[{"args": [{"$tuple": 1}], "expected": 3}]')], inputs: [] })).toEqual([]);
  });
});

describe("cases: judging the results", () => {
  it("passes when every case returned its expected value", () => {
    const o = judge(ADD, [evidence([ok("small", 5), ok("case 2", 0)])]);
    expect(o).toMatchObject({ passed: true, message: "all 2 cases passed" });
    expect(judge({ function: "add", cases: [{ args: [1, 1], expected: 2 }] }, [evidence([ok("case 1", 2)])]).message).toBe("all 1 case passed");
  });

  it("fails a wrong answer, saying which case, its input and both values", () => {
    const o = judge(ADD, [evidence([ok("small", 6), ok("case 2", 0)])]);
    expect(o.passed).toBe(false);
    expect(o.message).toBe('1 of 2 cases failed: case "small": wrong answer (add(2, 3): expected 5, got 6)');
    expect(o.findings).toEqual([{ where: 'case "small": wrong answer', input: "add(2, 3)", actual: "6", expected: "5", note: "(value) differs (differs by 1, more than the allowed 5.001e-9 (atol 1e-12 + rtol 1e-9 × |expected|))" }]);
  });

  it("shows keyword arguments in the input", () => {
    const o = judge({ function: "f", cases: [{ args: [1], kwargs: { k: "v" }, expected: 1 }] }, [evidence([ok("case 1", 2)])]);
    expect(o.findings![0]!.input).toBe('f(1, k="v")');
  });

  it("applies atol both ways and compares integers beyond 2^53 exactly", () => {
    const p = { function: "f", atol: 0.5, rtol: 0, cases: [{ args: [], expected: 10 }] };
    expect(judge(p, [evidence([ok("case 1", 10.5)])]).passed).toBe(true);
    expect(judge(p, [evidence([ok("case 1", 9.5)])]).passed).toBe(true);
    expect(judge(p, [evidence([ok("case 1", 10.5001)])]).passed).toBe(false);
    expect(judge(p, [evidence([ok("case 1", 9.4999)])]).passed).toBe(false);
    const big = { function: "f", cases_file: "c.json" };
    const files = [file("c.json", '[{"args": [], "expected": 9007199254740993}]')];
    expect(judge(big, [evidence('{"id": "case 1", "status": "ok", "value": 9007199254740993, "duration_ms": 1}')], {}, files).passed).toBe(true);
    expect(judge(big, [evidence('{"id": "case 1", "status": "ok", "value": 9007199254740992, "duration_ms": 1}')], {}, files).passed).toBe(false);
  });

  it("compares arrays in order unless ignore_order", () => {
    const p = { function: "f", cases: [{ args: [], expected: [1, 2, 3] }] };
    expect(judge(p, [evidence([ok("case 1", [3, 2, 1])])]).passed).toBe(false);
    expect(judge({ ...p, ignore_order: true }, [evidence([ok("case 1", [3, 2, 1])])]).passed).toBe(true);
  });

  it("reads NaN and infinities tagged, each equal only to itself", () => {
    const p = (expected: unknown) => ({ function: "f", cases: [{ args: [], expected }] });
    expect(judge(p({ $float: "nan" }), [evidence([ok("case 1", { $float: "nan" })])]).passed).toBe(true);
    expect(judge(p({ $float: "inf" }), [evidence([ok("case 1", { $float: "inf" })])]).passed).toBe(true);
    expect(judge(p({ $float: "inf" }), [evidence([ok("case 1", { $float: "-inf" })])]).passed).toBe(false);
    expect(judge(p(1), [evidence([ok("case 1", { $float: "nan" })])]).passed).toBe(false);
    expect(judge(p(1e308), [evidence([ok("case 1", { $float: "inf" })])]).passed).toBe(false);
    expect(judge(p([{ $float: "nan" }]), [evidence([ok("case 1", [{ $float: "nan" }])])]).passed).toBe(true);
    expect(judge(p({ a: { $float: "-inf" } }), [evidence([ok("case 1", { a: { $float: "-inf" } })])]).passed).toBe(true);
    // Not a tag: an object with other keys is a dict with string keys.
    expect(judge(p({ $float: "nan", x: 1 }), [evidence([ok("case 1", { $float: "nan", x: 1 })])]).passed).toBe(true);
    expect(judge(p({ $float: "nan" }), [evidence([ok("case 1", { $float: "nan", x: 1 })])]).passed).toBe(false);
    // issue 27: a $float that is not one of the three is a malformed tag: an invalid case as expected, and a
    // result the judge would never write as a returned value.
    for (const [bad, why] of [[{ $float: "zero" }, '$float is "nan", "inf" or "-inf"'], [{ $float: 1 }, "$float needs a string"]] as const) {
      expect(judge(p(bad), [evidence([ok("case 1", bad)])]).message).toBe(`invalid params: cases.0.expected: not a value of the typed notation: ${why}`);
      expect(judge(p(0), [evidence([ok("case 1", bad)])]).findings).toEqual([{ where: 'case "case 1": returned a value that is not plain data', input: "f()" }]);
    }
  });

  it("expects null as a value", () => {
    const p = { function: "f", cases: [{ args: [], expected: null }] };
    expect(judge(p, [evidence([ok("case 1", null)])]).passed).toBe(true);
    expect(judge(p, [evidence([ok("case 1", 0)])]).passed).toBe(false);
  });

  it.each([
    [{ status: "timeout" }, "timed out after 10 s", "no answer within the time limit"],
    [{ status: "crash", exit_code: 137 }, "the process died", "exit code 137, no result (os._exit, a signal, or a crash)"],
    [{ status: "unserializable", error: { type: "TypeError", message: "<object at 0x1>" } }, "returned a value that is not plain data", "<object at 0x1>"],
    [{ status: "error", error: { type: "ZeroDivisionError", message: "division by zero" } }, "raised ZeroDivisionError", "ZeroDivisionError: division by zero"],
    [{ status: "error", error: { type: "LeakedSecret42", message: "m" } }, "raised an exception", "LeakedSecret42: m"],
  ])("fails the status %j", (rec, what, actual) => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([called("c", rec)])]);
    expect(o.passed).toBe(false);
    expect(o.findings![0]).toMatchObject({ where: `case "c": ${what}`, actual });
  });

  it("fails a result too large to compare, with no value shown", () => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([{ id: "c", status: "output_limit" }])]);
    expect(o.passed).toBe(false);
    // The case's own process says how large its result was.
    expect(judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([called("c", { status: "output_limit", bytes: 600_000 })])]).findings).toEqual(o.findings);
    expect(o.findings).toEqual([{ where: 'case "c": the result is too large to compare', input: "f()" }]);
  });

  it("keeps an error's traceback as the note", () => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([called("c", { status: "error", error: { type: "KeyError", message: "'x'", traceback: "Traceback ...\nKeyError: 'x'" } })])]);
    expect(o.findings![0]).toMatchObject({ note: "Traceback ...\nKeyError: 'x'" });
    const none = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([called("c", { status: "error", error: { type: "KeyError", message: "'x'" } })])]);
    expect(none.findings![0]!.note).toBeUndefined();
  });

  it("fails a case with no result, saying how the run ended", () => {
    const early = judge(ADD, [evidence([ok("small", 5)], { exitCode: 137 })]);
    expect(early).toMatchObject({ passed: false, message: '1 of 2 cases failed: case "case 2": no result (add(-1, 1), got the case run ended early (exit code 137))' });
    const late = judge(ADD, [evidence([ok("small", 5)], {}, { timedOut: true })]);
    expect(late.findings![0]!.actual).toBe("the case run hit its overall time limit");
  });

  // issue 25: the harness writes one result per case, in the cases' order; any other id is not its line.
  it("refuses a result for a case it did not ask for, two results for one case, and results out of order", () => {
    const refused = "the harness's result for a case is malformed (result line 3: not the next case's result; the case run exited with code 0)";
    expect(judge(ADD, [evidence([ok("small", 5), ok("case 2", 0), ok("extra", 1)])]).message).toBe(refused);
    expect(judge(ADD, [evidence([ok("small", 5), ok("case 2", 0), ok("small", 5)])]).message).toBe(refused);
    const forged = judge(ADD, [evidence([ok("small", 5), ok("small", 5), ok("case 2", 0)])], { hidden: true, reveal: "verdict" });
    expect(forged).toMatchObject({ passed: false, message: "the harness's result for a case is malformed (result line 2: not the next case's result; the case run exited with code 0)" });
    expect(forged.feedback).toBe("the harness's result for a case is malformed");
    expect(judge(ADD, [evidence([ok("case 2", 0), ok("small", 5)])]).message).toMatch(/\(result line 1: not the next case's result; /);
  });

  it("fails closed on malformed results", () => {
    for (const text of ["not json", '{"id": "small", "status": "ok", "value": 5, "duration_ms": 1'])
      expect(judge(ADD, [evidence(text, { exitCode: 1 })]).message).toBe("the harness's result for a case is malformed (result line 1: not JSON; the case run exited with code 1)");
    for (const text of ["[1]", "null", "5", '"small"', '{"status": "ok", "value": 5, "duration_ms": 1}', '{"id": 5, "status": "ok", "value": 5, "duration_ms": 1}'])
      expect(judge(ADD, [evidence(text)]).message, text).toBe("the harness's result for a case is malformed (result line 1: not a case result as the harness writes it; the case run exited with code 0)");
    // Blank lines carry nothing; a line's number counts them.
    expect(judge(ADD, [evidence(`${JSON.stringify(ok("small", 5))}\n\n${JSON.stringify(ok("case 2", 0))}\n`)]).passed).toBe(true);
    expect(judge(ADD, [evidence(`${JSON.stringify(ok("small", 5))}\n\n{}\n`)]).message).toMatch(/\(result line 3: not a case result as the harness writes it; /);
  });

  it("fails closed when no results came back, saying how the run ended", () => {
    const none = { files: [] };
    expect(judge(ADD, [evidence([], { ...none, exitCode: 2 })]).message).toBe('no case results came back (the case run exited with code 2; artifact "cases.jsonl" was not returned (no artifacts were returned))');
    expect(judge(ADD, [evidence([], none, { timedOut: true, durationMs: 61000 })]).message).toMatch(/^no case results came back \(the case run hit its overall time limit after 61000 ms; /);
    expect(judge(ADD, [evidence([], none, { oomKilled: true })]).message).toMatch(/^no case results came back \(the case run ran out of memory; /);
  });

  // issue 25: the artifact message lists the files that came back, which the program names; the exit code
  // and the run's duration are the program's to choose too. A model is told only how the run ended.
  it("tells a model only how a run without results ended, never the files it left nor its exit code", () => {
    const left = { files: [file("LEAK_4242.txt", "")] };
    const hidden = { hidden: true, reveal: "verdict" } as const;
    const ended = judge(ADD, [evidence([], { ...left, exitCode: 42 })], hidden);
    expect(ended.message).toBe('no case results came back (the case run exited with code 42; artifact "cases.jsonl" was not returned (returned artifacts: "LEAK_4242.txt"))');
    expect(ended.feedback).toBe("no case results came back (the case run ended without them)");
    expect(judge(ADD, [evidence([], left, { timedOut: true, durationMs: 4242 })], hidden).feedback).toBe("no case results came back (the case run hit its overall time limit)");
    expect(judge(ADD, [evidence([], left, { oomKilled: true })], hidden).feedback).toBe("no case results came back (the case run ran out of memory)");
  });

  it("fails closed without any sandbox evidence", () => {
    const o = judge(ADD, [], { hidden: true });
    expect(o).toMatchObject({ passed: false, message: "the cases were not run (no sandbox evidence)", feedback: "the cases were not run" });
  });

  it("fails on an import error, showing a hidden check only the built-in exception type", () => {
    const rec = { import_error: { type: "ModuleNotFoundError", message: "No module named 'numpyy'", traceback: "tb" } };
    const o = judge(ADD, [evidence([rec])], { hidden: true, reveal: "verdict" });
    expect(o).toMatchObject({ passed: false, message: "the program could not be imported as solution.py with add: ModuleNotFoundError: No module named 'numpyy'" });
    expect(o.feedback).toBe("the program could not be imported as solution.py with add: ModuleNotFoundError\n  - import");
    expect(o.findings).toEqual([{ where: "import", actual: "ModuleNotFoundError: No module named 'numpyy'", note: "tb" }]);
    const custom = judge(ADD, [evidence([{ import_error: { type: "Secret_4242", message: "", traceback: "" } }])], { hidden: true, reveal: "verdict" });
    expect(custom.passed).toBe(false);
    expect(custom.feedback.split("\n")[0]).toBe("the program could not be imported as solution.py with add: an exception");
  });

  // issue 25: the harness writes an import error alone, in call mode, with its three fields.
  it("refuses an import error the harness would not write", () => {
    const error = { import_error: { type: "ImportError", message: "m", traceback: "tb" } };
    const refused = (why: string) => `the harness's result for a case is malformed (result line 1: ${why}; the case run exited with code 0)`;
    for (const bad of [{ import_error: null }, { import_error: {} }, { import_error: { type: "ImportError", message: "m" } }, { ...error, id: "small" }, { import_error: { ...error.import_error, type: 5 } }])
      expect(judge(ADD, [evidence([bad])]).message, JSON.stringify(bad)).toBe(refused("not an import error as the harness writes it"));
    expect(judge(ADD, [evidence([error, ok("small", 5)])]).message).toBe(refused("an import error where the harness writes none"));
    expect(judge(ADD, [evidence([ok("small", 5), error])]).message).toBe(refused("an import error where the harness writes none").replace("line 1", "line 2"));
    expect(judge({ mode: "stdin", cases: [{ expected_stdout: "x" }] }, [evidence([error])]).message).toBe(refused("an import error where the harness writes none"));
  });

  it("counts every failure, lists three in the message and five in the public one", () => {
    const cs = Array.from({ length: 7 }, (_, i) => ({ id: `c${i}`, args: [i], expected: i }));
    // No case held out (a hidden check's default holds out a quarter: "cases: held-out cases" below).
    const o = judge({ function: "f", cases: cs, held_out_share: 0 }, [evidence(cs.map((c) => ok(c.id, -1)))], { hidden: true, reveal: "verdict" });
    expect(o.passed).toBe(false);
    expect(o.message).toBe('7 of 7 cases failed: case "c0": wrong answer (f(0): expected 0, got -1); case "c1": wrong answer (f(1): expected 1, got -1); case "c2": wrong answer (f(2): expected 2, got -1)');
    expect(o.feedback.split("\n")[0]).toBe('7 of 7 cases failed: case "c0": wrong answer; case "c1": wrong answer; case "c2": wrong answer; case "c3": wrong answer; case "c4": wrong answer');
    expect(o.findings).toHaveLength(7);
    expect(judge({ function: "f", cases: cs, max_findings: 2 }, [evidence(cs.map((c) => ok(c.id, -1)))]).findings).toHaveLength(2);
    expect(judge({ function: "f", cases: cs.slice(0, 1) }, [evidence([ok("c0", -1)])]).message).toMatch(/^1 of 1 case failed: /);
  });

  it("stdin mode: compares stdout by stdout_mode, and fails a non-zero exit or clipped output", () => {
    const p = { mode: "stdin", cases: [{ id: "s", stdin: "1 2", expected_stdout: "3\n" }] };
    const out = (rec: Record<string, unknown>, params: Record<string, unknown> = p) => judge(params, [evidence([printed("s", rec)])]);
    expect(out({ stdout: "3  \n\n" }).passed).toBe(true);
    expect(out({ stdout: "3  \n\n" }, { ...p, stdout_mode: "exact" }).passed).toBe(false);
    const wrong = out({ stdout: "4\n" });
    expect(wrong).toMatchObject({ passed: false, message: '1 of 1 case failed: case "s": wrong output (1 line differs (1 line produced)) (stdin "1 2": expected "3\\n", got "4\\n")' });
    expect(wrong.findings![0]!.note).toBe('line 1: expected "3", found "4"');
    const missing = out({ stdout: "" });
    expect(missing.findings![0]!.note).toBe('line 1: expected "3", found (no such line)');
    const extra = judge({ mode: "stdin", cases: [{ id: "s", expected_stdout: "" }] }, [evidence([printed("s", { stdout: "x" })])]);
    expect(extra.findings![0]!.note).toBe('line 1: expected (nothing), found "x"');
    const exit = out({ stdout: "3\n", exit_code: 2, stderr_tail: "Traceback\nValueError: bad\n" });
    // issue 25: the exit code is what the program produced, not where: a model sees it from reveal "input" up.
    expect(exit.findings![0]).toMatchObject({ where: 'case "s": exited with a non-zero code', actual: "exit code 2, stderr: ValueError: bad" });
    expect(out({ stdout: "3\n", exit_code: 1 }).findings![0]).toMatchObject({ actual: "exit code 1, stderr is empty" });
    expect(out({ stdout: "3\n", stdout_clipped: true }).findings).toEqual([{ where: 'case "s": printed more than 1 MiB', input: 'stdin "1 2"' }]);
    expect(out({ stdout: "" }).passed).toBe(false);
    expect(out({ status: "timeout", stdout: "3\n", exit_code: 137 }).findings![0]).toMatchObject({ where: 'case "s": timed out after 10 s' });
    expect(judge(p, [evidence([{ id: "s", status: "output_limit" }])]).findings![0]!.where).toBe('case "s": the result is too large to compare');
    const argv = judge({ mode: "stdin", cases: [{ id: "s", argv: ["-n", "2"], expected_stdout: "y" }] }, [evidence([printed("s", { stdout: "x" })])]);
    expect(argv.findings![0]!.input).toBe('stdin "", argv ["-n","2"]');
  });

  it("fails closed on an invalid or missing cases file", () => {
    const p = { function: "f", cases_file: "cases.json" };
    expect(judge(p, [evidence([])])).toMatchObject({ passed: false, message: 'checker file "cases.json" is not among the goal\'s checker_files' });
    expect(judge(p, [evidence([])], {}, [file("cases.json", "{")]).message).toMatch(/^checker file "cases.json" is not valid JSON: /);
    expect(judge(p, [evidence([])], {}, [file("cases.json", "[]")]).message).toMatch(/^the cases are invalid at \(root\): /);
    expect(judge(p, [evidence([])], {}, [file("cases.json", '[{"args": "x", "expected": 1}]')]).message).toMatch(/^the cases are invalid at 0\.args: /);
    expect(judge(p, [evidence([])], {}, [file("cases.json", '[{"args": []}]')]).message).toBe("the cases are invalid at 0.expected: required in call mode (null is a value)");
  });
});

// issue 27: cases.jsonl is the judge's (written in its own directory, under its own uid), never an artifact
// of the program's; the judge's exit code is how the case run ended.
describe("cases: the judge's results", () => {
  const program = (records: unknown[]) => [file("cases.jsonl", records.map((r) => JSON.stringify(r)).join("\n"))];

  it("reads the results from the judge's files and ignores the program's own cases.jsonl", () => {
    const forged = program([ok("small", 5), ok("case 2", 0)]);
    const o = judge(ADD, [evidence([ok("small", 6), ok("case 2", 0)], {}, { artifacts: forged })]);
    expect(o).toMatchObject({ passed: false, message: '1 of 2 cases failed: case "small": wrong answer (add(2, 3): expected 5, got 6)' });
    const none = judge(ADD, [evidence([], { files: [] }, { artifacts: forged })]);
    expect(none.message).toBe('no case results came back (the case run exited with code 0; artifact "cases.jsonl" was not returned (no artifacts were returned))');
  });

  it("says how the run ended by the judge's exit code, not the program's side", () => {
    const o = judge(ADD, [evidence([ok("small", 5)], { exitCode: 3 }, { exitCode: 0 })]);
    expect(o.findings![0]).toMatchObject({ where: 'case "case 2": no result', actual: "the case run ended early (exit code 3)" });
    expect(judge(ADD, [evidence("not json", { exitCode: 0 }, { exitCode: 1 })]).message).toBe("the harness's result for a case is malformed (result line 1: not JSON; the case run exited with code 0)");
  });

  it("names the judge's collection errors when its file did not come back", () => {
    const o = judge(ADD, [evidence([], { files: [], errors: ["cases.jsonl: larger than 8 MiB"] })]);
    expect(o.message).toMatch(/^no case results came back \(the case run exited with code 0; artifact "cases.jsonl" was not returned/);
    expect(o.message).toContain("larger than 8 MiB");
  });

  it("fails closed when the run brought no judge outcome back", () => {
    const { judge: _, ...bare } = evidence([ok("small", 5), ok("case 2", 0)], {}, { artifacts: program([ok("small", 5), ok("case 2", 0)]) });
    const o = judge(ADD, [bare], { hidden: true, reveal: "verdict" });
    expect(o).toMatchObject({ passed: false, message: "the cases were not run (no judge outcome came back)", feedback: "the cases were not run" });
  });
});

// issue 27: values are compared as Python's == would, but a tuple is not a list and a set is not a sorted
// list (what a client's test suite would also reject), unless sequence_types is any.
describe("cases: exact types", () => {
  const one = (expected: unknown, value: unknown, over: Record<string, unknown> = {}) =>
    judge({ function: "f", cases: [{ id: "c", args: [], expected }], ...over }, [evidence([ok("c", value)])]);

  it("fails a tuple where a list is expected, and says so before any value", () => {
    const o = one([1, 2], { $tuple: [1, 2] });
    expect(o.passed).toBe(false);
    expect(o.findings).toEqual([{ where: 'case "c": wrong answer', input: "f()", actual: "(1, 2)", expected: "[1, 2]", note: "(value) is a tuple, not the expected type (expected a list)" }]);
    expect(o.message).toBe('1 of 1 case failed: case "c": wrong answer (f(): expected [1, 2], got (1, 2))');
    // The other way round too, and a different length is still a type difference first.
    expect(one({ $tuple: [1, 2] }, [1, 2]).findings![0]!.note).toBe("(value) is a list, not the expected type (expected a tuple)");
    expect(one([1, 2, 3], { $tuple: [1, 2] }).findings![0]!.note).toBe("(value) is a tuple, not the expected type (expected a list)");
  });

  it("fails a set where a sorted list is expected", () => {
    const o = one([1, 2, 3], { $set: [3, 1, 2] });
    expect(o.findings![0]).toMatchObject({ actual: "{3, 1, 2}", note: "(value) is a set, not the expected type (expected a list)" });
    // ignore_order loosens the order of a list, never its type.
    expect(one([1, 2, 3], { $set: [3, 1, 2] }, { ignore_order: true }).passed).toBe(false);
  });

  it("sequence_types any compares tuples, sets and lists as lists", () => {
    const any = { sequence_types: "any" };
    expect(one([1, 2], { $tuple: [1, 2] }, any).passed).toBe(true);
    expect(one([1, 2, 3], { $set: [3, 1, 2] }, any).passed).toBe(true);
    expect(one({ $tuple: [1, 2] }, [1, 2], any).passed).toBe(true);
    expect(one({ a: [[1, 2]] }, { $dict: [["a", { $tuple: [{ $tuple: [1, 2] }] }]] }, any).passed).toBe(true);
    // Still the values: a set's members in their sorted order.
    expect(one([3, 2, 1], { $set: [1, 2, 3] }, any).passed).toBe(false);
    expect(one([1, 2], { $tuple: [1, 3] }, any).passed).toBe(false);
    // A dict is not a sequence: it stays a dict.
    expect(one([["a", 1]], { $dict: [["a", 1]] }, any).passed).toBe(false);
  });

  it("points into nested values without the notation's wrappers", () => {
    expect(one({ a: [1, 2] }, { $dict: [["a", { $tuple: [1, 2] }]] }).findings![0]!.note).toBe("/a is a tuple, not the expected type (expected a list)");
    expect(one({ a: { $tuple: [1, 2] } }, { $dict: [["a", { $tuple: [1, 3] }]] }).findings![0]!.note).toMatch(/^\/a\/1 differs \(differs by 1, /);
    expect(one([[1], [2]], [{ $tuple: [1] }, [2]]).findings![0]!.note).toBe("/0 is a tuple, not the expected type (expected a list)");
  });

  it("equals what Python's == equals: frozenset and set, bytes and bytearray, int and float, NaN and NaN, dict keys of any type in any order", () => {
    expect(one({ $set: [1, 2] }, { $frozenset: [2, 1] }).passed).toBe(true);
    expect(one({ $bytes: "AAE=" }, { $bytearray: "AAE=" }).passed).toBe(true);
    expect(one({ $bytes: "AAE=" }, { $bytes: "AAI=" }).passed).toBe(false);
    expect(one(2, 2.0000000001).passed).toBe(true);
    expect(one({ $float: "nan" }, { $float: "nan" }).passed).toBe(true);
    expect(one({ $dict: [[1, "a"], [2, "b"]] }, { $dict: [[2, "b"], [1, "a"]] }).passed).toBe(true);
    expect(one({ $dict: [[1, "a"], [2, "b"]] }, { $dict: [[2, "b"], [1, "x"]] }).passed).toBe(false);
    // A string key is not an integer key.
    expect(one({ $dict: [[1, "a"]] }, { $dict: [["1", "a"]] }).passed).toBe(false);
    // A plain object and a $dict of string keys are the same dict.
    expect(one({ a: 1, b: 2 }, { $dict: [["b", 2], ["a", 1]] }).passed).toBe(true);
  });

  it("shows arguments, expected and returned values as Python prints them", () => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [{ $tuple: [1] }, { $set: [] }, { $dict: [[1, 2]] }, null, true], kwargs: { k: { $frozenset: [1] } }, expected: { $tuple: [] } }] }, [evidence([ok("c", { $set: [] })])]);
    expect(o.findings![0]).toMatchObject({ input: "f((1,), set(), {1: 2}, None, True, k=frozenset({1}))", expected: "()", actual: "set()" });
  });

  it("fails a returned value whose tag is malformed (the judge never writes one) as not plain data", () => {
    for (const bad of [{ $tuple: 5 }, { $dict: [[1]] }, { $bytes: 1 }]) expect(one(1, bad).findings, JSON.stringify(bad)).toEqual([{ where: 'case "c": returned a value that is not plain data', input: "f()" }]);
  });
});

// issue 27: a held-out case's failure reaches a model only as a count, so that an attempt cannot be fitted to
// every case it was told about.
describe("cases: held-out cases", () => {
  const four = Array.from({ length: 4 }, (_, i) => ({ id: `c${i}`, args: [i], expected: i }));
  const answers = (wrong: string[]) => [evidence(four.map((c) => ok(c.id, wrong.includes(c.id) ? -1 : c.expected)))];
  const hidden = { hidden: true, reveal: "full" } as const;

  it("chooses the held-out cases by their ids: the same on every run, whatever their order", () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `c${i}` }));
    expect([...heldOut(ids(8), 0.25)].sort()).toEqual(["c2", "c4"]);
    expect([...heldOut(ids(8).reverse(), 0.25)].sort()).toEqual(["c2", "c4"]);
    expect([...heldOut(ids(4), 0.25)]).toEqual(["c2"]);
    expect(heldOut(ids(8), 0).size).toBe(0);
    // The share of all the cases, rounded: 7 × 0.25 = 1.75 -> 2, 6 × 0.25 = 1.5 -> 2, 5 × 0.25 = 1.25 -> 1.
    expect(heldOut(ids(7), 0.25).size).toBe(2);
    expect(heldOut(ids(6), 0.25).size).toBe(2);
    expect(heldOut(ids(5), 0.25).size).toBe(1);
    expect(heldOut(ids(3), 0.9).size).toBe(3);
  });

  it("holds out every case marked held_out, and counts them in the share", () => {
    expect([...heldOut([{ id: "a", held_out: true }, { id: "b", held_out: true }, { id: "c" }, { id: "d" }], 0.25)].sort()).toEqual(["a", "b"]);
    expect([...heldOut([{ id: "a", held_out: true }, { id: "c" }, { id: "d" }], 0)]).toEqual(["a"]);
    const marked = [{ id: "a", held_out: true }, ...["c", "d", "e", "f", "g"].map((id) => ({ id }))];
    expect([...heldOut(marked, 0.5)].sort()).toEqual(["a", "d", "e"]);
    expect([...heldOut(marked.map((c) => ({ ...c, held_out: false })), 0.5)]).not.toContain("a");
  });

  it("a visible check: the held-out failure is a count in every message and no finding", () => {
    const cs = four.map((c) => (c.id === "c1" ? { ...c, held_out: true } : c));
    const o = judge({ function: "f", cases: cs }, [evidence(cs.map((c) => ok(c.id, c.id === "c1" ? -1 : c.expected)))]);
    expect(o).toMatchObject({ passed: false, message: "1 of 4 cases failed: 1 held-out case failed", findings: [] });
    expect(o.feedback).toBe("1 of 4 cases failed: 1 held-out case failed");
    const both = judge({ function: "f", cases: cs }, [evidence(cs.map((c) => ok(c.id, -1)))]);
    expect(both.message).toBe('4 of 4 cases failed: case "c0": wrong answer (f(0): expected 0, got -1); case "c2": wrong answer (f(2): expected 2, got -1); case "c3": wrong answer (f(3): expected 3, got -1); 1 held-out case failed');
    expect(both.findings!.map((f) => f.where)).toEqual(['case "c0": wrong answer', 'case "c2": wrong answer', 'case "c3": wrong answer']);
    expect(JSON.stringify([both.message, both.feedback, both.findings])).not.toMatch(/c1|f\(1\)/);
  });

  it("a hidden check: the client's message names the held-out case, a model's feedback only counts it", () => {
    // A hidden check of 4 cases holds out a quarter by default: c2.
    const o = judge({ function: "f", cases: four }, answers(["c0", "c2"]), hidden);
    expect(o.passed).toBe(false);
    expect(o.message).toBe('2 of 4 cases failed: case "c0": wrong answer (f(0): expected 0, got -1); held out: case "c2": wrong answer (f(2): expected 2, got -1)');
    expect(o.feedback).toBe('2 of 4 cases failed: case "c0": wrong answer; 1 held-out case failed\n  - case "c0": wrong answer | input: f(0) | got: -1 | expected: 0 | (value) differs (differs by 1, more than the allowed 1e-12 (atol 1e-12 + rtol 1e-9 × |expected|))');
    expect(o.findings!.map((f) => f.where)).toEqual(['case "c0": wrong answer']);
    expect(o.feedback).not.toMatch(/c2|f\(2\)/);
    const two = judge({ function: "f", cases: four }, answers(["c2"]), hidden);
    expect(two).toMatchObject({ message: '1 of 4 cases failed: held out: case "c2": wrong answer (f(2): expected 2, got -1)', feedback: "1 of 4 cases failed: 1 held-out case failed", findings: [] });
  });

  it("says how many of the passed cases were held out", () => {
    expect(judge({ function: "f", cases: four }, answers([]), hidden)).toMatchObject({ passed: true, message: "all 4 cases passed (1 of them held out)", feedback: "all 4 cases passed (1 of them held out)" });
    expect(judge({ function: "f", cases: four }, answers([])).message).toBe("all 4 cases passed");
    expect(judge({ function: "f", cases: four, held_out_share: 0.5 }, answers([])).message).toBe("all 4 cases passed (2 of them held out)");
  });

  it("holds none out by default for a visible check, or a hidden one of fewer than 4 cases", () => {
    expect(judge({ function: "f", cases: four }, answers(["c2"])).findings!.map((f) => f.where)).toEqual(['case "c2": wrong answer']);
    const three = four.slice(0, 3);
    const o = judge({ function: "f", cases: three }, [evidence(three.map((c) => ok(c.id, -1)))], hidden);
    expect(o.findings).toHaveLength(3);
    expect(o.message).not.toContain("held out");
    expect(judge({ function: "f", cases: four, held_out_share: 0 }, answers(["c2"]), hidden).findings).toHaveLength(1);
  });

  it("max_findings bounds the findings shown, never the held-out count", () => {
    const eight = Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, args: [i], expected: i, held_out: i >= 6 }));
    const o = judge({ function: "f", cases: eight, max_findings: 2 }, [evidence(eight.map((c) => ok(c.id, -1)))]);
    expect(o.findings!.map((f) => f.where)).toEqual(['case "c0": wrong answer', 'case "c1": wrong answer']);
    expect(o.message).toMatch(/^8 of 8 cases failed: .*; 2 held-out cases failed$/);
  });
});

describe("cases: params", () => {
  const issues = (params: Record<string, unknown>) => {
    const v = validateCheckSpec(check("cases", params));
    return v.ok ? [] : v.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it("needs exactly one source of cases and a function in call mode", () => {
    expect(issues(ADD)).toEqual([]);
    expect(issues({ function: "add" })).toEqual(["params.cases: give exactly one of cases or cases_file"]);
    expect(issues({ ...ADD, cases_file: "c.json" })).toEqual(["params.cases: give exactly one of cases or cases_file"]);
    expect(issues({ cases: ADD.cases })).toEqual(["params.function: required in call mode"]);
    expect(issues({ mode: "stdin", cases: [{ expected_stdout: "" }] })).toEqual([]);
  });

  it("checks what each mode needs of each case, and unique ids", () => {
    expect(issues({ function: "f", cases: [{ args: [] }] })).toEqual(["params.cases.0.expected: required in call mode (null is a value)"]);
    expect(issues({ function: "f", cases: [{ expected: 1, stdin: "" }] })).toEqual(["params.cases.0: stdin, argv and expected_stdout belong to stdin mode"]);
    expect(issues({ function: "f", cases: [{ expected: 1, argv: [] }] })).toEqual(["params.cases.0: stdin, argv and expected_stdout belong to stdin mode"]);
    expect(issues({ function: "f", cases: [{ expected: 1, expected_stdout: "" }] })).toEqual(["params.cases.0: stdin, argv and expected_stdout belong to stdin mode"]);
    expect(issues({ mode: "stdin", cases: [{ stdin: "" }] })).toEqual(["params.cases.0.expected_stdout: required in stdin mode"]);
    expect(issues({ mode: "stdin", cases: [{ expected_stdout: "", args: [] }] })).toEqual(["params.cases.0: args, kwargs and expected belong to call mode"]);
    expect(issues({ mode: "stdin", cases: [{ expected_stdout: "", kwargs: {} }] })).toEqual(["params.cases.0: args, kwargs and expected belong to call mode"]);
    expect(issues({ mode: "stdin", cases: [{ expected_stdout: "", expected: null }] })).toEqual(["params.cases.0: args, kwargs and expected belong to call mode"]);
    expect(issues({ function: "f", cases: [{ id: "a", expected: 1 }, { id: "a", expected: 2 }] })).toEqual(['params.cases.1.id: duplicate case id "a"']);
    expect(issues({ function: "f", cases: [{ id: "case 2", expected: 1 }, { expected: 2 }] })).toEqual(['params.cases.1.id: duplicate case id "case 2"']);
  });

  // issue 27: arguments and expected values are in the typed notation; a malformed tag is the client's
  // mistake, refused at the request (a 400 with its path), never a case that fails every program.
  it("refuses a malformed tag in args, kwargs or expected, at its case and field", () => {
    const typed = (c: Record<string, unknown>) => issues({ function: "f", cases: [{ expected: null }, { expected: 1, ...c }] });
    expect(typed({ args: [1, { $tuple: 5 }] })).toEqual(["params.cases.1.args: not a value of the typed notation: $tuple needs a list"]);
    expect(typed({ kwargs: { k: { $dict: [[1]] } } })).toEqual(["params.cases.1.kwargs: not a value of the typed notation: $dict entry needs a list of 2"]);
    expect(typed({ expected: { $set: "abc" } })).toEqual(["params.cases.1.expected: not a value of the typed notation: $set needs a list"]);
    expect(typed({ expected: [{ a: { $float: "zero" } }] })).toEqual(['params.cases.1.expected: not a value of the typed notation: $float is "nan", "inf" or "-inf"']);
    expect(typed({ args: [{ $tuple: [1] }, { $bytes: "AAE=" }], kwargs: { k: { $dict: [[1, 2]] } }, expected: { $frozenset: [] } })).toEqual([]);
    // One key that is not a tag, or a tag beside other keys, is a dict.
    expect(typed({ args: [{ $tuple: 5, x: 1 }, { $nothing: 1 }] })).toEqual([]);
    // The same refusal for a checker file's cases, when the check runs.
    const files = [file("c.json", '[{"args": [{"$bytes": 7}], "expected": 1}]')];
    expect(judge({ function: "f", cases_file: "c.json" }, [evidence([])], {}, files).message).toBe("the cases are invalid at 0.args: not a value of the typed notation: $bytes needs a string");
  });

  it("bounds sequence_types and held_out_share", () => {
    expect(issues({ ...ADD, sequence_types: "any", held_out_share: 0.9 })).toEqual([]);
    expect(issues({ ...ADD, sequence_types: "exact", held_out_share: 0 })).toEqual([]);
    expect(issues({ ...ADD, sequence_types: "loose" })).toHaveLength(1);
    expect(issues({ ...ADD, held_out_share: 0.91 })).toHaveLength(1);
    expect(issues({ ...ADD, held_out_share: -0.1 })).toHaveLength(1);
    expect(issues({ function: "f", cases: [{ expected: 1, held_out: "yes" }] })).toHaveLength(1);
  });

  it("bounds names and sizes", () => {
    expect(issues({ ...ADD, function: "Solver.solve" })).toEqual([]);
    expect(issues({ ...ADD, function: "a.b.c" })).toHaveLength(1);
    expect(issues({ ...ADD, module: "my-mod" })).toHaveLength(1);
    expect(issues({ ...ADD, timeout_seconds: 0.05 })).toHaveLength(1);
    expect(issues({ ...ADD, timeout_seconds: 61 })).toHaveLength(1);
    expect(issues({ function: "f", cases: [] })).toHaveLength(1);
    expect(issues({ function: "f", cases: [{ expected: 1, kwargs: { "not-ident": 1 } }] })).toHaveLength(1);
  });

  // issue 25: a module the harness's interpreter already holds is that module: importlib hands it back and
  // the program never runs (module "json", function "loads" would pass on json.loads).
  it("refuses a module name that would be a standard-library, pre-imported or start-up module", () => {
    for (const m of ["json", "os", "sys", "importlib", "numpy", "pandas", "dateutil", "pytz", "six", "__main__", "builtins", "sitecustomize", "usercustomize", "tomllib"]) {
      expect(issues({ ...ADD, module: m }), m).toEqual([
        `params.module: ${JSON.stringify(m)} is a module of Python's standard library, numpy, pandas or what they import, or one Python runs at start-up: the harness would import that module instead of the program; pick another name, e.g. "solution"`,
      ]);
      expect(issues({ mode: "stdin", module: m, cases: [{ expected_stdout: "" }] }), m).toHaveLength(1);
    }
    for (const m of ["solution", "JSON", "numpy_solution", "my_os", "prog"]) expect(issues({ ...ADD, module: m }), m).toEqual([]);
  });

  // issue 27: the cases server imports loopsmith_wire before the program: a program by that name would never
  // be imported, and the cases would call the wire's own functions.
  it("refuses the harness's own module name", () => {
    const imported = [...CASES_SERVER_PY.matchAll(/^import (\w+) as \w+/gm)].map((m) => m[1]);
    expect(imported).toEqual(["loopsmith_wire"]);
    expect(issues({ ...ADD, module: "loopsmith_wire" })).toEqual(['params.module: "loopsmith_wire" is the harness\'s own module: the harness would import it instead of the program; pick another name, e.g. "solution"']);
    expect(issues({ ...ADD, module: "loopsmith_wire2" })).toEqual([]);
  });

  // issue 27: the program's process is the cases server, which imports the wire (and what it imports) first.
  it("the refused names hold the program's process's own imports and the start-up modules", () => {
    const imports = [CASES_SERVER_PY, BRIDGE_WIRE_PY].flatMap((py) => [...py.matchAll(/^\s*import ([\w, ]+)$/gm)].flatMap((m) => m[1]!.split(",").map((n) => n.trim().split(" ")[0]!)));
    expect(imports).toEqual(expect.arrayContaining(["importlib", "json", "os", "select", "signal", "subprocess", "sys", "traceback", "resource", "base64", "datetime", "decimal", "fractions", "math"]));
    for (const name of [...imports, ...STARTUP_MODULES, "numpy", "pandas"]) expect(CASES_MODULE_SHADOWS.has(name), name).toBe(true);
    expect(CASES_MODULE_SHADOWS.size).toBe(316);
  });
});

describe("safeExceptionName", () => {
  it("names Python's own exceptions, by their last dotted part, and nothing else", () => {
    expect(safeExceptionName("ValueError")).toBe("ValueError");
    expect(safeExceptionName("builtins.KeyError")).toBe("KeyError");
    expect(safeExceptionName("Failed")).toBe("Failed");
    expect(safeExceptionName("ZeroDivisionError")).toBe("ZeroDivisionError");
    expect(safeExceptionName("ArithmeticError")).toBe("ArithmeticError");
    expect(safeExceptionName("the_answer_is_42")).toBe("an exception");
    expect(safeExceptionName("ValueError.x")).toBe("an exception");
    expect(safeExceptionName("")).toBe("an exception");
    expect(safeExceptionName(undefined)).toBe("an exception");
  });
});

// issue 18: what the first mutation run of checks-run let through.
describe("cases: the edges mutation testing found", () => {
  const one = (expected: unknown, value: unknown, over: Record<string, unknown> = {}) =>
    judge({ function: "f", cases: [{ id: "c", expected }], ...over }, [evidence([ok("c", value)])]);

  it("takes mode call when it is named, and a case without args calls with none", () => {
    expect(validateCheckSpec(check("cases", { ...ADD, mode: "call" })).ok).toBe(true);
    expect(validateCheckSpec(check("cases", { ...ADD, mode: "file" })).ok).toBe(false);
    const [req] = planCheckRuns(check("cases", { mode: "call", function: "f", cases: [{ id: "c", expected: 1 }] }), { program: PROGRAM, checkerFiles: [], inputs: [] });
    expect((specOf(req!) as { cases: unknown[] }).cases).toEqual([{ id: "c", args: [], kwargs: {} }]);
    expect(one(1, 2).findings![0]!.input).toBe("f()");
  });

  it("untags NaN and infinities before comparing, so the difference says what was returned", () => {
    expect(one(1, { $float: "nan" }).findings![0]!.note).toMatch(/^\(value\) differs \(differs by NaN, /);
    expect(one(1e308, { $float: "inf" }).findings![0]!.note).toMatch(/^\(value\) differs \(differs by Infinity, /);
    expect(one(-1e308, { $float: "-inf" }).findings![0]!.note).toMatch(/^\(value\) differs \(differs by Infinity, /);
    // Only a one-key object whose key is $float and whose value is one of the three strings is a tag.
    expect(one({ x: "nan" }, { $float: "nan" }).passed).toBe(false);
    expect(one({ $float: ["nan"] }, { $float: "nan" }).passed).toBe(false);
    expect(one({ $float: "nan", x: 1 }, { $float: "nan" }).passed).toBe(false);
  });

  it("a passing check tells a model the same count as the client", () => {
    const o = judge({ function: "f", cases: [{ args: [], expected: 1 }] }, [evidence([ok("case 1", 1)])], { hidden: true, reveal: "verdict" });
    expect(o).toMatchObject({ passed: true, message: "all 1 case passed", feedback: "all 1 case passed" });
    expect(judge(ADD, [evidence([ok("small", 5), ok("case 2", 0)])], { hidden: true }).feedback).toBe("all 2 cases passed");
  });

  it("a finding without a produced value adds no 'got' to the message", () => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([{ id: "c", status: "output_limit" }])]);
    expect(o.message).toBe('1 of 1 case failed: case "c": the result is too large to compare (f())');
  });

  it("an import error without a traceback has an empty note", () => {
    expect(judge(ADD, [evidence([{ import_error: { type: "ImportError", message: "m", traceback: "" } }])]).findings).toEqual([{ where: "import", actual: "ImportError: m", note: "" }]);
  });

  it("a wrong answer's note lists each difference, with or without a detail", () => {
    expect(one({ a: 1, b: 2 }, { a: 2, b: 3 }).findings![0]!.note).toMatch(/^\/a differs \(differs by 1, .*\); \/b differs \(differs by 1, /);
    expect(one({ a: 1 }, {}).findings![0]!.note).toBe("(value) lacks an expected key");
  });

  it("stdin mode: the last non-empty stderr line, case-sensitive output, an empty stdout", () => {
    const p = { mode: "stdin", cases: [{ id: "s", stdin: "", expected_stdout: "ABC\n" }] };
    const out = (rec: Record<string, unknown>, params: Record<string, unknown> = p) => judge(params, [evidence([printed("s", rec)])]);
    expect(out({ stdout: "x", exit_code: 1, stderr_tail: "Traceback\n  File \"prog.py\", line 1\nValueError: bad\n\n" }).findings![0]!.actual).toBe("exit code 1, stderr: ValueError: bad");
    expect(out({ stdout: "x", exit_code: 1, stderr_tail: "\n\n" }).findings![0]!.actual).toBe("exit code 1, stderr: ");
    expect(out({ stdout: "abc\n" }).passed).toBe(false);
    expect(out({ stdout: "ABC\n" }).passed).toBe(true);
    const empty = { mode: "stdin", cases: [{ id: "s", expected_stdout: "" }] };
    expect(out({}, empty).passed).toBe(true);
    expect(out({}).findings![0]).toMatchObject({ actual: '""', expected: '"ABC\\n"' });
    const unordered = out({ stdout: "x\n" }, { ...p, stdout_mode: "unordered_lines" });
    expect(unordered.findings![0]!.note).toBe('an expected line: expected "ABC", found (nothing)');
  });

  it("the catalogue: its example is a correct one for add, and a hidden check shows a model only the public params", () => {
    const entry = listChecks().find((c) => c.id === "cases")!;
    expect(entry.runsCode).toBe(true);
    expect(validateCheckSpec(check("cases", entry.example)).ok).toBe(true);
    const example = entry.example as { function: string; cases: { args: number[]; expected: number }[] };
    expect(example.function).toBe("add");
    expect(example.cases.length).toBeGreaterThan(1);
    for (const c of example.cases) {
      expect(c.args).toHaveLength(2);
      expect(c.expected).toBe(c.args[0]! + c.args[1]!);
    }
    const shown = publicCheck({ ...check("cases", { ...ADD, cases: [{ id: "secret", args: [1], expected: 42 }] }), hidden: true });
    expect(Object.keys(shown.params).sort()).toEqual(["atol", "function", "ignore_order", "mode", "module", "repeat", "rerun_failed", "rtol", "sequence_types", "stdout_mode", "timeout_seconds"]);
    expect(JSON.stringify(shown)).not.toContain("42");
  });
});

// issue 25: cases.jsonl is written inside the container the program runs in, where (in call mode) the
// program holds every case's input in its own memory and can write any line. Only lines of exactly the
// harness's shapes count; the rest fail the check with one fixed message that quotes nothing of them.
describe("cases: the harness's result lines, exactly", () => {
  const SECRET = "LSCAN" + "ARY-4242-hidden-input";
  const hidden = { hidden: true, reveal: "verdict" } as const;
  const CALL = { function: "f", cases: [{ id: "c", args: [SECRET], expected: 1 }] };
  const STDIN = { mode: "stdin", cases: [{ id: "c", stdin: SECRET, expected_stdout: "1\n" }] };

  const expectRefused = (o: ReturnType<typeof judge>, what: string) => {
    expect(o.passed, what).toBe(false);
    expect(o.feedback, what).toBe(MALFORMED_RESULTS);
    expect(o.findings, what).toEqual([]);
    expect(o.message, what).toMatch(/^the harness's result for a case is malformed \(result line 1: not (a case result|an import error) as the harness writes it; the case run exited with code 0\)$/);
    expect(JSON.stringify([o.message, o.feedback, o.findings]), what).not.toContain("4242");
  };

  it("refuses a string exit code carrying a hidden input (the attack), in both modes", () => {
    expectRefused(judge(CALL, [evidence([called("c", { status: "crash", exit_code: `9) ${SECRET} (` })])], hidden), "call");
    expectRefused(judge(STDIN, [evidence([printed("c", { exit_code: `2 ${SECRET}` })])], hidden), "stdin");
  });

  const call: [string, Record<string, unknown>][] = [
    ["an unknown key", { status: "ok", value: 1, leak: SECRET }],
    ["an unknown key in the error", { status: "error", error: { type: "ValueError", message: "m", traceback: "t", leak: SECRET } }],
    ["an unknown status", { status: `passed ${SECRET}` }],
    ["no status", { value: 1 }],
    ["no value", { status: "ok" }],
    ["a string duration", { status: "timeout", duration_ms: SECRET }],
    ["a negative duration", { status: "timeout", duration_ms: -1 }],
    ["a fractional duration", { status: "timeout", duration_ms: 1.5 }],
    ["a duration beyond an hour", { status: "timeout", duration_ms: 3_600_001 }],
    ["a crash without its exit code", { status: "crash" }],
    ["an exit code above 255", { status: "crash", exit_code: 4242 }],
    ["a negative exit code", { status: "crash", exit_code: -9 }],
    ["a huge exit code", { status: "crash", exit_code: 1e300 }],
    ["an error without its error", { status: "error" }],
    ["an error type that is not a string", { status: "error", error: { type: ["ValueError", SECRET], message: "m" } }],
    ["an error type of 401 characters", { status: "error", error: { type: `E${"x".repeat(400)}`, message: "m" } }],
    ["an error message of 2,101 characters", { status: "error", error: { type: "ValueError", message: "x".repeat(2101) } }],
    ["a traceback of 4,101 characters", { status: "error", error: { type: "ValueError", message: "m", traceback: "x".repeat(4101) } }],
    ["an unserializable result without its type", { status: "unserializable", error: { message: "m" } }],
    ["an unserializable result with a traceback", { status: "unserializable", error: { type: "TypeError", message: "m", traceback: "t" } }],
    ["stdin mode's fields in call mode", { status: "ok", value: 1, stdout: SECRET }],
    ["an output limit with a string size", { status: "output_limit", bytes: SECRET }],
    ["a timeout with an exit code", { status: "timeout", exit_code: 0 }],
  ];
  it.each(call)("call mode: refuses %s", (what, rec) => {
    expectRefused(judge(CALL, [evidence([{ id: "c", duration_ms: 3, ...rec }])], hidden), what);
  });

  const stdin: [string, Record<string, unknown>][] = [
    ["an unknown key", { leak: SECRET }],
    ["a string exit code", { exit_code: SECRET }],
    ["an exit code above 255", { exit_code: 256 }],
    ["no exit code", { exit_code: undefined }],
    ["no stdout", { stdout: undefined }],
    ["a stdout that is not a string", { stdout: [SECRET] }],
    ["a stdout of more than 1 MiB", { stdout: "x".repeat(1024 * 1024 + 1) }],
    ["a stderr tail of 2,001 characters", { stderr_tail: "x".repeat(2001) }],
    ["a string stdout_clipped", { stdout_clipped: "false" }],
    ["call mode's status", { status: "crash" }],
    ["call mode's value", { value: SECRET }],
    ["an error", { status: "error", error: { type: "ValueError", message: SECRET } }],
  ];
  it.each(stdin)("stdin mode: refuses %s", (what, rec) => {
    expectRefused(judge(STDIN, [evidence([printed("c", rec)])], hidden), what);
  });

  it("refuses a record without an id, with an id that is not a string, or an empty one", () => {
    for (const rec of [{ status: "timeout", duration_ms: 1 }, { id: ["c", SECRET], status: "timeout", duration_ms: 1 }, { id: "", status: "timeout", duration_ms: 1 }])
      expectRefused(judge(CALL, [evidence([rec])], hidden), JSON.stringify(rec));
    // The harness's own overall output limit writes only the id and the status.
    expect(judge(CALL, [evidence([{ id: "c", status: "output_limit" }])]).findings![0]!.where).toBe('case "c": the result is too large to compare');
  });

  it("refuses an exact big integer where a count goes (the exact JSON reader keeps it a bigint)", () => {
    expectRefused(judge(CALL, [evidence('{"id": "c", "status": "crash", "exit_code": 9007199254740993, "duration_ms": 1}')], hidden), "bigint");
    expectRefused(judge(CALL, [evidence('{"id": "c", "status": "output_limit", "bytes": 9007199254740993}')], hidden), "bigint bytes");
  });

  it("accepts every field at its bound", () => {
    const at = judge(CALL, [evidence([called("c", { status: "error", duration_ms: 3_600_000, error: { type: "E".repeat(400), message: "m".repeat(2100), traceback: "t".repeat(4100) } })])]);
    expect(at.findings![0]!.where).toBe('case "c": raised an exception');
    expect(judge(CALL, [evidence([called("c", { status: "crash", exit_code: 255 })])]).findings![0]!.actual).toMatch(/^exit code 255, /);
    expect(judge(CALL, [evidence([called("c", { status: "crash", exit_code: 0, duration_ms: 0 })])]).findings![0]!.actual).toMatch(/^exit code 0, /);
    expect(judge(CALL, [evidence([called("c", { status: "unserializable", error: { type: "TypeError", message: "m".repeat(1100) } })])]).passed).toBe(false);
    const big = printed("c", { stdout: "1\n" + " ".repeat(1024 * 1024 - 2), stderr_tail: "e".repeat(2000), exit_code: 0 });
    expect(judge(STDIN, [evidence([big])]).passed).toBe(true);
    expect(judge(STDIN, [evidence([printed("c", { exit_code: 255 })])]).findings![0]!.actual).toBe("exit code 255, stderr is empty");
  });

  // The audit: what a model sees at reveal "verdict" is the case's id and what happened, never a value the
  // program chose (an exit code, an exception's own name, its message, its output, the files it left).
  it("at reveal verdict, no failure shows a model anything the program chose", () => {
    const records: Record<string, unknown>[] = [
      called("c", { status: "crash", exit_code: 142 }),
      called("c", { status: "error", error: { type: "Leak4242", message: SECRET, traceback: SECRET } }),
      called("c", { status: "unserializable", error: { type: "TypeError", message: SECRET } }),
      called("c", { status: "output_limit", bytes: 4242 }),
      called("c", { status: "timeout", duration_ms: 4242 }),
      ok("c", SECRET),
    ];
    for (const rec of records) {
      const o = judge(CALL, [evidence([rec], {}, { durationMs: 4242 })], hidden);
      expect(o.passed).toBe(false);
      expect(o.feedback, JSON.stringify(rec)).not.toMatch(/4242|142/);
    }
    for (const rec of [printed("c", { exit_code: 142, stderr_tail: SECRET }), printed("c", { stdout: SECRET }), printed("c", { status: "timeout", exit_code: 142, duration_ms: 4242 })]) {
      const o = judge(STDIN, [evidence([rec])], hidden);
      expect(o.passed).toBe(false);
      expect(o.feedback, JSON.stringify(rec)).not.toMatch(/4242|142/);
    }
    const imported = judge(CALL, [evidence([{ import_error: { type: "Leak4242", message: SECRET, traceback: SECRET } }])], hidden);
    expect(imported.feedback).toBe("the program could not be imported as solution.py with f: an exception\n  - import");
  });
});
