// A finished goal as a script (issue 15): its request body again, with the model turns it recorded turned
// into the scripted model's script, so that POST /goals replays it offline. Only the model's judgement is
// replayed: the programs run again in the sandbox and the checks judge them again, so a change in the
// image, the check library or the machine shows up as a different tape.
import { tapeString, type State } from "@loopsmith/machine";
import {
  generatedCode,
  GOAL_SCRIPT_FORMAT,
  inspection,
  planOutput,
  scriptedRefine,
  storedBudgets,
  type CreateGoalBody,
  type GeneratedCode,
  type GoalScript,
  type Inspection,
  type PlanOutput,
  type ScriptedScript,
} from "@loopsmith/schemas";

/** One model_calls row, as much of it as the export reads. */
export interface RecordedCall {
  state: string;
  attempt: number;
  provider: string;
  model: string;
  response: unknown;
  error: string | null;
  createdAt: Date;
}

export interface RecordedFile {
  name: string;
  content: Uint8Array;
}

/** The stored goal, as much of it as the export reads (rows of packages/db's Goal and its relations). */
export interface GoalRecord {
  id: string;
  objective: string;
  success: string | null;
  checks: unknown;
  deliverable: string | null;
  feedback: string;
  selfTest: unknown;
  maxAttempts: number;
  budgets: unknown;
  model: unknown;
  /** issue 14: the program's language (rows from before it: python). */
  language?: string;
  /** issue 27: what a model's give-up does (rows from before it: fail). */
  onInfeasible?: string;
  state: string;
  verified: boolean;
  failureReason: string | null;
  attempts: number;
  loopsmithVersion: string | null;
  /** Best-of-N: programs sampled per turn (rows from before it: 1). */
  candidates?: number;
  /** A schedule's pin the goal started from ({goal_id, code, plan}): its plan and program had no model call. */
  pinned?: unknown;
  createdAt: Date;
  finishedAt: Date | null;
  inputs: RecordedFile[];
  checkerFiles: RecordedFile[];
  transitions: { seq: number; fromState: string | null; toState: string; at: Date; detail: unknown }[];
  modelCalls: RecordedCall[];
}

/** States a goal may be exported from: it ran to an end of its own. */
export const EXPORTABLE_STATES = ["verified", "failed"] as const;

const PLACEHOLDER_INSPECT: Inspection = { verified: false, failing_checks: [], diagnosis: "(no inspection was recorded for this turn)", fix_hint: "" };
const placeholderCode = (why: string): GeneratedCode => ({
  filename: "analysis.py",
  language: "python",
  source: `raise SystemExit(${JSON.stringify(why)})\n`,
  notes: why,
  files: [],
});

/**
 * The answered turns, latest per (turn, attempt): a retried step may have asked more than once; the answer
 * the goal went on with is the last one stored.
 */
function answered(calls: RecordedCall[]): Map<string, RecordedCall> {
  const byKey = new Map<string, RecordedCall>();
  const sorted = [...calls].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
  for (const c of sorted) if (c.error === null && c.response !== null && c.response !== undefined) byKey.set(`${c.state}:${c.attempt}`, c);
  return byKey;
}

/**
 * The scripted model's script for the recorded turns. INSPECT and REFINE are asked once per attempt
 * (index = attempt - 1), so entry i of each list is the answer recorded at attempt i + 1. A turn with no
 * recorded answer gets a placeholder and is named in `gaps`.
 */
