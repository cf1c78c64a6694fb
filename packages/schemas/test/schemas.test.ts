// The shared schemas without services (issue 18): what POST /goals and the check specs accept and refuse,
// at their bounds; the defaults a goal gets; budgets against server maximums; the job catalog; and that
// every description and component name the schemas declare is the one the committed OpenAPI document shows.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import * as schemas from "../src/index";
import {
  approveBody,
  budgetConfigSchema,
  budgetProblems,
  checkSpec,
  createGoalBody,
  DEFAULT_STEP_RETRY,
  frozenCheck,
  goalBudget,
  goalInput,
  goalJobSchema,
  goalStepJob,
  idempotencyHeaders,
  inspectorOutput,
  isArtifactPath,
  listGoalsQuery,
  modelSpec,
  QUEUES,
  refineOutput,
  resolveBudgets,
  scriptedScript,
  selfTestSpec,
  stepRetryConfigSchema,
  storedBudgets,
  webhookJobSchema,
  scheduleJobSchema,
  webhookSpec,
} from "../src/index";

const issues = (schema: z.ZodType, value: unknown) => {
  const r = schema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`);
};
const ok = (schema: z.ZodType, value: unknown) => schema.safeParse(value).success;
const GOAL = { objective: "Summarise sales.csv" };
const UUID = "7d444840-9dc0-11d1-b245-5ffdce74fad2";

describe("createGoalBody", () => {
  it("fills in the defaults a goal runs with", () => {
    expect(createGoalBody.parse(GOAL)).toEqual({ objective: "Summarise sales.csv", checks: [], inputs: [], checker_files: [], deliverable: "result.json", feedback: "full", on_infeasible: "fail", max_attempts: 5, candidates: 1, execution_timeout_seconds: 60, language: "python" });
  });

  it("issue 27: on_infeasible is fail or ask, fail by default; anything else names the field", () => {
    expect(createGoalBody.parse({ ...GOAL, on_infeasible: "ask" }).on_infeasible).toBe("ask");
    expect(issues(createGoalBody, { ...GOAL, on_infeasible: "retry" })).toEqual([expect.stringMatching(/^on_infeasible: /)]);
    expect(issues(createGoalBody, { ...GOAL, on_infeasible: null })).toEqual([expect.stringMatching(/^on_infeasible: /)]);
  });

  it("issue 27: the inspector's and refiner's give-up is required in the schema a model is sent, and a reply without it is no give-up", () => {
    for (const schema of [inspectorOutput, refineOutput]) {
      const json = z.toJSONSchema(schema, { target: "draft-7", io: "input" }) as { required: string[] };
      expect(json.required).toContain("infeasible");
    }
    const answer = { verified: false, failing_checks: [], diagnosis: "d", fix_hint: "f" };
    expect(inspectorOutput.parse(answer).infeasible).toBeNull();
    expect(inspectorOutput.parse({ ...answer, infeasible: { reason: "the tests contradict the objective" } }).infeasible).toEqual({ reason: "the tests contradict the objective" });
    expect(ok(inspectorOutput, { ...answer, infeasible: { reason: "" } })).toBe(false);
    expect(ok(inspectorOutput, { ...answer, infeasible: "yes" })).toBe(false);
    // Scripts written before the give-up still parse, and give nothing up.
    expect(scriptedScript.parse({ plan: { objective: "o", approach: [], output_contract: "", checks: [] }, generate: { filename: "a.py", language: "python", source: "x", notes: "" }, inspect: [answer] }).inspect[0]?.infeasible).toBeUndefined();
  });

  it("trims the objective and bounds it", () => {
    expect(createGoalBody.parse({ objective: "  x  " }).objective).toBe("x");
    expect(ok(createGoalBody, { objective: "   " })).toBe(false);
    expect(ok(createGoalBody, { objective: "x".repeat(10_000) })).toBe(true);
    expect(ok(createGoalBody, { objective: "x".repeat(10_001) })).toBe(false);
    expect(ok(createGoalBody, { ...GOAL, success: "s".repeat(10_000) })).toBe(true);
    expect(ok(createGoalBody, { ...GOAL, success: "s".repeat(10_001) })).toBe(false);
  });

  it("refuses unknown fields", () => {
    expect(issues(createGoalBody, { ...GOAL, objectiv: "x" })).toEqual(['(root): Unrecognized key: "objectiv"']);
  });

  it("bounds attempts and the execution timeout at both ends", () => {
    for (const [v, good] of [[1, true], [20, true], [0, false], [21, false], [1.5, false]] as const) expect(ok(createGoalBody, { ...GOAL, max_attempts: v }), String(v)).toBe(good);
    for (const [v, good] of [[1, true], [600, true], [0, false], [601, false]] as const) expect(ok(createGoalBody, { ...GOAL, execution_timeout_seconds: v }), String(v)).toBe(good);
  });

  it("takes a deliverable path or null, never one outside the output directory", () => {
    expect(createGoalBody.parse({ ...GOAL, deliverable: null }).deliverable).toBeNull();
    expect(createGoalBody.parse({ ...GOAL, deliverable: "out/clean.csv" }).deliverable).toBe("out/clean.csv");
    expect(issues(createGoalBody, { ...GOAL, deliverable: "../etc/passwd" })).toEqual(['deliverable: a relative path under the output directory, e.g. "clean.csv"']);
  });

  it("bounds the number of checks, inputs and checker files", () => {
    const check = { id: "exits_clean" };
    expect(ok(createGoalBody, { ...GOAL, checks: Array(50).fill(check) })).toBe(true);
    expect(ok(createGoalBody, { ...GOAL, checks: Array(51).fill(check) })).toBe(false);
    const input = (i: number) => ({ name: `f${i}.csv`, text: "" });
    expect(ok(createGoalBody, { ...GOAL, inputs: Array.from({ length: 20 }, (_, i) => input(i)) })).toBe(true);
    expect(ok(createGoalBody, { ...GOAL, inputs: Array.from({ length: 21 }, (_, i) => input(i)) })).toBe(false);
    expect(ok(createGoalBody, { ...GOAL, checker_files: Array.from({ length: 50 }, (_, i) => input(i)) })).toBe(true);
    expect(ok(createGoalBody, { ...GOAL, checker_files: Array.from({ length: 51 }, (_, i) => input(i)) })).toBe(false);
  });

  it("feedback arms and approval thresholds", () => {
    expect(createGoalBody.parse({ ...GOAL, feedback: "retry_only" }).feedback).toBe("retry_only");
    expect(ok(createGoalBody, { ...GOAL, feedback: "none" })).toBe(false);
    expect(ok(createGoalBody, { ...GOAL, approval_threshold_usd: 0 })).toBe(true);
    expect(ok(createGoalBody, { ...GOAL, approval_threshold_usd: 1_000_000 })).toBe(true);
    expect(ok(createGoalBody, { ...GOAL, approval_threshold_usd: -0.01 })).toBe(false);
    expect(ok(createGoalBody, { ...GOAL, approval_threshold_usd: 1_000_000.01 })).toBe(false);
  });
});

describe("goal inputs and self-tests", () => {
  it("an input has a plain name and exactly one of text or content_base64", () => {
    expect(ok(goalInput, { name: "sales.csv", text: "a,b" })).toBe(true);
    expect(ok(goalInput, { name: "sales.csv", content_base64: "YQ==" })).toBe(true);
    expect(issues(goalInput, { name: "sales.csv" })).toEqual(["(root): give exactly one of text or content_base64"]);
    expect(issues(goalInput, { name: "sales.csv", text: "", content_base64: "" })).toEqual(["(root): give exactly one of text or content_base64"]);
    expect(ok(goalInput, { name: "sales.csv", content_base64: "not base64!" })).toBe(false);
    expect(issues(goalInput, { name: "../x", text: "" })).toEqual(["name: a plain file name: letters, digits, '.', '_', '-' (up to 128)"]);
    expect(ok(goalInput, { name: "a".repeat(128), text: "" })).toBe(true);
    expect(ok(goalInput, { name: "a".repeat(129), text: "" })).toBe(false);
    expect(ok(goalInput, { name: ".hidden", text: "" })).toBe(false);
    expect(ok(goalInput, { name: "a.csv", text: "", extra: 1 })).toBe(false);
  });

  it("a fixture is a program, or artifacts and/or stdout, never both", () => {
    const spec = (f: Record<string, unknown>) => ({ good: [{ name: "g", ...f }] });
    expect(selfTestSpec.parse({})).toEqual({ good: [], bad: [] });
    expect(ok(selfTestSpec, spec({ program: "print(1)" }))).toBe(true);
    expect(ok(selfTestSpec, spec({ stdout: "1" }))).toBe(true);
    expect(ok(selfTestSpec, spec({ artifacts: [{ name: "out/r.json", text: "{}" }] }))).toBe(true);
    expect(ok(selfTestSpec, spec({ artifacts: [], stdout: "" }))).toBe(true);
    expect(issues(selfTestSpec, spec({ program: "p", stdout: "1" }))).toEqual(["good.0: give a program, or artifacts and/or stdout, not both"]);
    expect(issues(selfTestSpec, spec({ program: "p", artifacts: [] }))).toEqual(["good.0: give a program, or artifacts and/or stdout, not both"]);
    expect(issues(selfTestSpec, spec({}))).toEqual(["good.0: give a program, or artifacts and/or stdout, not both"]);
    expect(issues(selfTestSpec, spec({ artifacts: [{ name: "../r.json", text: "" }] }))).toEqual(['good.0.artifacts.0.name: a relative path under the output directory, e.g. "clean.csv"']);
    expect(issues(selfTestSpec, spec({ artifacts: [{ name: "r.json" }] }))).toEqual(["good.0.artifacts.0: give exactly one of text or content_base64"]);
    expect(ok(selfTestSpec, spec({ artifacts: [{ name: "r.json", text: "", content_base64: "" }] }))).toBe(false);
    expect(ok(selfTestSpec, spec({ program: "" }))).toBe(false);
    expect(ok(selfTestSpec, { bad: Array.from({ length: 11 }, (_, i) => ({ name: `b${i}`, stdout: "" })) })).toBe(false);
    expect(ok(selfTestSpec, { bad: Array.from({ length: 10 }, (_, i) => ({ name: `b${i}`, stdout: "" })) })).toBe(true);
  });

  it("isArtifactPath: relative, plain segments, bounded", () => {
    expect(isArtifactPath("a/b/c.csv")).toBe(true);
    expect(isArtifactPath(Array(8).fill("d").join("/"))).toBe(true);
    expect(isArtifactPath(Array(9).fill("d").join("/"))).toBe(false);
    for (const p of ["", "/a", "a/", "a/../b", ".", "..", "a b", "x".repeat(129)]) expect(isArtifactPath(p), p).toBe(false);
    expect(isArtifactPath("x".repeat(128))).toBe(true);
    expect(isArtifactPath(Array(5).fill("y".repeat(102)).join("/"))).toBe(false);
    expect(isArtifactPath(Array(4).fill("y".repeat(127)).join("/"))).toBe(true);
  });
});

describe("checks and models", () => {
  it("a check spec: defaults, bounds, visibility", () => {
    expect(checkSpec.parse({ id: "exits_clean" })).toEqual({ id: "exits_clean", params: {}, kind: "deterministic", description: "" });
    expect(ok(checkSpec, { id: "" })).toBe(false);
    expect(ok(checkSpec, { id: "x".repeat(100) })).toBe(true);
    expect(ok(checkSpec, { id: "x".repeat(101) })).toBe(false);
    expect(ok(checkSpec, { id: "x", description: "d".repeat(2000) })).toBe(true);
    expect(ok(checkSpec, { id: "x", description: "d".repeat(2001) })).toBe(false);
    expect(ok(checkSpec, { id: "x", kind: "vibes" })).toBe(false);
    expect(ok(checkSpec, { id: "x", reveal: "all" })).toBe(false);
    expect(ok(checkSpec, { id: "x", hidden: true, reveal: "verdict" })).toBe(true);
    expect(ok(checkSpec, { id: "x", extra: 1 })).toBe(false);
    expect(frozenCheck.parse({ id: "x" })).toEqual({ id: "x", params: {}, kind: "deterministic", description: "", source: "client", hidden: false, reveal: "input" });
  });

  it("a model spec: scripted with a script, or a named provider with no credentials", () => {
    const script = { plan: { objective: "o", approach: [], output_contract: "c", checks: [] }, generate: { filename: "analysis.py", language: "python", source: "print(1)", notes: "" }, inspect: [{ verified: true, failing_checks: [], diagnosis: "", fix_hint: "" }] };
    const parsed = scriptedScript.safeParse(script);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(parsed.data!.refine).toEqual([]);
    expect(ok(scriptedScript, { ...script, inspect: [] })).toBe(false);
    expect(ok(modelSpec, { provider: "scripted", script })).toBe(true);
    expect(ok(modelSpec, { provider: "anthropic" })).toBe(true);
    expect(ok(modelSpec, { provider: "google", model: "m".repeat(200) })).toBe(true);
    expect(ok(modelSpec, { provider: "google", model: "m".repeat(201) })).toBe(false);
    expect(ok(modelSpec, { provider: "google", model: "" })).toBe(false);
    expect(ok(modelSpec, { provider: "openai-compatible", api_key: "sk-x" })).toBe(false);
    expect(issues(modelSpec, { provider: "local" })).toEqual([expect.stringMatching(/^provider: /)]);
    expect(ok(scriptedScript, { ...script, generate: { ...script.generate, filename: "../x.py" } })).toBe(false);
    expect(ok(scriptedScript, { ...script, generate: { ...script.generate, source: "" } })).toBe(false);
  });
});

describe("budgets", () => {
  const config = budgetConfigSchema.parse({});
  it("server defaults and maximums", () => {
    expect(config).toEqual({ DEFAULT_MAX_TOKENS: 500_000, LIMIT_MAX_TOKENS: 5_000_000, DEFAULT_MAX_COST_USD: 5, LIMIT_MAX_COST_USD: 500, DEFAULT_MAX_WALL_SECONDS: 3600, LIMIT_MAX_WALL_SECONDS: 86400 });
    expect(budgetConfigSchema.parse({ LIMIT_MAX_TOKENS: "7" }).LIMIT_MAX_TOKENS).toBe(7);
    expect(ok(budgetConfigSchema, { DEFAULT_MAX_COST_USD: "0" })).toBe(false);
    expect(ok(budgetConfigSchema, { DEFAULT_MAX_TOKENS: "0" })).toBe(false);
  });

  it("a goal's caps: bounds at both ends", () => {
    expect(ok(goalBudget, { max_tokens: 1, max_cost_usd: 0.01, max_wall_seconds: 1 })).toBe(true);
    expect(ok(goalBudget, { max_tokens: 0 })).toBe(false);
    expect(ok(goalBudget, { max_tokens: 100_000_000 })).toBe(true);
    expect(ok(goalBudget, { max_tokens: 100_000_001 })).toBe(false);
    expect(ok(goalBudget, { max_cost_usd: 0 })).toBe(false);
    expect(ok(goalBudget, { max_cost_usd: 1_000_001 })).toBe(false);
    expect(ok(goalBudget, { max_wall_seconds: 30 * 24 * 3600 })).toBe(true);
    expect(ok(goalBudget, { max_wall_seconds: 30 * 24 * 3600 + 1 })).toBe(false);
    expect(ok(goalBudget, { max_turns: 3 })).toBe(false);
  });

  it("caps above the server's maximums are problems with their paths, at the maximum they are not", () => {
    expect(budgetProblems({ max_tokens: 5_000_000, max_cost_usd: 500, max_wall_seconds: 86400 }, config)).toEqual([]);
    expect(budgetProblems({ max_tokens: 5_000_001, max_cost_usd: 500.01, max_wall_seconds: 86401 }, config)).toEqual([
      { path: "body.budget.max_tokens", message: "5000001 exceeds this server's maximum 5000000 (LIMIT_MAX_TOKENS)" },
      { path: "body.budget.max_cost_usd", message: "500.01 exceeds this server's maximum 500 (LIMIT_MAX_COST_USD)" },
      { path: "body.budget.max_wall_seconds", message: "86401 exceeds this server's maximum 86400 (LIMIT_MAX_WALL_SECONDS)" },
    ]);
    expect(budgetProblems({}, config)).toEqual([]);
  });

  it("resolveBudgets: the client's caps, then server defaults, then the tenant's approval policy", () => {
    expect(resolveBudgets({ max_attempts: 3 }, config, null)).toEqual({
      problems: [],
      budgets: { max_attempts: 3, execution_timeout_seconds: 60, max_tokens: 500_000, max_cost_usd: 5, max_wall_seconds: 3600, approval_threshold_usd: null },
    });
    const asked = resolveBudgets({ max_attempts: 2, execution_timeout_seconds: 9, budget: { max_tokens: 10, max_cost_usd: 1, max_wall_seconds: 60 }, approval_threshold_usd: 0.5 }, config, 7);
    expect(asked.budgets).toEqual({ max_attempts: 2, execution_timeout_seconds: 9, max_tokens: 10, max_cost_usd: 1, max_wall_seconds: 60, approval_threshold_usd: 0.5 });
    expect(resolveBudgets({ max_attempts: 1 }, config, 7).budgets.approval_threshold_usd).toBe(7);
    expect(resolveBudgets({ max_attempts: 1, approval_threshold_usd: 0 }, config, 7).budgets.approval_threshold_usd).toBe(0);
    expect(resolveBudgets({ max_attempts: 1, budget: { max_tokens: 6_000_000 } }, config, null).problems).toHaveLength(1);
  });

  it("storedBudgets: a stored goal's budgets, built-in defaults for goals stored before budgets existed", () => {
    expect(storedBudgets(null, 4)).toEqual({ max_attempts: 4, execution_timeout_seconds: 60, max_tokens: 500_000, max_cost_usd: 5, max_wall_seconds: 3600, approval_threshold_usd: null });
    const stored = { max_attempts: 2, execution_timeout_seconds: 9, max_tokens: 10, max_cost_usd: 1, max_wall_seconds: 60, approval_threshold_usd: 0 };
    expect(storedBudgets(stored, 4)).toEqual(stored);
  });
});

describe("the job catalog", () => {
  it("queue names and payloads", () => {
    expect(QUEUES).toEqual({ goals: "goals", webhooks: "webhooks", schedules: "schedules" });
    expect(ok(scheduleJobSchema, { scheduleId: UUID })).toBe(true);
    expect(ok(scheduleJobSchema, { scheduleId: "s" })).toBe(false);
    expect(ok(goalJobSchema, { goalId: UUID, version: 0 })).toBe(true);
    expect(ok(goalJobSchema, { goalId: UUID, version: -1 })).toBe(false);
    expect(ok(goalJobSchema, { goalId: UUID, version: 1.5 })).toBe(false);
    expect(ok(goalJobSchema, { goalId: "g1", version: 0 })).toBe(false);
    expect(ok(webhookJobSchema, { deliveryId: UUID })).toBe(true);
    expect(ok(webhookJobSchema, { deliveryId: "d" })).toBe(false);
  });

  it("one job id per goal version, retried with exponential backoff, delayed only when asked", () => {
    expect(goalStepJob({ goalId: "g", version: 3 })).toEqual([
      "step",
      { goalId: "g", version: 3 },
      { attempts: 5, backoff: { type: "exponential", delay: 2000 }, removeOnComplete: { age: 86400, count: 10_000 }, removeOnFail: { age: 604800 }, jobId: "g-v3" },
    ]);
    const [, , opts] = goalStepJob({ goalId: "g", version: 0 }, { attempts: 2, backoffMs: 10 }, 0);
    expect(opts).toMatchObject({ attempts: 2, backoff: { delay: 10 }, delay: 0, jobId: "g-v0" });
    expect(DEFAULT_STEP_RETRY).toEqual({ attempts: 5, backoffMs: 2000 });
  });

  it("step retry config: defaults and bounds", () => {
    expect(stepRetryConfigSchema.parse({})).toEqual({ STEP_ATTEMPTS: 5, STEP_BACKOFF_MS: 2000 });
    expect(stepRetryConfigSchema.parse({ STEP_ATTEMPTS: "50", STEP_BACKOFF_MS: "10" })).toEqual({ STEP_ATTEMPTS: 50, STEP_BACKOFF_MS: 10 });
    expect(ok(stepRetryConfigSchema, { STEP_ATTEMPTS: "0" })).toBe(false);
    expect(ok(stepRetryConfigSchema, { STEP_ATTEMPTS: "51" })).toBe(false);
    expect(ok(stepRetryConfigSchema, { STEP_BACKOFF_MS: "9" })).toBe(false);
  });
});

describe("request details", () => {
  it("webhooks: http(s) only, bounded", () => {
    expect(ok(webhookSpec, { url: "https://example.com/hook" })).toBe(true);
    expect(ok(webhookSpec, { url: "http://example.com/hook" })).toBe(true);
    expect(ok(webhookSpec, { url: "ftp://example.com/hook" })).toBe(false);
    expect(ok(webhookSpec, { url: `https://example.com/${"a".repeat(2048 - 20)}` })).toBe(true);
    expect(ok(webhookSpec, { url: `https://example.com/${"a".repeat(2048 - 19)}` })).toBe(false);
    expect(ok(webhookSpec, { url: "https://example.com", secret: "s" })).toBe(false);
  });

  it("listing goals: a page of 1 to 100, 20 by default", () => {
    expect(listGoalsQuery.parse({})).toEqual({ limit: 20 });
    expect(listGoalsQuery.parse({ limit: "100" }).limit).toBe(100);
    expect(ok(listGoalsQuery, { limit: "0" })).toBe(false);
    expect(ok(listGoalsQuery, { limit: "101" })).toBe(false);
    expect(ok(listGoalsQuery, { state: "verified" })).toBe(true);
    expect(ok(listGoalsQuery, { state: "done" })).toBe(false);
    expect(ok(listGoalsQuery, { cursor: "c".repeat(201) })).toBe(false);
  });

  it("idempotency keys: printable ASCII without spaces, 1 to 255 characters", () => {
    expect(ok(idempotencyHeaders, { "idempotency-key": "abc-123" })).toBe(true);
    expect(ok(idempotencyHeaders, {})).toBe(true);
    expect(issues(idempotencyHeaders, { "idempotency-key": "a b" })).toEqual(["idempotency-key: printable ASCII without spaces"]);
    expect(ok(idempotencyHeaders, { "idempotency-key": "k".repeat(255) })).toBe(true);
    expect(ok(idempotencyHeaders, { "idempotency-key": "k".repeat(256) })).toBe(false);
    expect(ok(idempotencyHeaders, { "idempotency-key": "" })).toBe(false);
  });

  it("approvals: an optional next threshold (null for none) and raised caps", () => {
    expect(ok(approveBody, {})).toBe(true);
    expect(ok(approveBody, { approval_threshold_usd: null })).toBe(true);
    expect(ok(approveBody, { approval_threshold_usd: 0, budget: { max_tokens: 10 } })).toBe(true);
    expect(ok(approveBody, { approval_threshold_usd: -1 })).toBe(false);
    expect(ok(approveBody, { approval_threshold_usd: 1_000_001 })).toBe(false);
    expect(ok(approveBody, { approve: true })).toBe(false);
  });
});

