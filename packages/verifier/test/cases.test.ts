// The cases check judged on crafted sandbox evidence, without services (issue 18): what its run request
// carries (never expected values), and how it judges every result status, forged and missing results,
// tolerances both ways, and the stdin mode.
import type { CheckSpec } from "@loopsmith/schemas";
import { describe, expect, it } from "vitest";
import { listChecks, planCheckRuns, publicCheck, runChecks, validateCheckSpec, visibilityOf, type RunEvidence } from "../src/index";
import { CASES_HARNESS_PY } from "../src/checks/cases-harness";
import { MAX_CASES } from "../src/checks/cases";
import { safeExceptionName } from "../src/lib/python";
import { check, emptyCtx, file } from "./support";

const PROGRAM = { filename: "analysis.py", source: "def add(a, b):\n    return a + b\n" };

/** A case run whose harness wrote these result lines. */
function evidence(records: unknown[] | string, over: Partial<RunEvidence> = {}): RunEvidence {
  const text = typeof records === "string" ? records : records.map((r) => JSON.stringify(r)).join("\n");
  return { exitCode: 0, timedOut: false, oomKilled: false, stdout: "", stderr: "", durationMs: 50, artifacts: [file("cases.jsonl", text)], artifactErrors: [], ...over };
}

function judge(params: Record<string, unknown>, runs: RunEvidence[], over: Partial<CheckSpec> = {}, checkerFiles = [] as ReturnType<typeof file>[]) {
  const spec = { ...check("cases", params), ...over };
  const [o] = runChecks([spec], emptyCtx({ program: PROGRAM, checkerFiles }), () => runs);
  if (o === undefined) throw new Error("no outcome");
  return o;
}

const ADD = { function: "add", cases: [{ id: "small", args: [2, 3], expected: 5 }, { args: [-1, 1], expected: 0 }] };
const ok = (id: string, value: unknown) => ({ id, status: "ok", value });