export function scriptFromCalls(
  calls: RecordedCall[],
  goal: { objective: string; attempts: number; pinned?: unknown; transitions?: GoalRecord["transitions"] },
): { script: ScriptedScript; gaps: string[] } {
  const turns = answered(calls);
  // A schedule's tick that started from the pinned program asked no planner and no generator: the pin's plan
  // and program are what those turns answered, and the replay gets them as the scripted model's answers.
  const pin = pinOf(goal.pinned);
  const gaps: string[] = [];
  const pick = <T>(key: string, parse: (v: unknown) => { success: true; data: T } | { success: false }): T | null => {
    const row = turns.get(key);
    if (!row) return null;
    const parsed = parse(row.response);
    return parsed.success ? parsed.data : null;
  };
  let plan: PlanOutput | null = pick("plan:0", (v) => planOutput.safeParse(v)) ?? pin?.plan ?? null;
  if (!plan) {
    gaps.push("plan");
    plan = { objective: goal.objective, approach: [], output_contract: "", checks: [] };
  }
  let generate: GeneratedCode | null = pick("generate:0", (v) => generatedCode.safeParse(v)) ?? pin?.code ?? null;
  if (!generate) {
    gaps.push("generate");
    generate = placeholderCode("no program was recorded for the generate turn");
  }
  const attempts = (turn: string) =>
    Math.max(0, ...[...turns.values()].filter((c) => c.state === turn).map((c) => c.attempt));
  // An INSPECT that asked no model (a pinned program that passed every check) stored its inspection on the tape.
  const onTape = (a: number): Inspection | null => {
    const row = goal.transitions?.find((t) => t.fromState === "inspect" && isObject(t.detail) && t.detail.attempt === a && t.detail.pinned === true);
    const parsed = inspection.safeParse(isObject(row?.detail) ? row.detail.inspection : undefined);
    return parsed.success ? parsed.data : null;
  };
  const inspected = Math.max(attempts("inspect"), ...(goal.transitions ?? []).filter((t) => t.fromState === "inspect" && isObject(t.detail) && t.detail.pinned === true).map((t) => Number((t.detail as Detail).attempt) || 0));
  const inspect: Inspection[] = [];
  for (let a = 1; a <= Math.max(1, inspected); a++) {
    const got = pick(`inspect:${a}`, (v) => inspection.safeParse(v)) ?? onTape(a);
    if (!got) gaps.push(`inspect[${a - 1}]`);
    inspect.push(got ?? PLACEHOLDER_INSPECT);
  }
  const refine: ScriptedScript["refine"] = [];
  for (let a = 1; a <= attempts("refine"); a++) {
    // With its give-up (issue 27), so that a refiner that gave up gives up again in the replay.
    const got = pick(`refine:${a}`, (v) => scriptedRefine.safeParse(v));
    if (!got) gaps.push(`refine[${a - 1}]`);
    refine.push(got ?? placeholderCode(`no program was recorded for refine turn ${a}`));
  }
  const sampled = candidatesOnTape(goal.transitions ?? []);
  // Best-of-N: the tape holds every candidate in order; the model calls of one turn cannot tell them apart.
  if (sampled.first.generate) generate = sampled.first.generate;
  sampled.first.refine.forEach((code, i) => {
    if (code && i < refine.length) refine[i] = code;
  });
  return { script: { plan, generate, inspect, refine, ...sampled.rest }, gaps };
}

/**
 * Best-of-N: every candidate's program is on the tape row that moved the goal to execute; the further
 * candidates (after the first, which the model calls above recorded) become the script's *_candidates.
 */
function candidatesOnTape(transitions: GoalRecord["transitions"]): {
  first: { generate: GeneratedCode | null; refine: (GeneratedCode | null)[] };
  rest: Pick<ScriptedScript, "generate_candidates" | "refine_candidates">;
} {
  const turns = (from: string) =>
    transitions
      .filter((t) => t.fromState === from && t.toState === "execute" && isObject(t.detail) && Array.isArray(t.detail.candidates))
      .map((t) => ((t.detail as Detail).candidates as unknown[]).map((c) => generatedCode.safeParse(c)).flatMap((r) => (r.success ? [r.data] : [])));
  const generate = turns("generate")[0] ?? [];
  const refine = turns("refine");
  return {
    first: { generate: generate[0] ?? null, refine: refine.map((r) => r[0] ?? null) },
    rest: {
      ...(generate.length > 1 ? { generate_candidates: generate.slice(1) } : {}),
      ...(refine.length > 0 ? { refine_candidates: refine.map((r) => r.slice(1)) } : {}),
    },
  };
}

