import { storable } from "@loopsmith/core";
import type { CheckFlaky, CheckOutcome, CheckSpec } from "@loopsmith/schemas";
import type { z } from "zod";
import { listQuoted } from "./format";
import { checkRegistry, knownCheckIds } from "./registry";
import { DEFAULT_REVEAL, feedbackFor, fullMessage, type Reveal } from "./reveal";
import type { CheckDef, CheckRunRequest, Finding, SandboxPlanContext, VerifyContext } from "./types";

type IssuePath = (string | number)[];

function issuePath(issue: z.core.$ZodIssue): IssuePath {
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: unreachable here; no param schema has symbol keys, the branch only satisfies zod's path type
  return issue.path.map((p) => (typeof p === "symbol" ? String(p) : p));
}

function unknownIdMessage(id: string): string {
  return `unknown check id ${JSON.stringify(id)}; known deterministic checks: ${knownCheckIds().join(", ")}`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

export type { CheckOutcome };

const MAX_FINDINGS = 50;

/** What a model is told about a run in which tampering was seen. */
export const TAMPER_FEEDBACK =
  "tampering was detected: this attempt changed, replaced or cut short what judges it (the tests, the runner's configuration, the report or the test run itself), so its run was not accepted. Solve the task itself; do not touch the tests or the test runner.";

function parse(spec: CheckSpec): { ok: true; def: CheckDef; params: Record<string, unknown> } | { ok: false; message: string } {
  const def = checkRegistry.get(spec.id);
  if (def === undefined) return { ok: false, message: unknownIdMessage(spec.id) };
  const parsed = def.params.safeParse(spec.params);
  if (!parsed.success) {
    return { ok: false, message: `invalid params: ${parsed.error.issues.map((i) => `${issuePath(i).join(".") || "(params)"}: ${i.message}`).join("; ")}` };
  }
  return { ok: true, def, params: parsed.data };
}

/** The checker files a check reads (empty for unknown ids or bad params). */
export function checkerFilesOf(spec: CheckSpec): string[] {
  const p = parse(spec);
  return p.ok ? (p.def.checkerFiles?.(p.params) ?? []) : [];
}

/** A check's visibility, defaults resolved: a check that reads checker files is hidden unless the client says otherwise. */
export function visibilityOf(spec: CheckSpec): { hidden: boolean; reveal: Reveal } {
  return { hidden: spec.hidden ?? checkerFilesOf(spec).length > 0, reveal: spec.reveal ?? DEFAULT_REVEAL };
}

/**
 * Runs one deterministic check on one attempt's evidence. Fails closed: an unknown id, invalid params or a
 * check that throws is a failed outcome, never a pass; anything but a literal `true` is a failure.
 */
export function runCheck(spec: CheckSpec, ctx: VerifyContext, runs?: VerifyContext["runs"]): CheckOutcome {
  const view = visibilityOf(spec);
  const out = (params: Record<string, unknown>, passed: boolean, message: string, publicMessage: string | undefined, rawFindings: Finding[], tampered?: string, flaky?: CheckFlaky): CheckOutcome => {
    // Messages quote what the program wrote, which may hold NUL or lone surrogates that Postgres refuses.
    const findings = rawFindings.map(storableFinding);
    if (tampered !== undefined) {
      // issue 26: the client reads what was seen; a model learns only that it was seen (not how, so that the
      // next attempt cannot learn to hide it).
      const seen = text(`tampered: ${tampered}`);
      const rendered = { passed: false, message: `${seen}; ${text(message)}`, findings };
      return { id: spec.id, params, passed: false, message: fullMessage(rendered), feedback: TAMPER_FEEDBACK, hidden: view.hidden, findings, tampered: text(tampered) };
    }
    const rendered = { passed, message: text(message), publicMessage: publicMessage === undefined ? undefined : text(publicMessage), findings };
    return { id: spec.id, params, passed, message: fullMessage(rendered), feedback: feedbackFor(rendered, view), hidden: view.hidden, findings, ...(flaky ? { flaky } : {}) };
  };
  const parsed = parse(spec);
  if (!parsed.ok) return out(spec.params, false, parsed.message, parsed.message, []);
  const { def, params } = parsed;
  const once = (group: VerifyContext["runs"] | undefined): Verdict => {
    try {
      const result = def.run(params, { ...ctx, ...(group === undefined ? {} : { runs: group }), visibility: view });
      const findings = (Array.isArray(result.findings) ? result.findings : []).slice(0, MAX_FINDINGS);
      const publicMessage = result.publicMessage ?? (def.publicMessages ? String(result.message) : undefined);
      // A run that replaced what it was given read-only (gVisor lets a rename do it: see the sandbox's
      // RunResult.protectedReplaced) is tampering whatever the check made of it.
      const replaced = (group ?? ctx.runs).flatMap((r) => r.protectedReplaced ?? []);
      const tampered = replaced.length > 0 ? `the run replaced files it was given read-only: ${listQuoted([...new Set(replaced)])}` : typeof result.tampered === "string" && result.tampered !== "" ? result.tampered : undefined;
      return { passed: tampered === undefined && result.passed === true, message: String(result.message), publicMessage, findings, tampered };
    } catch (e) {
      // The error text may quote params, so a hidden check only says that it crashed.
      return { passed: false, message: `check threw: ${errorText(e)}`, publicMessage: "the check could not be evaluated (it crashed); it counts as failed", findings: [] };
    }
  };
  const all = runs ?? ctx.runs;
  // rerun_failed: the runner made one more repetition after a failure; it counts as one more run.
  const k = repeatOf(params) + (params.rerun_failed === true && all.some((r) => r.repetition === repeatOf(params)) ? 1 : 0);
  const v = k > 1 && def.sandbox ? repeated(k, all, once) : once(runs);
  return out(params, v.passed, v.message, v.publicMessage, v.findings, v.tampered, v.flaky);
}

interface Verdict {
  passed: boolean;
  message: string;
  publicMessage: string | undefined;
  findings: Finding[];
  tampered?: string;
  flaky?: CheckFlaky;
}

/** A check's `repeat` param (the checks that run code have one), 1 for the rest. */
function repeatOf(params: Record<string, unknown>): number {
  return typeof params.repeat === "number" && Number.isInteger(params.repeat) && params.repeat > 1 ? params.repeat : 1;
}

/**
 * A check run `k` times on the same program: each repetition's runs judged on their own (a repetition
 * with no runs, the goal's time gone before it, makes the check one that was not run). It passes only if every
 * repetition passes; tampering in any is tampering; repetitions that disagree fail as flaky, with the first
 * failure's findings. A verdict never turns from fail to pass on a repetition.
 */
function repeated(k: number, runs: VerifyContext["runs"], once: (group: VerifyContext["runs"]) => Verdict): Verdict {
  const groups = Array.from({ length: k }, (_, i) => runs.filter((r) => (r.repetition ?? 0) === i));
  // A repetition that never ran (the goal's time ran out first) is no evidence of flakiness: the check was not run.
  const missing = groups.findIndex((g) => g.length === 0);
  if (missing >= 0) return once([]);
  const verdicts = groups.map((g) => once(g));
  const tampered = verdicts.find((v) => v.tampered !== undefined);
  if (tampered) return tampered;
  const passed = verdicts.filter((v) => v.passed).length;
  const firstFailure = verdicts.find((v) => !v.passed);
  if (firstFailure === undefined) {
    const first = verdicts[0]!;
    return { ...first, message: `${first.message} (in each of ${k} runs)`, publicMessage: first.publicMessage === undefined ? undefined : `${first.publicMessage} (in each of ${k} runs)` };
  }
  if (passed === 0) {
    return { ...firstFailure, message: `${firstFailure.message} (failed in each of ${k} runs)`, publicMessage: firstFailure.publicMessage === undefined ? undefined : `${firstFailure.publicMessage} (failed in each of ${k} runs)` };
  }
  const head = `flaky: the same program passed in ${passed} of ${k} runs and failed in ${k - passed} (its result depends on chance, time or order: in the program or in the check's tests)`;
  return {
    passed: false,
    message: `${head}; first failure: ${firstFailure.message}`,
    publicMessage: `${head}; first failure: ${firstFailure.publicMessage ?? "failed"}`,
    findings: firstFailure.findings,
    flaky: { runs: k, passed },
  };
}

const text = (s: string) => storable(s).text;

function storableFinding(f: Finding): Finding {
  return Object.fromEntries(Object.entries(f).map(([k, v]) => [k, typeof v === "string" ? text(v) : v])) as unknown as Finding;
}

/** Runs the deterministic checks in order; judgement checks belong to the inspector model. */
export function runChecks(checks: CheckSpec[], ctx: VerifyContext, runsByCheck: (i: number) => VerifyContext["runs"] = () => []): CheckOutcome[] {
  return checks.flatMap((spec, i) => (spec.kind === "judgement" ? [] : [runCheck(spec, ctx, runsByCheck(i))]));
}

/**
 * The sandbox runs a check needs (cases, test suites), as data: `repeat` times over, each repetition marked.
 * With `rerun`: the one more repetition a check with rerun_failed gets after failing (none for other checks).
 * A check whose planning throws gets none and fails in run().
 */
export function planCheckRuns(spec: CheckSpec, ctx: SandboxPlanContext, opts: { rerun?: boolean } = {}): CheckRunRequest[] {
  if (spec.kind === "judgement") return [];
  const parsed = parse(spec);
  if (!parsed.ok || !parsed.def.sandbox) return [];
  try {
    const once = parsed.def.sandbox(parsed.params, ctx);
    const k = repeatOf(parsed.params);
    const reruns = parsed.params.rerun_failed === true;
    // Each repetition's processes see which one they are (LOOPSMITH_REPETITION, from 1): a test may vary a seed by it.
    const mark = (repetition: number) => once.map((r) => ({ ...r, env: { ...r.env, LOOPSMITH_REPETITION: String(repetition + 1) }, repetition }));
    if (opts.rerun) return reruns ? mark(k) : [];
    if (once.length === 0 || (k === 1 && !reruns)) return once;
    return Array.from({ length: k }, (_, repetition) => mark(repetition)).flat();
  } catch {
    return [];
  }
}

/** Whether a check gets one more run after failing (its rerun_failed param). */
export function rerunsFailed(spec: CheckSpec): boolean {
  if (spec.kind === "judgement") return false;
  const parsed = parse(spec);
  return parsed.ok && parsed.def.sandbox !== undefined && parsed.params.rerun_failed === true;
}

export type CheckSpecValidation = { ok: true } | { ok: false; issues: { path: IssuePath; message: string }[] };

/**
 * Lets the API reject a client's check before a goal is queued, with paths relative to the check spec:
 * unknown ids, invalid params, checker files the goal does not carry.
 */
export function validateCheckSpec(spec: CheckSpec, goal: { checkerFiles: readonly string[] } = { checkerFiles: [] }): CheckSpecValidation {
  if (spec.kind === "judgement") {
    if (spec.hidden) return { ok: false, issues: [{ path: ["hidden"], message: "a judgement check is read by the inspector model, so it cannot be hidden" }] };
    return { ok: true };
  }
  const def = checkRegistry.get(spec.id);
  if (def === undefined) return { ok: false, issues: [{ path: ["id"], message: unknownIdMessage(spec.id) }] };
  const parsed = def.params.safeParse(spec.params);
  if (!parsed.success) return { ok: false, issues: parsed.error.issues.map((i) => ({ path: ["params", ...issuePath(i)], message: i.message })) };
  const missing = (def.checkerFiles?.(parsed.data) ?? []).filter((n) => !goal.checkerFiles.includes(n));
  if (missing.length > 0) {
    return {
      ok: false,
      issues: [{ path: ["params"], message: `names checker file${missing.length === 1 ? "" : "s"} ${listQuoted(missing)} that the goal's checker_files do not contain (${goal.checkerFiles.length ? listQuoted([...goal.checkerFiles]) : "none given"})` }],
    };
  }
  return { ok: true };
}

/** A check as a model may see it: hidden checks keep only their public params, never their material. */
export function publicCheck(spec: CheckSpec): { id: string; kind: string; description: string; hidden: boolean; params: Record<string, unknown> } {
  const { hidden } = visibilityOf(spec);
  if (!hidden) return { id: spec.id, kind: spec.kind, description: spec.description, hidden, params: spec.params };
  const parsed = parse(spec);
  // Stryker disable next-line ArrayDeclaration: equivalent in practice; an unknown check has no public params, and a filler name matches no real param
  const allowed = new Set(parsed.ok ? parsed.def.publicParams : []);
  const source = parsed.ok ? parsed.params : spec.params;
  const params = Object.fromEntries(Object.entries(source).filter(([k]) => allowed.has(k)));
  return { id: spec.id, kind: spec.kind, description: spec.description, hidden, params };
}
