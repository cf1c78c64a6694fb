// What a client may do to a running goal: cancel it, and answer an approval request.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError } from "@loopsmith/core";
import { goalsOf } from "@loopsmith/db";
import { isState } from "@loopsmith/machine";
import { approveBody, budgetProblems, errorBody, goalIdParams, goalView, storedBudgets } from "@loopsmith/schemas";
import { tenantOf } from "../auth";
import { moveGoal, stateBefore } from "../moves";
import type { Services } from "../services";

const errors = { 401: errorBody, 404: errorBody, 409: errorBody, 429: errorBody };

export const actionRoutes: FastifyPluginAsyncZod<{ deps: () => Services }> = async (app, opts) => {
  const view = async (tenantId: string, id: string) => {
    const v = await goalsOf(opts.deps().prisma, tenantId).view(id);
    if (!v) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${id}.`);
    return v;
  };

  app.post(
    "/goals/:id/cancel",
    {
      schema: {
        operationId: "cancelGoal",
        summary: "Cancel a goal",
        description:
          "Ends the goal in `cancelled` at once (a tape row). A step in flight is abandoned: its container is killed and its result discarded. 409 when the goal already ended.",
        tags: ["goals"],
        params: goalIdParams,
        response: { 200: goalView, ...errors },
      },
    },
    async (req) => {
      const tenant = tenantOf(req);
      await moveGoal(opts.deps(), { tenantId: tenant.id, id: req.params.id }, () => ({
        event: { type: "CANCELLED" },
        detail: { by: "client", api_key_tenant: tenant.id },
      }), req.log);
      return view(tenant.id, req.params.id);
    },
  );

  app.post(
    "/goals/:id/approve",
    {
      schema: {
        operationId: "approveGoal",
        summary: "Approve a goal waiting in awaiting_approval",
        description:
          "Resumes the goal in the state it was waiting in. Optionally sets the next approval threshold and raises budget caps (server maximums apply).",
        tags: ["goals"],
        params: goalIdParams,
        body: approveBody.nullish(),
        response: { 200: goalView, 400: errorBody, ...errors },
      },
    },
    async (req) => {
      const tenant = tenantOf(req);
      const s = opts.deps();
      const body = req.body ?? {};
      await moveGoal(s, { tenantId: tenant.id, id: req.params.id }, async (goal) => {
        const resume = await stateBefore(s, goal);
        if (!isState(resume)) throw new LoopSmithError("LS_ERR_GOAL_STATE", `cannot resume ${resume}`);
        const current = storedBudgets(goal.budgets, goal.maxAttempts);
        const b = body.budget ?? {};
        const problems = budgetProblems(b, s.budgets);
        if (problems.length) throw new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", problems);
        const budgets = {
          ...current,
          ...b,
          approval_threshold_usd: body.approval_threshold_usd ?? null,
        };
        return { event: { type: "APPROVED", resume }, detail: { by: "client", budgets }, budgets };
      }, req.log);
      return view(tenant.id, req.params.id);
    },
  );

  app.post(
    "/goals/:id/reject",
    {
      schema: {
        operationId: "rejectGoal",
        summary: "Reject a goal waiting in awaiting_approval",
        description: "Ends it in `failed` with reason `rejected` and a failure report.",
        tags: ["goals"],
        params: goalIdParams,
        response: { 200: goalView, ...errors },
      },
    },
    async (req) => {
      const tenant = tenantOf(req);
      await moveGoal(opts.deps(), { tenantId: tenant.id, id: req.params.id }, () => ({
        event: { type: "REJECTED" },
        detail: { by: "client" },
        failureMessage: "The client rejected the spending request.",
      }), req.log);
      return view(tenant.id, req.params.id);
    },
  );
};