/** The plan (the planner's own checks only, as the planner answered them) and the program of a schedule's pin. */
function pinOf(pinned: unknown): { plan: PlanOutput | null; code: GeneratedCode | null } | null {
  if (!isObject(pinned) || !isObject(pinned.plan)) return null;
  const checks = Array.isArray(pinned.plan.checks) ? pinned.plan.checks.filter((c) => isObject(c) && c.source === "planner") : [];
  const plan = planOutput.safeParse({
    ...pinned.plan,
    checks: checks.map((c) => ({ id: (c as Detail).id, params: (c as Detail).params, kind: (c as Detail).kind, description: (c as Detail).description })),
  });
  const code = generatedCode.safeParse(pinned.code);
  return { plan: plan.success ? plan.data : null, code: code.success ? code.data : null };
}

/** A file as the POST body takes it: text when the bytes are UTF-8 (readable fixtures), else base64. */
export function fileForBody(f: RecordedFile): { name: string; text: string } | { name: string; content_base64: string } {
  const buf = Buffer.from(f.content);
  const text = buf.toString("utf8");
  return Buffer.from(text, "utf8").equals(buf) ? { name: f.name, text } : { name: f.name, content_base64: buf.toString("base64") };
}

/** The export of a finished goal (the caller checks it is one of EXPORTABLE_STATES). */
export function exportGoal(goal: GoalRecord, now = new Date()): GoalScript {
  const { script, gaps } = scriptFromCalls(goal.modelCalls, goal);
  const budgets = storedBudgets(goal.budgets, goal.maxAttempts);
  const body: CreateGoalBody = {
    objective: goal.objective,
    ...(goal.success !== null ? { success: goal.success } : {}),
    // Stored with their visibility resolved: the replay hides exactly what the original hid.
    checks: goal.checks as CreateGoalBody["checks"],
    inputs: goal.inputs.map(fileForBody),
    checker_files: goal.checkerFiles.map(fileForBody),
    deliverable: goal.deliverable,
    // issue 14: the language carries over; a workspace does not (yet): the export holds no workspace.
    language: goal.language === "javascript" || goal.language === "typescript" ? goal.language : "python",
    ...(goal.selfTest !== null && goal.selfTest !== undefined ? { self_test: goal.selfTest as CreateGoalBody["self_test"] } : {}),
    feedback: goal.feedback === "retry_only" ? "retry_only" : "full",
    on_infeasible: goal.onInfeasible === "ask" ? "ask" : "fail",
    max_attempts: goal.maxAttempts,
    candidates: goal.candidates ?? 1,
    execution_timeout_seconds: budgets.execution_timeout_seconds,
    budget: { max_tokens: budgets.max_tokens, max_cost_usd: budgets.max_cost_usd, max_wall_seconds: budgets.max_wall_seconds },
    ...(budgets.approval_threshold_usd !== null ? { approval_threshold_usd: budgets.approval_threshold_usd } : {}),
    // No webhook: a replay must not notify the original's receiver.
    model: { provider: "scripted", script },
  };
  const { transitions, hidden_messages } = separateHidden(
    goal.transitions.map((t) => ({
      seq: t.seq,
      from: t.fromState as State | null,
      to: t.toState as State,
      at: t.at.toISOString(),
      detail: (t.detail ?? {}) as Record<string, unknown>,
    })),
    hiddenCheckIds(goal.checks),
  );
  const answeredBy = [...goal.modelCalls].reverse().find((c) => c.error === null) ?? goal.modelCalls.at(-1);
  const spec = goal.model as { provider?: string; model?: string } | null;
  return {
    format: GOAL_SCRIPT_FORMAT,
    goal_id: goal.id,
    exported_at: now.toISOString(),
    body,
    gaps,
    original: {
      state: goal.state,
      verified: goal.verified,
      failure_reason: goal.failureReason,
      attempts: goal.attempts,
      tape: tapeString(goal.transitions.map((t) => t.toState)),
      transitions,
      hidden_messages,
      provider: answeredBy?.provider ?? spec?.provider ?? "unknown",
      model: answeredBy?.model ?? spec?.model ?? null,
      loopsmith_version: goal.loopsmithVersion,
      wall_time_ms: goal.finishedAt ? goal.finishedAt.getTime() - goal.createdAt.getTime() : null,
    },
  };
}

