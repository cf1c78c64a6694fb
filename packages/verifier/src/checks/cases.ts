import { z } from "zod";
import { checkerFileName, findArtifact, findCheckerFile, parseJsonFile } from "../artifacts";
import { defineCheck } from "../define";
import { clipText, preview } from "../format";
import { parseJsonExact, stringifyJson } from "../lib/json";
import { toleranceParams } from "../lib/numbers";
import { programRunStopped } from "../lib/not-run";
import { compareText, textModeParam } from "../lib/text";
import { CASES_MODULE_SHADOWS, safeExceptionName } from "../lib/python";
import { createHash } from "node:crypto";
import { compareTyped, showTyped, toWire, typedValueProblem, TypedValueError } from "../lib/typed";
import type { CheckResult, Finding, RunEvidence, VerifyContext } from "../types";
import { BRIDGE_WIRE_PY } from "./bridge-py";
import { CASES_JUDGE_PY, CASES_SERVER_PY } from "./cases-harness";
import { maxFindingsParam } from "./json-matches";
import { repeatParam, rerunFailedParam } from "./support";

export const MAX_CASES = 500;
/** The judge's directory: the cases live there, out of the program's reach. */
const CASES_JUDGE_DIR = ".judge";
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

const caseId = z.string().min(1).max(100);
/** One case. `expected` (call) or `expected_stdout` (stdin) is hidden material: it never enters a container. */
const caseSchema = z.strictObject({
  id: caseId.optional().describe('Shown in results; default "case N".'),
  args: z.array(z.unknown()).max(100).optional().describe('Positional arguments (call mode), in the typed notation: plain JSON, or {"$tuple": [...]}, {"$set": [...]}, {"$dict": [[key, value], ...]}, {"$bytes": "<base64>"} ... (docs/checks.md).'),
  kwargs: z.record(z.string().regex(IDENT), z.unknown()).optional().describe("Keyword arguments (call mode), in the typed notation."),
  stdin: z.string().max(1024 * 1024).optional().describe("The program's standard input (stdin mode)."),
  argv: z.array(z.string().max(1000)).max(50).optional().describe("Command-line arguments (stdin mode)."),
  expected: z.unknown().optional().describe("The expected return value (call mode), in the typed notation: a tuple is not a list unless sequence_types is any; may be null."),
  held_out: z.boolean().optional().describe("A held-out case: its failure is reported to models only as a count."),
  expected_stdout: z.string().max(1024 * 1024).optional().describe("The expected standard output (stdin mode)."),
});
type Case = z.output<typeof caseSchema>;

const params = z
  .strictObject({
    mode: z.enum(["call", "stdin"]).default("call").describe("call: import the program and call `function` with each case's args; stdin: run the program with each case's stdin and compare stdout."),
    module: z
      .string()
      .regex(IDENT)
      // issue 25: a name the harness's Python already holds in sys.modules is that module, not the program.
      .refine((m) => !CASES_MODULE_SHADOWS.has(m), {
        error: (iss) => `${JSON.stringify(iss.input)} is a module of Python's standard library, numpy, pandas or what they import, or one Python runs at start-up: the harness would import that module instead of the program; pick another name, e.g. "solution"`,
      })
      // issue 27: the program's process imports the wire before the program, under this name.
      .refine((m) => m !== "loopsmith_wire", { error: '"loopsmith_wire" is the harness\'s own module: the harness would import it instead of the program; pick another name, e.g. "solution"' })
      .default("solution")
      .describe("The program is placed as <module>.py and imported under this name; not a standard-library or pre-imported module's name (json, os, numpy, pandas...)."),
    function: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/).optional().describe('The function to call (call mode), e.g. "solve" or "Solver.solve".'),
    cases: z.array(caseSchema).min(1).max(MAX_CASES).optional().describe("The cases, inline."),
    cases_file: checkerFileName.optional().describe("A checker file holding the cases as a JSON array (exact integers)."),
    timeout_seconds: z.number().min(0.1).max(60).default(10).describe("Time limit of each case."),
    ...toleranceParams,
    ignore_order: z.boolean().default(false).describe("Compare returned lists (and tuples) as multisets."),
    sequence_types: z
      .enum(["exact", "any"])
      .default("exact")
      .describe("exact (default): a tuple, a list and a set are different types, as Python's == says; any: all three compare as lists (a set in its sorted order)."),
    held_out_share: z
      .number()
      .min(0)
      .max(0.9)
      .optional()
      .describe("The share of cases held out (chosen by their ids, deterministically) besides those marked held_out: a held-out case's failure is reported to models only as a count. Default: 0.25 for a hidden check with 4 or more cases, else 0."),
    stdout_mode: textModeParam,
    max_findings: maxFindingsParam,
    repeat: repeatParam,
    rerun_failed: rerunFailedParam,
  })
  .superRefine((p, ctx) => {
    // Stryker disable next-line StringLiteral: equivalent; an issue's code is never shown, its path and message are
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    if ((p.cases === undefined) === (p.cases_file === undefined)) issue(["cases"], "give exactly one of cases or cases_file");
    if (p.mode === "call" && p.function === undefined) issue(["function"], "required in call mode");
    for (const problem of caseProblems(p.cases ?? [], p.mode)) issue(["cases", ...problem.path], problem.message);
  });
