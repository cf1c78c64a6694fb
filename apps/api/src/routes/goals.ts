import { createHash } from "node:crypto";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError } from "@loopsmith/core";
import { goalsOf, UUID } from "@loopsmith/db";
import type { FailureReason, State } from "@loopsmith/machine";
import { defaultModelName, resolveModelSpec, type ModelConfig } from "@loopsmith/models";
import {
  createGoalBody,
  createGoalResponse,
  errorBody,
  goalIdParams,
  goalList,
  goalView,
  idempotencyHeaders,
  listGoalsQuery,
  MAX_CHECKER_FILES_TOTAL_BYTES,
  MAX_INPUTS_TOTAL_BYTES,
  MAX_WORKSPACE_BYTES,
  MAX_WORKSPACE_ENTRIES,
  RESULT_FILE,
  resolveBudgets,
  WORKSPACE_PATCH,
  type CreateGoalBody,
  type GoalSummary,
  type ModelSpec,
} from "@loopsmith/schemas";
import { knownCheckIds, listChecks, packWorkspace, unpackWorkspace, validateCheckSpec, visibilityOf } from "@loopsmith/verifier";
import { checkWebhookUrl } from "@loopsmith/webhooks";
import { tenantOf } from "../auth";
import { DEFAULT_LIMITS } from "../config";
import type { Services } from "../services";

export function invalid(details: { path: string; message: string }[]): LoopSmithError {
  return new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", details);
}

/** Decodes a list of files, reporting duplicate names and a total over `limit`. */
export function decodeFiles(list: CreateGoalBody["inputs"], field: string, limit: number, problems: { path: string; message: string }[]) {
  const seen = new Set<string>();
  let total = 0;
  const files = list.map((f, i) => {
    if (seen.has(f.name)) problems.push({ path: `body.${field}.${i}.name`, message: `duplicate name "${f.name}"` });
    seen.add(f.name);
    const content = f.text !== undefined ? Buffer.from(f.text, "utf8") : Buffer.from(f.content_base64 ?? "", "base64");
    total += content.length;
    return { name: f.name, content, sha256: createHash("sha256").update(content).digest("hex") };
  });
  if (total > limit) problems.push({ path: `body.${field}`, message: `${field} total ${total} bytes; the limit is ${limit}` });
  return files;
}

/** Checks the body's cross-field rules zod cannot express, decodes the files and resolves each check's visibility. */
function prepare(body: CreateGoalBody, models: ModelConfig) {
  const problems: { path: string; message: string }[] = [];
  const inputs = decodeFiles(body.inputs, "inputs", MAX_INPUTS_TOTAL_BYTES, problems);
  const checkerFiles = decodeFiles(body.checker_files, "checker_files", MAX_CHECKER_FILES_TOTAL_BYTES, problems);
  const checkerNames = checkerFiles.map((f) => f.name);
  body.checks.forEach((c, i) => {
    const v = validateCheckSpec(c, { checkerFiles: checkerNames });
    if (!v.ok) for (const issue of v.issues) problems.push({ path: ["body", "checks", i, ...issue.path].join("."), message: issue.message });
  });
  if (body.deliverable === null && !body.checks.some((c) => c.kind !== "judgement" && runsCode(c.id))) {
    problems.push({
      path: "body.deliverable",
      message: `a goal whose deliverable is the program itself needs a check that runs the program's code (${knownCheckIds().filter(runsCode).join(", ")}); without one, "done" would only mean "it exits 0"`,
    });
  }
  const codeChecks = body.checks.some((c) => c.kind !== "judgement" && runsCode(c.id));
  if (codeChecks) {
    for (const [kind, list] of [["good", body.self_test?.good ?? []], ["bad", body.self_test?.bad ?? []]] as const) {
      list.forEach((f, i) => {
        if (f.program === undefined) problems.push({ path: `body.self_test.${kind}.${i}`, message: "this goal's checks run the program's code (cases, test_suite): a fixture must be a program" });
      });
    }
  }
  if (problems.length) throw invalid(problems);
  // Stored resolved, so that what the client sees and what the runner applies can never differ.
  const checks = body.checks.map((c) => ({ ...c, ...visibilityOf(c) }));

  let model: ModelSpec;
  try {
    model = resolveModelSpec(body.model, models);
  } catch (e) {
    if (e instanceof LoopSmithError) {
      const path = (e.details as { path?: string }[] | undefined)?.[0]?.path ?? "model.provider";
      throw new LoopSmithError(e.code, e.message, [{ path: `body.${path}`, message: e.message }]);
    }
    throw e;
  }
  // Pin the model name now, so the tape says which model ran even if the server default changes later.
  if (model.provider !== "scripted" && !model.model) model = { ...model, model: defaultModelName(model.provider, models) };
  return { inputs, checkerFiles, checks, model };
}

