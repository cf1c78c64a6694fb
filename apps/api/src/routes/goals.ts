import { createHash } from "node:crypto";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError } from "@loopsmith/core";
import { createGoal, type PrismaClient } from "@loopsmith/db";
import { tapeString } from "@loopsmith/machine";
import { resolveModelSpec, type ModelConfig } from "@loopsmith/models";
import {
  createGoalBody,
  createGoalResponse,
  errorBody,
  goalIdParams,
  goalView,
  inspection,
  MAX_INPUTS_TOTAL_BYTES,
  RESULT_FILE,
  type CreateGoalBody,
  type GoalJob,
  type GoalView,
  type ModelSpec,
} from "@loopsmith/schemas";
import { validateCheckSpec } from "@loopsmith/verifier";

export interface GoalDeps {
  prisma: PrismaClient;
  /** Schedules the goal's first step. */
  enqueue: (job: GoalJob) => Promise<void>;
  models: ModelConfig;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TAIL = 2000;

function invalid(details: { path: string; message: string }[]): LoopSmithError {
  return new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", details);
}

/** Checks the body's cross-field rules zod cannot express, and decodes the inputs. */
function prepare(body: CreateGoalBody, models: ModelConfig) {
  const problems: { path: string; message: string }[] = [];
  body.checks.forEach((c, i) => {
    const v = validateCheckSpec(c);
    if (!v.ok) for (const issue of v.issues) problems.push({ path: ["body", "checks", i, ...issue.path].join("."), message: issue.message });
  });
  const seen = new Set<string>();
  let total = 0;
  const inputs = body.inputs.map((f, i) => {
    if (seen.has(f.name)) problems.push({ path: `body.inputs.${i}.name`, message: `duplicate input name "${f.name}"` });
    seen.add(f.name);
    const content = f.text !== undefined ? Buffer.from(f.text, "utf8") : Buffer.from(f.content_base64 ?? "", "base64");
    total += content.length;
    return { name: f.name, content, sha256: createHash("sha256").update(content).digest("hex") };
  });
  if (total > MAX_INPUTS_TOTAL_BYTES)
    problems.push({ path: "body.inputs", message: `inputs total ${total} bytes; the limit is ${MAX_INPUTS_TOTAL_BYTES}` });
  if (problems.length) throw invalid(problems);

  let model: ModelSpec;
  try {
    model = resolveModelSpec(body.model, models);
  } catch (e) {
    if (e instanceof LoopSmithError) throw new LoopSmithError(e.code, e.message, [{ path: "body.model.provider", message: e.message }]);
    throw e;
  }
  // Pin the model name now, so the tape says which model ran even if the server default changes later.
  if (model.provider !== "scripted" && !model.model) model = { ...model, model: defaultModelName(model.provider, models) };
  return { inputs, model };
}

function defaultModelName(provider: Exclude<ModelSpec["provider"], "scripted">, c: ModelConfig): string | undefined {
  if (provider === "openai-compatible") return c.OPENAI_COMPATIBLE_MODEL;
  return provider === "anthropic" ? c.ANTHROPIC_MODEL : c.GOOGLE_MODEL;
}

export const goalRoutes: FastifyPluginAsyncZod<{ deps: () => GoalDeps }> = async (app, opts) => {
  app.post(
    "/goals",
    {
      schema: {
        summary: "Submit a goal; it runs asynchronously",
        tags: ["goals"],
        body: createGoalBody,
        response: { 202: createGoalResponse, 400: errorBody, 503: errorBody },
      },
    },
    async (req, reply) => {
      const deps = opts.deps();
      const body = req.body;
      const { inputs, model } = prepare(body, deps.models);
      const goal = await createGoal(deps.prisma, {
        objective: body.objective,
        success: body.success ?? null,
        checks: body.checks,
        inputs,
        maxAttempts: body.max_attempts,
        budgets: { max_attempts: body.max_attempts, execution_timeout_seconds: body.execution_timeout_seconds },
        model,
      });
      try {
        await deps.enqueue({ goalId: goal.id, version: goal.version });
      } catch (err) {
        // A goal nobody will run must not look accepted: remove it and tell the client to retry.
        req.log.error({ err, goalId: goal.id }, "enqueue failed; goal withdrawn");
        await deps.prisma.goal.delete({ where: { id: goal.id } }).catch(() => undefined);
        throw new LoopSmithError("LS_ERR_NOT_READY", "The job queue is unavailable; the goal was not accepted. Retry later.");
      }
      const statusUrl = `/goals/${goal.id}`;
      return reply.status(202).header("location", statusUrl).send({ id: goal.id, status_url: statusUrl, state: "plan" });
    },
  );

  app.get(
    "/goals/:id",
    {
      schema: {
        summary: "A goal: state, tape, plan, checks, executions, report and cost",
        tags: ["goals"],
        params: goalIdParams,
        response: { 200: goalView, 404: errorBody },
      },
    },
    async (req) => {
      const view = UUID.test(req.params.id) ? await loadGoalView(opts.deps().prisma, req.params.id) : null;
      if (!view) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${req.params.id}.`);
      return view;
    },
  );
};

export async function loadGoalView(prisma: PrismaClient, id: string): Promise<GoalView | null> {
  const goal = await prisma.goal.findUnique({
    where: { id },
    include: {
      plan: true,
      transitions: { orderBy: { seq: "asc" } },
      executions: { orderBy: { attempt: "asc" } },
    },
  });
  if (!goal) return null;
  const [calls, results, verifiedArtifact] = await Promise.all([
    prisma.modelCall.aggregate({
      where: { goalId: id },
      _count: { _all: true },
      _sum: { tokensIn: true, tokensOut: true, latencyMs: true },
    }),
    prisma.checkResult.findMany({ where: { goalId: id }, orderBy: [{ attempt: "asc" }, { createdAt: "asc" }] }),
    goal.verified
      ? prisma.artifact.findFirst({ where: { goalId: id, name: RESULT_FILE, execution: { attempt: goal.attempts } } })
      : null,
  ]);

  type Spec = { id: string; kind: "deterministic" | "judgement"; params: Record<string, unknown>; description: string; source?: string };
  const specs = ((goal.plan?.checks ?? goal.checks) as Spec[]).map((c) => ({ ...c, source: c.source ?? "client" }));
  // A check's latest result: same id, and its effective params (defaults filled in) agree with every
  // param the spec gave. Ids may repeat with different params, so the id alone is not enough.
  const latestFor = (c: Spec) => {
    for (let i = results.length - 1; i >= 0; i--) {
      const r = results[i]!;
      const effective = (r.params ?? {}) as Record<string, unknown>;
      if (r.checkId !== c.id) continue;
      if (Object.entries(c.params).every(([k, v]) => JSON.stringify(effective[k]) === JSON.stringify(v)))
        return { attempt: r.attempt, passed: r.passed, message: r.message };
    }
    return null;
  };
  const lastInspection = [...goal.transitions]
    .reverse()
    .map((t) => inspection.safeParse((t.detail as { inspection?: unknown }).inspection))
    .find((p) => p.success)?.data;
  // Always set: POST /goals stores the resolved spec, with the model name pinned.
  const spec = goal.model as ModelSpec;
  const now = Date.now();

  return {
    id: goal.id,
    objective: goal.objective,
    success: goal.success,
    state: goal.state,
    verified: goal.verified,
    failure_reason: goal.failureReason,
    attempts: goal.attempts,
    max_attempts: goal.maxAttempts,
    model: spec.provider === "scripted" ? { provider: "scripted", model: "scripted" } : { provider: spec.provider, model: spec.model ?? null },
    inputs: goal.inputs as GoalView["inputs"],
    tape: tapeString(goal.transitions.map((t) => t.toState)),
    transitions: goal.transitions.map((t) => ({
      seq: t.seq,
      from: t.fromState,
      to: t.toState,
      at: t.at.toISOString(),
      detail: t.detail as Record<string, unknown>,
    })),
    plan: goal.plan
      ? { objective: goal.plan.objective, approach: goal.plan.approach as string[], output_contract: goal.plan.outputContract }
      : null,
    checks: specs.map((c) => ({
      id: c.id,
      kind: c.kind,
      params: c.params,
      description: c.description,
      source: c.source as "baseline" | "client" | "planner",
      latest: latestFor(c),
    })),
    executions: goal.executions.map((e) => ({
      attempt: e.attempt,
      exit_code: e.exitCode,
      duration_ms: e.durationMs,
      timed_out: e.timedOut,
      oom_killed: e.oomKilled,
      stderr_tail: e.stderr.slice(-TAIL),
      stdout_tail: e.stdout.slice(-TAIL),
      artifacts: e.artifacts as { name: string; size: number; sha256: string }[],
      image_id: e.imageId,
    })),
    last_inspection: lastInspection ?? null,
    // Parsed from the stored bytes rather than the JSONB copy, which reorders keys.
    report: verifiedArtifact ? (JSON.parse(Buffer.from(verifiedArtifact.content).toString("utf8")) as unknown) : goal.verified ? goal.report : null,
    cost: {
      model_calls: calls._count._all,
      tokens_in: calls._sum.tokensIn ?? 0,
      tokens_out: calls._sum.tokensOut ?? 0,
      model_latency_ms: calls._sum.latencyMs ?? 0,
      sandbox_ms: goal.executions.reduce((s, e) => s + e.durationMs, 0),
      wall_time_ms: (goal.finishedAt?.getTime() ?? now) - goal.createdAt.getTime(),
    },
    created_at: goal.createdAt.toISOString(),
    updated_at: goal.updatedAt.toISOString(),
    finished_at: goal.finishedAt?.toISOString() ?? null,
  };
}