type Params = z.output<typeof params>;

/** What a mode needs of each case, and unique ids. */
function caseProblems(cases: Case[], mode: "call" | "stdin"): { path: (string | number)[]; message: string }[] {
  const problems: { path: (string | number)[]; message: string }[] = [];
  const ids = new Set<string>();
  cases.forEach((c, i) => {
    const id = c.id ?? `case ${i + 1}`;
    if (ids.has(id)) problems.push({ path: [i, "id"], message: `duplicate case id ${JSON.stringify(id)}` });
    ids.add(id);
    if (mode === "call") {
      if (!Object.hasOwn(c, "expected")) problems.push({ path: [i, "expected"], message: "required in call mode (null is a value)" });
      for (const [field, value] of [["args", c.args], ["kwargs", c.kwargs], ["expected", c.expected]] as const) {
        const problem = value === undefined ? undefined : typedValueProblem(field === "kwargs" ? Object.values(value as object) : value);
        if (problem !== undefined) problems.push({ path: [i, field], message: `not a value of the typed notation: ${problem}` });
      }
      if (c.stdin !== undefined || c.expected_stdout !== undefined || c.argv !== undefined) problems.push({ path: [i], message: "stdin, argv and expected_stdout belong to stdin mode" });
    } else {
      if (c.expected_stdout === undefined) problems.push({ path: [i, "expected_stdout"], message: "required in stdin mode" });
      if (c.args !== undefined || c.kwargs !== undefined || Object.hasOwn(c, "expected")) problems.push({ path: [i], message: "args, kwargs and expected belong to call mode" });
    }
  });
  return problems;
}

type Resolved = { ok: true; cases: (Case & { id: string })[] } | { ok: false; message: string };

/** The cases, inline or from the checker file, validated the same way either way. */
function resolveCases(p: Params, checkerFiles: { name: string; content: Buffer }[]): Resolved {
  let raw: unknown = p.cases;
  if (p.cases_file !== undefined) {
    const file = findCheckerFile({ checkerFiles }, p.cases_file);
    if (!file.ok) return file;
    const parsed = parseJsonFile(`checker file "${p.cases_file}"`, file.value);
    if (!parsed.ok) return parsed;
    raw = parsed.value;
  }
  const list = z.array(caseSchema).min(1).max(MAX_CASES).safeParse(raw);
  if (!list.success) {
    const i = list.error.issues[0]!;
    return { ok: false, message: `the cases are invalid at ${i.path.join(".") || "(root)"}: ${i.message}` };
  }
  const problems = caseProblems(list.data, p.mode);
  if (problems.length > 0) return { ok: false, message: `the cases are invalid at ${problems[0]!.path.join(".")}: ${problems[0]!.message}` };
  return { ok: true, cases: list.data.map((c, i) => ({ ...c, id: c.id ?? `case ${i + 1}` })) };
}

const showCall = (fn: string, c: Case) => {
  const args = (c.args ?? []).map((a) => showTyped(a, 60));
  const kwargs = Object.entries(c.kwargs ?? {}).map(([k, v]) => `${k}=${showTyped(v, 60)}`);
  return clipText(`${fn}(${[...args, ...kwargs].join(", ")})`, 200);
};

// The program's side decodes the wire's strict notation, in which a dict is always a $dict (issue 27): the
// client's plain objects are translated, the keyword arguments' names stay the keys of a plain object.
const wireKwargs = (kwargs: Record<string, unknown>) => Object.fromEntries(Object.entries(kwargs).map(([k, v]) => [k, toWire(v)]));