/**
 * issue 14: the workspace archive, unpacked once here. A refusal names the entry (as the archive spells
 * it) with a stable code and the field path; nothing of a refused archive is stored.
 */
async function prepareWorkspace(spec: CreateGoalBody["workspace"]) {
  if (spec === undefined) return null;
  const res = await unpackWorkspace(Buffer.from(spec.archive_base64, "base64"), { maxBytes: MAX_WORKSPACE_BYTES, maxEntries: MAX_WORKSPACE_ENTRIES });
  if (!res.ok) {
    const message = `workspace entry ${JSON.stringify(res.entry)}: ${res.message}`;
    throw new LoopSmithError("LS_ERR_WORKSPACE_ARCHIVE", `The workspace archive was refused: ${message}.`, [{ path: "body.workspace.archive_base64", entry: res.entry, message }]);
  }
  const archive = await packWorkspace(res.files);
  return {
    archive,
    files: res.files.map((f) => ({ path: f.path, size: f.content.length, sha256: createHash("sha256").update(f.content).digest("hex") })),
    locked: spec.locked,
    sha256: createHash("sha256").update(archive).digest("hex"),
  };
}

function runsCode(id: string): boolean {
  return listChecks().some((c) => c.id === id && c.runsCode);
}

/**
 * Everything POST /goals checks and resolves in a goal body before storing it (POST /schedules too, for
 * its template): the cross-field rules, the files, the workspace, the budgets and the webhook URL.
 */
export async function prepareGoalBody(
  body: CreateGoalBody,
  deps: Pick<Services, "models" | "budgets" | "webhooks">,
  tenant: { approvalThresholdUsd: number | null },
  log: { info: (obj: object, msg: string) => void },
) {
  const { inputs, checkerFiles, checks, model } = prepare(body, deps.models);
  const workspace = await prepareWorkspace(body.workspace);
  const { budgets, problems } = resolveBudgets(body, deps.budgets, tenant.approvalThresholdUsd);
  if (problems.length) throw invalid(problems);
  if (body.webhook) {
    const check = await checkWebhookUrl(body.webhook.url, {
      allowCidrs: deps.webhooks.WEBHOOK_ALLOW_CIDRS,
      lookupTimeoutMs: deps.webhooks.WEBHOOK_DNS_TIMEOUT_MS,
    });
    // What DNS said stays in the server's log; the client gets the reason without it.
    if (!check.ok && check.detail) log.info({ detail: check.detail }, "webhook URL refused");
    if (!check.ok) throw new LoopSmithError("LS_ERR_WEBHOOK_URL", `The webhook URL is not allowed: ${check.reason}.`, [{ path: "body.webhook.url", message: check.reason }]);
  }
  return { inputs, checkerFiles, checks, model, workspace, budgets };
}