describe("cases: the run request", () => {
  it("carries the program, the inputs and the harness, never the expected values", () => {
    const [req, ...rest] = planCheckRuns(check("cases", { ...ADD, cases: [{ id: "secret", args: [20, 22], kwargs: { c: 1 }, expected: 4242 }] }), { program: PROGRAM, checkerFiles: [], inputs: [] });
    expect(rest).toEqual([]);
    expect(req!.command).toEqual(["python3", "/work/.loopsmith/harness.py"]);
    expect(req!.files.map((f) => f.path)).toEqual(["solution.py", ".loopsmith/cases.json", ".loopsmith/harness.py"]);
    expect(req!.files[0]!.content.toString()).toBe(PROGRAM.source);
    const spec = JSON.parse(req!.files[1]!.content.toString()) as unknown;
    expect(spec).toEqual({ mode: "call", module: "solution", function: "add", timeout: 10, import_timeout: 30, cases: [{ id: "secret", args: [20, 22], kwargs: { c: 1 } }] });
    expect(req!.files[1]!.content.toString()).not.toContain("4242");
    expect(req!.files[2]!.content.toString()).toBe(CASES_HARNESS_PY);
    expect(CASES_HARNESS_PY).toContain('os.path.join(OUT_DIR, "cases.jsonl")');
    // One case: its limit (10 s + 0.5), the import's 30 s and 15 s of room.
    expect(req!.timeoutMs).toBe(55_500);
  });

  it("stdin mode sends stdin and argv only; the module name is the file name", () => {
    const p = { mode: "stdin", module: "prog", timeout_seconds: 2, cases: [{ stdin: "1 2\n", expected_stdout: "3\n" }, { id: "b", argv: ["-v"], expected_stdout: "x" }] };
    const [req] = planCheckRuns(check("cases", p), { program: PROGRAM, checkerFiles: [], inputs: [] });
    expect(req!.files[0]!.path).toBe("prog.py");
    expect(JSON.parse(req!.files[1]!.content.toString())).toEqual({
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
    expect(req!.timeoutMs).toBe(50_000);
  });

  it("caps the overall time limit at ten minutes", () => {
    const many = Array.from({ length: MAX_CASES }, (_, i) => ({ args: [i], expected: i }));
    const [req] = planCheckRuns(check("cases", { function: "f", cases: many, timeout_seconds: 60 }), { program: PROGRAM, checkerFiles: [], inputs: [] });
    expect(req!.timeoutMs).toBe(600_000);
  });

  it("reads the cases from a checker file, which makes the check hidden; no run when the file is bad", () => {
    const spec = check("cases", { function: "add", cases_file: "cases.json" });
    expect(visibilityOf(spec).hidden).toBe(true);
    const good = file("cases.json", JSON.stringify([{ args: [1, 2], expected: 3 }]));
    expect(planCheckRuns(spec, { program: PROGRAM, checkerFiles: [good], inputs: [] })).toHaveLength(1);
    expect(planCheckRuns(spec, { program: PROGRAM, checkerFiles: [], inputs: [] })).toEqual([]);
    expect(planCheckRuns(spec, { program: PROGRAM, checkerFiles: [file("cases.json", "[")], inputs: [] })).toEqual([]);
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
    expect(judge(big, [evidence('{"id": "case 1", "status": "ok", "value": 9007199254740993}')], {}, files).passed).toBe(true);
    expect(judge(big, [evidence('{"id": "case 1", "status": "ok", "value": 9007199254740992}')], {}, files).passed).toBe(false);
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
    // Not a tag: an object with other keys, or a tag that is not one of the three, compares as an object.
    expect(judge(p({ $float: "nan", x: 1 }), [evidence([ok("case 1", { $float: "nan", x: 1 })])]).passed).toBe(true);
    expect(judge(p({ $float: "nan" }), [evidence([ok("case 1", { $float: "nan", x: 1 })])]).passed).toBe(false);
    expect(judge(p({ $float: "zero" }), [evidence([ok("case 1", { $float: "zero" })])]).passed).toBe(true);
    expect(judge(p({ $float: "zero" }), [evidence([ok("case 1", 0)])]).passed).toBe(false);
    expect(judge(p({ $float: 1 }), [evidence([ok("case 1", { $float: 1 })])]).passed).toBe(true);
  });

  it("expects null as a value", () => {
    const p = { function: "f", cases: [{ args: [], expected: null }] };
    expect(judge(p, [evidence([ok("case 1", null)])]).passed).toBe(true);
    expect(judge(p, [evidence([ok("case 1", 0)])]).passed).toBe(false);
  });

  it.each([
    [{ status: "timeout" }, "timed out after 10 s", "no answer within the time limit"],
    [{ status: "crash", exit_code: -9 }, "the process died (exit code -9)", "no result (os._exit, a signal, or a crash)"],
    [{ status: "crash" }, "the process died (exit code ?)", "no result (os._exit, a signal, or a crash)"],
    [{ status: "unserializable", error: { message: "<object at 0x1>" } }, "returned a value that is not plain data", "<object at 0x1>"],
    [{ status: "unserializable" }, "returned a value that is not plain data", ""],
    [{ status: "error", error: { type: "ZeroDivisionError", message: "division by zero" } }, "raised ZeroDivisionError", "ZeroDivisionError: division by zero"],
    [{ status: "error", error: { type: "LeakedSecret42", message: "m" } }, "raised an exception", "LeakedSecret42: m"],
    [{ status: "error" }, "raised an exception", "Exception: "],
    [{ status: "passed" }, "an unknown result status", '"passed"'],
  ])("fails the status %j", (rec, what, actual) => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([{ id: "c", value: 1, ...rec }])]);
    expect(o.passed).toBe(false);
    expect(o.findings![0]).toMatchObject({ where: `case "c": ${what}`, actual });
  });

  it("fails a result too large to compare, with no value shown", () => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([{ id: "c", status: "output_limit" }])]);
    expect(o.passed).toBe(false);
    expect(o.findings).toEqual([{ where: 'case "c": the result is too large to compare', input: "f()" }]);
  });

  it("keeps an error's traceback as the note", () => {
    const o = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([{ id: "c", status: "error", error: { type: "KeyError", message: "'x'", traceback: "Traceback ...\nKeyError: 'x'" } }])]);
    expect(o.findings![0]).toMatchObject({ note: "Traceback ...\nKeyError: 'x'" });
    const none = judge({ function: "f", cases: [{ id: "c", args: [], expected: 1 }] }, [evidence([{ id: "c", status: "error", error: { type: "KeyError", message: "'x'" } }])]);
    expect(none.findings![0]!.note).toBeUndefined();
  });

  it("fails a case with no result, saying how the run ended", () => {
    const early = judge(ADD, [evidence([ok("small", 5)], { exitCode: 137 })]);
    expect(early).toMatchObject({ passed: false, message: '1 of 2 cases failed: case "case 2": no result (add(-1, 1), got the case run ended early (exit code 137))' });
    const late = judge(ADD, [evidence([ok("small", 5)], { timedOut: true })]);
    expect(late.findings![0]!.actual).toBe("the case run hit its overall time limit");
  });

  it("ignores results for cases it did not ask for, and refuses two results for one case", () => {
    expect(judge(ADD, [evidence([ok("small", 5), ok("case 2", 0), ok("extra", 1)])]).passed).toBe(true);
    const forged = judge(ADD, [evidence([ok("small", 5), ok("small", 5), ok("case 2", 0)])], { hidden: true });
    expect(forged).toMatchObject({ passed: false, message: 'case "small" has two results: the results were tampered with' });
    expect(forged.feedback).toBe('case "small" has two results: the results were tampered with');
  });

  it("fails closed on malformed results", () => {
    for (const text of ["not json", "[1]", "null", '{"status": "ok", "value": 5}', '{"id": 5, "status": "ok"}']) {
      const o = judge(ADD, [evidence(text, { exitCode: 1 })]);
      expect(o).toMatchObject({ passed: false, message: "the case results are malformed (the case run exited with code 1)" });
    }
    expect(judge(ADD, [evidence(`${JSON.stringify(ok("small", 5))}\n\n${JSON.stringify(ok("case 2", 0))}\n`)]).passed).toBe(true);
  });

  it("fails closed when no results came back, saying how the run ended", () => {
    const none = { artifacts: [], artifactErrors: [] };
    expect(judge(ADD, [evidence([], { ...none, exitCode: 2 })]).message).toBe('no case results came back (the case run exited with code 2; artifact "cases.jsonl" was not returned (no artifacts were returned))');
    expect(judge(ADD, [evidence([], { ...none, timedOut: true, durationMs: 61000 })]).message).toMatch(/^no case results came back \(the case run hit its overall time limit after 61000 ms; /);
    expect(judge(ADD, [evidence([], { ...none, oomKilled: true })]).message).toMatch(/^no case results came back \(the case run ran out of memory; /);
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
    const custom = judge(ADD, [evidence([{ import_error: { type: "Secret_4242" } }])], { hidden: true, reveal: "verdict" });
    expect(custom.passed).toBe(false);
    expect(custom.feedback.split("\n")[0]).toBe("the program could not be imported as solution.py with add: an exception");
    expect(judge(ADD, [evidence([{ import_error: null }])]).message).toBe("the program could not be imported as solution.py with add: Error: ");
    const stdin = judge({ mode: "stdin", cases: [{ expected_stdout: "x" }] }, [evidence([{ import_error: {} }])]);
    expect(stdin.message).toBe("the program could not be imported as solution.py: Error: ");
  });

  it("counts every failure, lists three in the message and five in the public one", () => {
    const cs = Array.from({ length: 7 }, (_, i) => ({ id: `c${i}`, args: [i], expected: i }));
    const o = judge({ function: "f", cases: cs }, [evidence(cs.map((c) => ok(c.id, -1)))], { hidden: true, reveal: "verdict" });
    expect(o.passed).toBe(false);
    expect(o.message).toBe('7 of 7 cases failed: case "c0": wrong answer (f(0): expected 0, got -1); case "c1": wrong answer (f(1): expected 1, got -1); case "c2": wrong answer (f(2): expected 2, got -1)');
    expect(o.feedback.split("\n")[0]).toBe('7 of 7 cases failed: case "c0": wrong answer; case "c1": wrong answer; case "c2": wrong answer; case "c3": wrong answer; case "c4": wrong answer');
    expect(o.findings).toHaveLength(7);
    expect(judge({ function: "f", cases: cs, max_findings: 2 }, [evidence(cs.map((c) => ok(c.id, -1)))]).findings).toHaveLength(2);
    expect(judge({ function: "f", cases: cs.slice(0, 1) }, [evidence([ok("c0", -1)])]).message).toMatch(/^1 of 1 case failed: /);
  });

  it("stdin mode: compares stdout by stdout_mode, and fails a non-zero exit or clipped output", () => {
    const p = { mode: "stdin", cases: [{ id: "s", stdin: "1 2", expected_stdout: "3\n" }] };
    const out = (rec: Record<string, unknown>, params: Record<string, unknown> = p) => judge(params, [evidence([{ id: "s", status: "ok", exit_code: 0, ...rec }])]);
    expect(out({ stdout: "3  \n\n" }).passed).toBe(true);
    expect(out({ stdout: "3  \n\n" }, { ...p, stdout_mode: "exact" }).passed).toBe(false);
    const wrong = out({ stdout: "4\n" });
    expect(wrong).toMatchObject({ passed: false, message: '1 of 1 case failed: case "s": wrong output (1 line differs (1 line produced)) (stdin "1 2": expected "3\\n", got "4\\n")' });
    expect(wrong.findings![0]!.note).toBe('line 1: expected "3", found "4"');
    const missing = out({ stdout: "" });
    expect(missing.findings![0]!.note).toBe('line 1: expected "3", found (no such line)');
    const extra = judge({ mode: "stdin", cases: [{ id: "s", expected_stdout: "" }] }, [evidence([{ id: "s", status: "ok", exit_code: 0, stdout: "x" }])]);
    expect(extra.findings![0]!.note).toBe('line 1: expected (nothing), found "x"');
    const exit = out({ stdout: "3\n", exit_code: 2, stderr_tail: "Traceback\nValueError: bad\n" });
    expect(exit.findings![0]).toMatchObject({ where: 'case "s": exited with code 2', actual: "stderr: ValueError: bad" });
    expect(out({ stdout: "3\n", exit_code: 1 }).findings![0]).toMatchObject({ actual: "stderr is empty" });
    expect(out({ stdout: "3\n", exit_code: undefined }).passed).toBe(true);
    expect(out({ stdout: "3\n", stdout_clipped: true }).findings).toEqual([{ where: 'case "s": printed more than 1 MiB', input: 'stdin "1 2"' }]);
    expect(out({}).passed).toBe(false);
    const argv = judge({ mode: "stdin", cases: [{ id: "s", argv: ["-n", "2"], expected_stdout: "y" }] }, [evidence([{ id: "s", status: "ok", exit_code: 0, stdout: "x" }])]);
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

  it("bounds names and sizes", () => {
    expect(issues({ ...ADD, function: "Solver.solve" })).toEqual([]);
    expect(issues({ ...ADD, function: "a.b.c" })).toHaveLength(1);
    expect(issues({ ...ADD, module: "my-mod" })).toHaveLength(1);
    expect(issues({ ...ADD, timeout_seconds: 0.05 })).toHaveLength(1);
    expect(issues({ ...ADD, timeout_seconds: 61 })).toHaveLength(1);
    expect(issues({ function: "f", cases: [] })).toHaveLength(1);
    expect(issues({ function: "f", cases: [{ expected: 1, kwargs: { "not-ident": 1 } }] })).toHaveLength(1);
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
    judge({ function: "f", cases: [{ id: "c", expected }], ...over }, [evidence([{ id: "c", status: "ok", value }])]);

  it("takes mode call when it is named, and a case without args calls with none", () => {
    expect(validateCheckSpec(check("cases", { ...ADD, mode: "call" })).ok).toBe(true);
    expect(validateCheckSpec(check("cases", { ...ADD, mode: "file" })).ok).toBe(false);
    const [req] = planCheckRuns(check("cases", { mode: "call", function: "f", cases: [{ id: "c", expected: 1 }] }), { program: PROGRAM, checkerFiles: [], inputs: [] });
    expect((JSON.parse(req!.files[1]!.content.toString()) as { cases: unknown[] }).cases).toEqual([{ id: "c", args: [], kwargs: {} }]);
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
    expect(judge(ADD, [evidence([{ import_error: { type: "ImportError", message: "m" } }])]).findings).toEqual([{ where: "import", actual: "ImportError: m", note: "" }]);
  });

  it("a wrong answer's note lists each difference, with or without a detail", () => {
    expect(one({ a: 1, b: 2 }, { a: 2, b: 3 }).findings![0]!.note).toMatch(/^\/a differs \(differs by 1, .*\); \/b differs \(differs by 1, /);
    expect(one({ a: 1 }, {}).findings![0]!.note).toBe("(value) lacks an expected key");
  });

  it("stdin mode: the last non-empty stderr line, case-sensitive output, a missing stdout read as empty", () => {
    const p = { mode: "stdin", cases: [{ id: "s", stdin: "", expected_stdout: "ABC\n" }] };
    const out = (rec: Record<string, unknown>, params: Record<string, unknown> = p) => judge(params, [evidence([{ id: "s", status: "ok", exit_code: 0, ...rec }])]);
    expect(out({ stdout: "x", exit_code: 1, stderr_tail: "Traceback\n  File \"prog.py\", line 1\nValueError: bad\n\n" }).findings![0]!.actual).toBe("stderr: ValueError: bad");
    expect(out({ stdout: "x", exit_code: 1, stderr_tail: "\n\n" }).findings![0]!.actual).toBe("stderr: ");
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
    expect(Object.keys(shown.params).sort()).toEqual(["atol", "function", "ignore_order", "mode", "module", "rtol", "stdout_mode", "timeout_seconds"]);
    expect(JSON.stringify(shown)).not.toContain("42");
  });
});