/** The cases held out: those marked, and a share chosen by their ids (a hash, so the same on every run). */
export function heldOut(all: { id: string; held_out?: boolean }[], share: number): Set<string> {
  const out = new Set(all.filter((c) => c.held_out === true).map((c) => c.id));
  const rest = all.filter((c) => c.held_out !== true).map((c) => c.id);
  const n = Math.min(rest.length, Math.round(share * all.length) - out.size);
  const ranked = rest.map((id) => ({ id, h: createHash("sha256").update(`loopsmith held-out ${id}`).digest("hex") })).sort((a, b) => (a.h < b.h ? -1 : a.h > b.h ? 1 : 0));
  for (const { id } of ranked.slice(0, Math.max(0, n))) out.add(id);
  return out;
}

/** The default held-out share: a hidden check's cases, when there are enough to hold some out. */
const heldOutShare = (p: Params, count: number, ctx: Pick<VerifyContext, "visibility">) => p.held_out_share ?? (ctx.visibility?.hidden === true && count >= 4 ? 0.25 : 0);

export const cases = defineCheck({
  description:
    // Stryker disable next-line StringLiteral: documentation (GET /checks and the planner's prompt show it), like a .describe() argument
    "Data-driven test cases against the program's code, run in a fresh sandbox container of their own, each case under its own time limit. call mode imports the program as <module>.py and calls `function(*args, **kwargs)`; stdin mode runs the program with each case's stdin. Results are serialised to plain JSON in the container and compared OUTSIDE it (expected values never enter a container): numbers within atol/rtol, integers exactly; stdout by stdout_mode. Every case must pass; an exception, a timeout, sys.exit or a missing result is a failure.",
  params,
  example: { mode: "call", function: "add", cases: [{ id: "small", args: [2, 3], expected: 5 }, { args: [-1, 1], expected: 0 }], timeout_seconds: 5 },
  publicParams: ["mode", "module", "function", "timeout_seconds", "atol", "rtol", "ignore_order", "sequence_types", "stdout_mode", "repeat", "rerun_failed"],
  checkerFiles: (p) => (p.cases_file ? [p.cases_file] : []),
  sandbox(p, ctx) {
    const resolved = resolveCases(p, ctx.checkerFiles);
    // Invalid cases fail in run(); with nothing to run, no container is started.
    // Stryker disable next-line ConditionalExpression: equivalent; without it the next line throws, and planCheckRuns answers a throwing sandbox() with no run too
    if (!resolved.ok) return [];
    // Only what the program is given: never `expected` or `expected_stdout`. The cases (ids and inputs)
    // stay in the judge's directory; the program's process gets one case's inputs at a time.
    const inputs = resolved.cases.map((c) =>
      p.mode === "call" ? { id: c.id, args: (c.args ?? []).map(toWire), kwargs: wireKwargs(c.kwargs ?? {}) } : { id: c.id, stdin: c.stdin ?? "", argv: c.argv ?? [] },
    );
    const spec = { mode: p.mode, module: p.module, function: p.function ?? "", timeout: p.timeout_seconds, import_timeout: 30, cases: inputs };
    return [
      {
        files: [
          { path: `${p.module}.py`, content: Buffer.from(ctx.program.source) },
          { path: ".loopsmith/cases_server.py", content: Buffer.from(CASES_SERVER_PY) },
          { path: ".loopsmith/loopsmith_wire.py", content: Buffer.from(BRIDGE_WIRE_PY) },
          { path: `${CASES_JUDGE_DIR}/cases_judge.py`, content: Buffer.from(CASES_JUDGE_PY) },
          { path: `${CASES_JUDGE_DIR}/loopsmith_wire.py`, content: Buffer.from(BRIDGE_WIRE_PY) },
          { path: `${CASES_JUDGE_DIR}/cases.json`, content: Buffer.from(stringifyJson(spec)) },
        ],
        command: ["python3", ".loopsmith/cases_server.py"],
        judge: { dir: CASES_JUDGE_DIR, command: ["python3", "-I", "-B", "cases_judge.py"] },
        // Every case's limit and its grace, the import's, and room for forks and the interpreters' start.
        timeoutMs: Math.min(600_000, Math.ceil((inputs.length * (p.timeout_seconds + 0.5) + 30 + 15) * 1000)),
      },
    ];
  },
  run(p, ctx): CheckResult {
    const resolved = resolveCases(p, ctx.checkerFiles);
    if (!resolved.ok) return { passed: false, message: resolved.message };
    const all = resolved.cases;
    const raw = ctx.runs[0];
    // issue 27: the runner makes no case run after a program run that timed out or ran out of memory.
    const stopped = programRunStopped(ctx);
    if (raw === undefined && stopped) return { passed: false, message: `the cases were not run: ${stopped}`, publicMessage: `the cases were not run: ${stopped}` };
    if (raw === undefined) return { passed: false, message: "the cases were not run (no sandbox evidence)", publicMessage: "the cases were not run" };
    if (raw.judge === undefined) return { passed: false, message: "the cases were not run (no judge outcome came back)", publicMessage: "the cases were not run" };
    // The results are the judge's (written in its own directory); the run's end is the container's.
    const run: RunEvidence = { ...raw, exitCode: raw.judge.exitCode, artifacts: raw.judge.files, artifactErrors: raw.judge.errors };
    const results = readResults(run, p.mode, all.map((c) => c.id));
    if (!results.ok) return { passed: false, message: results.message, publicMessage: results.publicMessage };
    if (results.importError) {
      const e = results.importError;
      const what = `the program could not be imported as ${p.module}.py${p.function ? ` with ${p.function}` : ""}`;
      const error = `${clipText(e.type, 200)}: ${clipText(e.message, 300)}`;
      // The import ran beside the cases' inputs: its error text is the program's to write, so a hidden
      // check shows only the (built-in) exception type, and the message from "input" up.
      return {
        passed: false,
        message: `${what}: ${error}`,
        publicMessage: `${what}: ${safeExceptionName(e.type)}`,
        findings: [{ where: "import", actual: error, note: clipText(e.traceback, 1500) }],
      };
    }
    const tol = { atol: p.atol, rtol: p.rtol };
    const held = heldOut(all, heldOutShare(p, all.length, ctx));
    const findings: Finding[] = [];
    const heldFailed: Finding[] = [];
    let failed = 0;
    // Stryker disable next-line StringLiteral: unreachable; call mode requires a function (the params' refine), and stdin mode never shows it
    const fn = p.function ?? "";
    for (const c of all) {
      const got = results.byId.get(c.id);
      const input = p.mode === "call" ? showCall(fn, c) : `stdin ${preview(c.stdin ?? "", 150)}${c.argv?.length ? `, argv ${preview(c.argv)}` : ""}`;
      const problem = judgeCase(p, c, got, tol, run);
      if (problem === null) continue;
      failed++;
      const finding = { where: `case ${JSON.stringify(c.id)}: ${problem.what}`, input, ...problem.finding };
      // A held-out case's failure reaches no finding a model could read: only a count (and, for the client
      // of a hidden check, the full message).
      if (held.has(c.id)) heldFailed.push(finding);
      else if (findings.length < p.max_findings) findings.push(finding);
    }
    const total = all.length;
    if (failed === 0) {
      const done = `all ${total} case${total === 1 ? "" : "s"} passed${held.size > 0 ? ` (${held.size} of them held out)` : ""}`;
      return { passed: true, message: done, publicMessage: done };
    }
    const summary = `${failed} of ${total} case${total === 1 ? "" : "s"} failed`;
    const heldNote = heldFailed.length > 0 ? `${heldFailed.length} held-out case${heldFailed.length === 1 ? "" : "s"} failed` : "";
    const show = (list: Finding[]) =>
      list
        .slice(0, 3)
        .map((f) => `${f.where} (${f.input}${f.expected !== undefined ? `: expected ${f.expected}` : ""}${f.actual !== undefined ? `, got ${f.actual}` : ""})`)
        .join("; ");
    // The full message is the client's, but a visible check's message is what a model reads too: held-out
    // cases are named in it only when the check is hidden.
    const named = [show(findings), ctx.visibility?.hidden === true && heldFailed.length > 0 ? `held out: ${show(heldFailed)}` : heldNote].filter(Boolean).join("; ");
    const publicNamed = [findings.slice(0, 5).map((f) => f.where).join("; "), heldNote].filter(Boolean).join("; ");
    return { passed: false, message: `${summary}: ${named}`, publicMessage: `${summary}: ${publicNamed}`, findings };
  },
});