/**
 * What stands on an export's tape where hidden material was: the text itself is in
 * `original.hidden_messages`, at the same JSON Pointer (relative to `original`).
 */
export const HIDDEN_MARKER = "(hidden: see original.hidden_messages)";

export interface HiddenMessage {
  /** JSON Pointer into the export's `original`, e.g. /transitions/4/detail/checks/3/message. */
  pointer: string;
  text: string;
}

type Detail = Record<string, unknown>;
const isObject = (v: unknown): v is Detail => typeof v === "object" && v !== null && !Array.isArray(v);

function hiddenCheckIds(checks: unknown): Set<string> {
  const ids = new Set<string>();
  if (Array.isArray(checks)) for (const c of checks) if (isObject(c) && c.hidden === true && typeof c.id === "string") ids.add(c.id);
  return ids;
}

/**
 * The tape with hidden material taken out (issue 27). The tape is the client's own view, so a hidden
 * check's message there names its expected values; the export keeps model-visible parts and checker
 * material apart, so those texts move to `hidden_messages` and a marker takes their place. Where they
 * stand: an INSPECT row's `checks[].message` of a check marked hidden, and a self-test probe's `problem`
 * (with the self-test's `message`, which repeats it) when the probe failed a check the goal hides (the
 * probe names check ids only, so an id shared with a visible check counts as hidden: fail closed).
 */
export function separateHidden<T extends { detail: Detail }>(transitions: T[], hiddenIds: Set<string>): { transitions: T[]; hidden_messages: HiddenMessage[] } {
  const hidden_messages: HiddenMessage[] = [];
  const take = (holder: Detail, key: string, pointer: string) => {
    const text = holder[key];
    if (typeof text !== "string" || text === HIDDEN_MARKER) return;
    hidden_messages.push({ pointer, text });
    holder[key] = HIDDEN_MARKER;
  };
  const out = transitions.map((t, i) => {
    const detail = structuredClone(t.detail);
    const at = `/transitions/${i}/detail`;
    if (Array.isArray(detail.checks))
      detail.checks.forEach((c, j) => {
        if (isObject(c) && c.hidden === true) take(c, "message", `${at}/checks/${j}/message`);
      });
    const selfTest = detail.self_test;
    if (isObject(selfTest) && Array.isArray(selfTest.probes)) {
      let any = false;
      selfTest.probes.forEach((p, k) => {
        if (!isObject(p) || !Array.isArray(p.failing_checks) || !p.failing_checks.some((id) => hiddenIds.has(String(id)))) return;
        if (typeof p.problem === "string") any = true;
        take(p, "problem", `${at}/self_test/probes/${k}/problem`);
      });
      if (any) take(selfTest, "message", `${at}/self_test/message`);
    }
    return { ...t, detail };
  });
  return { transitions: out, hidden_messages };
}

/** An export's `original` with its hidden messages back in place (what the goal's owner saw on the tape). */
export function restoreHidden<T extends { transitions: { detail: Detail }[]; hidden_messages?: HiddenMessage[] }>(original: T): T {
  if (!original.hidden_messages?.length) return original;
  const copy = structuredClone(original);
  for (const { pointer, text } of original.hidden_messages) {
    const keys = pointer.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = keys.pop();
    let holder: unknown = copy;
    for (const k of keys) holder = isObject(holder) || Array.isArray(holder) ? (holder as Record<string, unknown>)[k] : undefined;
    // Only a marker is replaced: a pointer that lands elsewhere (an edited export) changes nothing.
    if (last !== undefined && (isObject(holder) || Array.isArray(holder)) && (holder as Record<string, unknown>)[last] === HIDDEN_MARKER)
      (holder as Record<string, unknown>)[last] = text;
  }
  return copy;
}