describe("the schemas as documented", () => {
  const doc = JSON.parse(readFileSync(new URL("../../../openapi/openapi.json", import.meta.url), "utf8")) as { components: { schemas: Record<string, unknown> } };
  const documented = new Set<string>();
  const collect = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(collect);
    else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        if (k === "description" && typeof x === "string") documented.add(x);
        collect(x);
      }
    }
  };
  collect(doc);
  // Request schemas give a default in words after the description (issue 28): the description is still there.
  for (const d of [...documented]) documented.add(d.replace(/ Default: .+\.$/, ""));
  const exported = Object.entries(schemas).filter((e): e is [string, z.ZodType] => e[1] instanceof z.ZodType);
  // Issue 28 (3): the document publishes only what its operations reference. No route sends or takes these.
  const UNPUBLISHED = ["CheckOutcome", "FrozenCheck"];
  const published = exported.filter(([, s]) => !UNPUBLISHED.includes(String(s.meta()?.id)));

  it("every description a schema declares is the one the committed OpenAPI document shows", () => {
    const declared = new Set<string>();
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (k === "description" && typeof x === "string") declared.add(x);
          walk(x);
        }
      }
    };
    for (const [, s] of published) for (const io of ["input", "output"] as const) walk(z.toJSONSchema(s, { io, unrepresentable: "any" }));
    expect(declared.size).toBeGreaterThan(50);
    const missing = [...declared].filter((d) => !documented.has(d));
    expect(missing).toEqual([]);
  });

  it("every named schema is a component of the OpenAPI document under its name", () => {
    const ids = exported.map(([, s]) => s.meta()?.id).filter((id): id is string => typeof id === "string");
    // At least these (a rename or a lost .meta() id would drop one from the document); more as routes grow.
    expect(ids).toEqual(expect.arrayContaining([
      "Approval", "Budgets", "CheckCatalogue", "CheckFinding", "CheckOutcome", "CheckSpec", "CreateGoal", "DeliveryAttempt", "Error", "FailureReport",
      "FrozenCheck", "GeneratedCode", "Goal", "GoalAccepted", "GoalBudget", "GoalInputFile", "GoalList", "GoalSummary", "Healthz", "Inspection",
      "ModelSpec", "Plan", "PlannedCheck", "Readyz", "Receipt", "ReceiptKeys", "RotatedWebhookSecret", "ScriptedModelScript", "SelfTest", "SelfTestFixture",
      "Webhook", "WebhookDelivery", "WebhookDeliveryList",
    ]));
    // A request-only schema is published as its input variant alone (`<id>Input`).
    for (const id of ids.filter((i) => !UNPUBLISHED.includes(i))) expect(doc.components.schemas[id] ?? doc.components.schemas[`${id}Input`], id).toBeDefined();
    // Once a route references one of these, it is published again and leaves the list.
    for (const id of UNPUBLISHED) expect(doc.components.schemas[id], id).toBeUndefined();
  });
});