// issue 25: the harness writes its results inside the container the program runs in, so the program can
// write any line there (and, in call mode, it has every case's input in its own memory). Each line must
// be exactly what the harness writes, field by field, every number and string bounded; anything else
// fails the check with a message that quotes nothing of the line. Otherwise a forged field (a string
// where an exit code goes) would carry hidden inputs into a locator, which a model sees at any `reveal`.
// Bounds: the harness clips an exception's type to 200 code points, its message to 1,003 and its
// traceback to 2,003 (up to twice as many UTF-16 units here), stdout to 1 MiB, stderr's tail to 2,000 bytes.
const resultId = z.string().min(1).max(100);
const durationMs = z.int().min(0).max(3_600_000);
const exitCode = z.int().min(0).max(255);
const bounded = (max: number) => z.string().max(max);
const exceptionType = bounded(400);
const callRecord = z.discriminatedUnion("status", [
  // JSON cannot carry undefined: the refine requires the key.
  z.strictObject({ id: resultId, status: z.literal("ok"), value: z.unknown().refine((v) => v !== undefined), duration_ms: durationMs }),
  z.strictObject({
    id: resultId,
    status: z.literal("error"),
    error: z.strictObject({ type: exceptionType, message: bounded(2100), traceback: bounded(4100).optional() }),
    duration_ms: durationMs,
  }),
  z.strictObject({ id: resultId, status: z.literal("unserializable"), error: z.strictObject({ type: exceptionType, message: bounded(1100) }), duration_ms: durationMs }),
  z.strictObject({ id: resultId, status: z.literal("timeout"), duration_ms: durationMs }),
  z.strictObject({ id: resultId, status: z.literal("crash"), exit_code: exitCode, duration_ms: durationMs }),
  // From the case's process (with its size) or from the harness's overall budget (neither field).
  z.strictObject({ id: resultId, status: z.literal("output_limit"), bytes: z.int().min(0).max(Number.MAX_SAFE_INTEGER).optional(), duration_ms: durationMs.optional() }),
]);
const stdinRecord = z.discriminatedUnion("status", [
  z.strictObject({
    id: resultId,
    status: z.enum(["ok", "timeout"]),
    duration_ms: durationMs,
    exit_code: exitCode,
    stdout: bounded(1024 * 1024),
    stdout_clipped: z.boolean(),
    stderr_tail: bounded(2000),
  }),
  z.strictObject({ id: resultId, status: z.literal("output_limit") }),
]);
const importRecord = z.strictObject({ import_error: z.strictObject({ type: exceptionType, message: bounded(2100), traceback: bounded(4100) }) });