export const goalRoutes: FastifyPluginAsyncZod<{ deps: () => Services }> = async (app, opts) => {
  app.post(
    "/goals",
    {
      schema: {
        operationId: "createGoal",
        summary: "Submit a goal; it runs asynchronously",
        description: "With an Idempotency-Key, a retry with the same body returns the same goal (Idempotent-Replayed: true).",
        tags: ["goals"],
        headers: idempotencyHeaders,
        body: createGoalBody,
        response: { 202: createGoalResponse, 400: errorBody, 401: errorBody, 408: errorBody, 409: errorBody, 413: errorBody, 415: errorBody, 429: errorBody, 503: errorBody },
        "x-responses": {
          202: {
            description: "Accepted: the goal is queued (or, with an Idempotency-Key seen before, the goal that key created).",
            headers: {
              location: { description: "/goals/{id}: poll it, or follow /goals/{id}/events." },
              "idempotent-replayed": { description: '"true" when this answers a retry with an Idempotency-Key already used with the same body (no new goal).', schema: { type: "string", enum: ["true"] } },
            },
          },
        },
      },
    },
    async (req, reply) => {
      const deps = opts.deps();
      const tenant = tenantOf(req);
      const goals = goalsOf(deps.prisma, tenant.id);
      const body = req.body;
      const key = req.headers["idempotency-key"];
      // Only a retry with the same key compares bodies: without a key there is nothing to hash.
      const requestHash = key ? createHash("sha256").update(stableJson(body)).digest("hex") : null;
      const accepted = (id: string, replayed: boolean) => {
        const statusUrl = `/goals/${id}`;
        if (replayed) reply.header("idempotent-replayed", "true");
        return reply.status(202).header("location", statusUrl).send({ id, status_url: statusUrl, state: "plan" });
      };
      const replay = async () => {
        if (!key) return null;
        const prior = await goals.byIdempotencyKey(key);
        if (!prior) return null;
        if (prior.requestHash !== requestHash)
          throw new LoopSmithError("LS_ERR_IDEMPOTENCY_CONFLICT", undefined, [{ path: "headers.idempotency-key", message: `already used for goal ${prior.id} with a different body` }]);
        return prior.id;
      };
      const replayed = await replay();
      if (replayed) return accepted(replayed, true);

      const { inputs, checkerFiles, checks, model, workspace, budgets } = await prepareGoalBody(body, deps, tenant, req.log);
      // The tenant's cap on goals that have not ended (TENANT_MAX_OPEN_GOALS), counted by the insert itself;
      // replays of an accepted goal are answered before this and never refused.
      const openLimit = (deps.limits ?? DEFAULT_LIMITS).TENANT_MAX_OPEN_GOALS;
      let goal: { id: string; version: number };
      try {
        goal = await goals.create({
          idempotencyKey: key ?? null,
          requestHash,
          webhook: body.webhook ?? null,
          queuePrefix: deps.queuePrefix,
          objective: body.objective,
          success: body.success ?? null,
          checks,
          inputs,
          checkerFiles,
          // A workspace goal delivers its patch unless the client named another deliverable.
          deliverable: workspace && body.deliverable === RESULT_FILE ? WORKSPACE_PATCH : body.deliverable,
          language: body.language,
          workspace,
          feedback: body.feedback,
          onInfeasible: body.on_infeasible,
          selfTest: body.self_test ?? null,
          maxAttempts: body.max_attempts,
          candidates: body.candidates,
          budgets,
          model,
          loopsmithVersion: deps.loopsmithVersion,
        }, openLimit > 0 ? { limit: openLimit } : undefined);
      } catch (e) {
        // Two requests with the same key raced: the other one created the goal.
        if ((e as { code?: string }).code === "P2002" && key) {
          const id = await replay();
          if (id) return accepted(id, true);
        }
        throw e;
      }
      try {
        await deps.enqueue({ goalId: goal.id, version: goal.version });
      } catch (err) {
        // A goal nobody will run must not look accepted: remove it and tell the client to retry.
        req.log.error({ err, goalId: goal.id }, "enqueue failed; goal withdrawn");
        await deps.prisma.goal.delete({ where: { id: goal.id } }).catch(() => undefined);
        throw new LoopSmithError("LS_ERR_NOT_READY", "The job queue is unavailable; the goal was not accepted. Retry later.");
      }
      return accepted(goal.id, false);
    },
  );

  app.get(
    "/goals",
    {
      schema: {
        operationId: "listGoals",
        summary: "This tenant's goals, newest first",
        tags: ["goals"],
        querystring: listGoalsQuery,
        response: { 200: goalList, 400: errorBody, 401: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const tenant = tenantOf(req);
      const { state, limit, cursor, q } = req.query;
      const after = cursor ? decodeCursor(cursor) : null;
      const rows = await goalsOf(opts.deps().prisma, tenant.id).list({ state, limit, before: after ?? undefined, search: q });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return {
        goals: page.map(goalSummaryOf),
        next_cursor: rows.length > limit && last ? encodeCursor(last.createdAt, last.id) : null,
      };
    },
  );

  app.get(
    "/goals/:id",
    {
      schema: {
        operationId: "getGoal",
        summary: "A goal: state, tape, plan, checks, executions, report and cost",
        tags: ["goals"],
        params: goalIdParams,
        response: { 200: goalView, 401: errorBody, 404: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const view = await goalsOf(opts.deps().prisma, tenantOf(req).id).view(req.params.id);
      if (!view) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${req.params.id}.`);
      return view;
    },
  );
};

/** A goal as GET /goals lists it (GET /schedules/:id/goals adds to it). */
export function goalSummaryOf(g: Awaited<ReturnType<ReturnType<typeof goalsOf>["list"]>>[number]): GoalSummary {
  return {
    id: g.id,
    objective: g.objective,
    state: g.state as State,
    verified: g.verified,
    failure_reason: g.failureReason as FailureReason | null,
    attempts: g.attempts,
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
    finished_at: g.finishedAt?.toISOString() ?? null,
    cost_usd: g.costUsd,
  };
}

/** JSON with object keys sorted, so that the same body in another key order hashes the same. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (v && typeof v === "object")
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  return JSON.stringify(v);
}

function encodeCursor(at: Date, id: string): string {
  return Buffer.from(`${at.toISOString()}|${id}`, "utf8").toString("base64url");
}

function decodeCursor(cursor: string): { at: Date; id: string } {
  const [iso, id] = Buffer.from(cursor, "base64url").toString("utf8").split("|");
  const at = new Date(iso ?? "");
  if (!id || !UUID.test(id) || Number.isNaN(at.getTime()))
    throw invalid([{ path: "querystring.cursor", message: "not a cursor this API returned" }]);
  return { at, id };
}
