// What a client may do to a running goal: cancel it, and answer an approval request.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError } from "@loopsmith/core";
import { giveUpOf, goalsOf, type Goal } from "@loopsmith/db";
import { isState } from "@loopsmith/machine";
import { approveBody, budgetProblems, errorBody, goalIdParams, goalView, storedBudgets } from "@loopsmith/schemas";
import { tenantOf } from "../auth";
import { moveGoal, stateBefore } from "../moves";
import type { Services } from "../services";

const errors = { 401: errorBody, 404: errorBody, 409: errorBody, 429: errorBody };

/** issue 27: the give-up a goal waiting in awaiting_approval waits on, or null (a spending pause). */
async function waitingGiveUp(s: Services, goal: Goal) {
  if (goal.state !== "awaiting_approval") return null;
  const entry = await s.prisma.transition.findFirst({ where: { goalId: goal.id, toState: goal.state }, orderBy: { seq: "desc" } });
  return entry ? giveUpOf(entry.detail) : null;
}

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
          "Lets the goal go on. After a spending pause it resumes in the state it was waiting in, and the next approval threshold is the one given (none when omitted). After a model declared the goal infeasible (on_infeasible \"ask\") the refiner tries again, told the give-up and the optional note, and the approval threshold stays as it was unless given. Either way budget caps may be raised (server maximums apply).",
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
        const giveUp = await waitingGiveUp(s, goal);
        if (body.note !== undefined && !giveUp && goal.state === "awaiting_approval")
          throw new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", [
            { path: "body.note", message: "a note goes to the refiner after a give-up; this goal waits on a spending pause" },
          ]);
        const resume = giveUp ? "refine" : await stateBefore(s, goal);
        if (!isState(resume)) throw new LoopSmithError("LS_ERR_GOAL_STATE", `cannot resume ${resume}`);
        const current = storedBudgets(goal.budgets, goal.maxAttempts);
        const b = body.budget ?? {};
        const problems = budgetProblems(b, s.budgets);
        if (problems.length) throw new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", problems);
        const budgets = {
          ...current,
          ...b,
          // Approving a spending pause answers the threshold; approving a give-up leaves it alone.
          approval_threshold_usd: body.approval_threshold_usd !== undefined ? body.approval_threshold_usd : giveUp ? current.approval_threshold_usd : null,
        };
        if (giveUp)
          return { event: { type: "GIVE_UP_OVERRULED" }, detail: { by: "client", budgets, infeasible: giveUp, ...(body.note !== undefined ? { note: body.note } : {}) }, budgets };
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
        description:
          "Ends it in `failed` with a failure report: reason `rejected` after a spending pause, `declared_infeasible` (the model's reason in `failure_report.infeasible`) after a give-up.",
        tags: ["goals"],
        params: goalIdParams,
        response: { 200: goalView, ...errors },
      },
    },
    async (req) => {
      const tenant = tenantOf(req);
      const s = opts.deps();
      await moveGoal(s, { tenantId: tenant.id, id: req.params.id }, async (goal) => {
        const giveUp = await waitingGiveUp(s, goal);
        if (giveUp)
          return {
            event: { type: "GIVE_UP_UPHELD" },
            detail: { by: "client", infeasible: giveUp },
            failureMessage: `The client rejected going on, so the give-up stands. The ${giveUp.declared_by} declared the goal infeasible: ${giveUp.reason}`,
          };
        return { event: { type: "REJECTED" }, detail: { by: "client" }, failureMessage: "The client rejected the spending request." };
      }, req.log);
      return view(tenant.id, req.params.id);
    },
  );
};