type CaseRecord = z.output<typeof callRecord> | z.output<typeof stdinRecord>;
type ImportError = z.output<typeof importRecord>["import_error"];

/** What a model is told of results that are not the harness's: always these words, never the line's. */
export const MALFORMED_RESULTS = "the harness's result for a case is malformed";

type Results = { ok: true; importError?: ImportError; byId: Map<string, CaseRecord> } | { ok: false; message: string; publicMessage: string };

function readResults(run: RunEvidence, mode: "call" | "stdin", ids: string[]): Results {
  const file = findArtifact(run, "cases.jsonl");
  // The exit code and duration are the container's, but a program can choose them: the client sees them.
  const how = run.timedOut ? "hit its overall time limit" : run.oomKilled ? "ran out of memory" : undefined;
  const ended = how === undefined ? `the case run exited with code ${run.exitCode}` : `the case run ${how}${run.timedOut ? ` after ${run.durationMs} ms` : ""}`;
  if (!file.ok) {
    // The artifact message names the files that did come back, and the program names those.
    return { ok: false, message: `no case results came back (${ended}; ${file.message})`, publicMessage: `no case results came back (the case run ${how ?? "ended without them"})` };
  }
  const malformed = (line: number, why: string): Results => ({ ok: false, message: `${MALFORMED_RESULTS} (result line ${line}: ${why}; ${ended})`, publicMessage: MALFORMED_RESULTS });
  const lines = file.value
    .toString("utf8")
    .split("\n")
    .map((text, i) => ({ text, line: i + 1 }))
    .filter((l) => l.text !== "");
  const byId = new Map<string, CaseRecord>();
  for (const { text, line } of lines) {
    const parsed = parseJsonExact(text);
    if (!parsed.ok) return malformed(line, "not JSON");
    const value = parsed.value;
    if (value !== null && typeof value === "object" && Object.hasOwn(value, "import_error")) {
      // The harness writes an import error alone, in call mode, and nothing after it.
      if (mode !== "call" || lines.length !== 1) return malformed(line, "an import error where the harness writes none");
      const rec = importRecord.safeParse(value);
      if (!rec.success) return malformed(line, "not an import error as the harness writes it");
      return { ok: true, importError: rec.data.import_error, byId };
    }
    const rec = (mode === "call" ? callRecord : stdinRecord).safeParse(value);
    if (!rec.success) return malformed(line, "not a case result as the harness writes it");
    // The harness writes one result per case, in the cases' order: an unknown, repeated or out-of-order
    // id is someone else's line.
    if (rec.data.id !== ids[byId.size]) return malformed(line, "not the next case's result");
    byId.set(rec.data.id, rec.data);
  }
  return { ok: true, byId };
}

