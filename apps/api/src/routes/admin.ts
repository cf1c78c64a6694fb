// Operator routes: goals parked in `errored` after their infrastructure kept failing past the retry cap.
// Guarded by ADMIN_API_KEY (not a tenant key), checked in the auth hook; without it configured they answer 403.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { LoopSmithError } from "@loopsmith/core";
import { isState } from "@loopsmith/machine";
import { errorBody, goalIdParams } from "@loopsmith/schemas";
import { requireAdmin } from "../auth";
import { moveGoal, stateBefore } from "../moves";
import type { Services } from "../services";

export const deadLetter = z
  .object({
    goal_id: z.uuid(),
    tenant_id: z.uuid(),
    objective: z.string(),
    errored_in: z.string().describe("The state whose step kept failing; a retry resumes it."),
    error: z.string(),
    error_code: z.string().nullable(),
    tries: z.int(),
    errored_at: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "DeadLetter" });

const deadLetters = z.object({ dead_letters: z.array(deadLetter) }).meta({ id: "DeadLetterList" });

export const adminRoutes: FastifyPluginAsyncZod<{ deps: () => Services }> = async (app, opts) => {
  app.get(
    "/admin/dead-letters",
    {
      config: { access: "admin" },
      schema: {
        operationId: "listDeadLetters",
        summary: "Goals parked in errored (the dead-letter list)",
        tags: ["admin"],
        security: [{ adminKey: [] }],
        response: { 200: deadLetters, 401: errorBody, 403: errorBody },
      },
    },
    async (req) => {
      const s = opts.deps();
      requireAdmin(req);
      const goals = await s.prisma.goal.findMany({
        where: { state: "errored" },
        orderBy: { updatedAt: "asc" },
        take: 500,
        include: { transitions: { where: { toState: "errored" }, orderBy: { seq: "desc" }, take: 1 } },
      });
      return {
        dead_letters: goals.map((g) => {
          const row = g.transitions[0];
          const d = (row?.detail ?? {}) as { error?: string; error_code?: string | null; tries?: number };
          return {
            goal_id: g.id,
            tenant_id: g.tenantId,
            objective: g.objective,
            errored_in: row?.fromState ?? "unknown",
            error: d.error ?? "unknown",
            error_code: d.error_code ?? null,
            tries: d.tries ?? 0,
            errored_at: (row?.at ?? g.updatedAt).toISOString(),
          };
        }),
      };
    },
  );

  app.post(
    "/admin/dead-letters/:id/retry",
    {
      config: { access: "admin" },
      schema: {
        operationId: "retryDeadLetter",
        summary: "Retry a dead-lettered goal: it resumes the state it errored in",
        tags: ["admin"],
        security: [{ adminKey: [] }],
        params: goalIdParams,
        response: {
          202: z.object({ goal_id: z.uuid(), state: z.string(), version: z.int() }),
          401: errorBody,
          403: errorBody,
          404: errorBody,
          409: errorBody,
        },
      },
    },
    async (req, reply) => {
      const s = opts.deps();
      requireAdmin(req);
      const moved = await moveGoal(s, { tenantId: null, id: req.params.id }, async (goal) => {
        if (goal.state !== "errored") throw new LoopSmithError("LS_ERR_GOAL_STATE", `The goal is in ${goal.state}, not errored.`, { state: goal.state });
        const resume = await stateBefore(s, goal);
        if (!isState(resume)) throw new LoopSmithError("LS_ERR_GOAL_STATE", `cannot resume ${resume}`);
        return { event: { type: "RETRIED", resume }, detail: { by: "operator" } };
      }, req.log);
      return reply.status(202).send({ goal_id: req.params.id, state: moved.to, version: moved.version });
    },
  );
};