function judgeCase(
  p: Params,
  c: Case,
  got: CaseRecord | undefined,
  tol: { atol: number; rtol: number },
  run: RunEvidence,
): { what: string; finding: Partial<Finding> } | null {
  if (got === undefined) {
    const why = run.timedOut ? "the case run hit its overall time limit" : `the case run ended early (exit code ${run.exitCode})`;
    return { what: "no result", finding: { actual: why } };
  }
  // `what` goes into the locator, which a model sees at every `reveal`: it names what happened, never a
  // value the program chose (an exit code, an exception's own name); those are what it produced (actual).
  switch (got.status) {
    case "timeout":
      return { what: `timed out after ${p.timeout_seconds} s`, finding: { actual: "no answer within the time limit" } };
    case "crash":
      return { what: "the process died", finding: { actual: `exit code ${got.exit_code}, no result (os._exit, a signal, or a crash)` } };
    case "output_limit":
      return { what: "the result is too large to compare", finding: {} };
    case "unserializable":
      return { what: "returned a value that is not plain data", finding: { actual: clipText(got.error.message, 200) } };
    case "error":
      return {
        what: `raised ${safeExceptionName(got.error.type)}`,
        finding: { actual: `${clipText(got.error.type, 200)}: ${clipText(got.error.message, 300)}`, note: got.error.traceback ? clipText(got.error.traceback, 1500) : undefined },
      };
    case "ok":
      break;
  }
  if (!("stdout" in got)) {
    let cmp;
    try {
      cmp = compareTyped(got.value, c.expected, { tol, ignoreOrder: p.ignore_order, sequenceTypes: p.sequence_types }, 3);
    } catch (e) {
      // The judge checked the value against the wire's notation: a malformed one is a broken harness.
      if (e instanceof TypedValueError) return { what: "returned a value that is not plain data", finding: {} };
      throw e;
    }
    if (cmp.equal) return null;
    return {
      what: "wrong answer",
      finding: { actual: showTyped(got.value, 200), expected: showTyped(c.expected, 200), note: cmp.differences.map((d) => `${d.pointer || "(value)"} ${d.what}${d.note ? ` (${d.note})` : ""}`).join("; ") },
    };
  }
  if (got.exit_code !== 0) {
    const stderr = got.stderr_tail ? `stderr: ${clipText(got.stderr_tail.split("\n").filter(Boolean).at(-1) ?? "", 300)}` : "stderr is empty";
    return { what: "exited with a non-zero code", finding: { actual: `exit code ${got.exit_code}, ${stderr}` } };
  }
  if (got.stdout_clipped) return { what: "printed more than 1 MiB", finding: {} };
  // Stryker disable next-line StringLiteral: unreachable; stdin mode requires expected_stdout of every case (the params' refine)
  const expected = c.expected_stdout ?? "";
  const cmp = compareText(got.stdout, expected, { mode: p.stdout_mode, tol, caseSensitive: true }, 3);
  if (cmp.equal) return null;
  const d = cmp.differences[0];
  return { what: `wrong output (${cmp.summary})`, finding: { actual: preview(got.stdout, 200), expected: preview(expected, 200), note: d ? `${d.where}: expected ${d.expected ?? "(nothing)"}, found ${d.actual ?? "(nothing)"}` : undefined } };
}
