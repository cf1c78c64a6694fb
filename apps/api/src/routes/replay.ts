// Export a finished goal as a replayable script, and the judge agreement report (issue 15). Both read
// through the calling tenant: another tenant's goal is a 404, another tenant's goals are not counted.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError } from "@loopsmith/core";
import { loadGoalRecord, loadJudgeInputs } from "@loopsmith/db";
import { EXPORTABLE_STATES, exportGoal, judgeReport } from "@loopsmith/replay";
import { errorBody, goalIdParams, goalScript, judgeReport as judgeReportSchema, judgeReportQuery } from "@loopsmith/schemas";
import { tenantOf } from "../auth";
import type { Services } from "../services";

/** Goals one judge report reads at most (newest first); the report says how many it read. */
export const JUDGE_REPORT_MAX_GOALS = 5000;
const DEFAULT_WINDOW_MS = 30 * 24 * 3600 * 1000;

export const replayRoutes: FastifyPluginAsyncZod<{ deps: () => Services }> = async (app, opts) => {
  app.get(
    "/goals/:id/script",
    {
      schema: {
        summary: "A finished goal as a script: POST its body to /goals to replay it offline",
        description:
          "The goal's request again, its recorded model turns (plan, generate, each inspect, each refine) as a scripted model's script, its inputs and (for its owner) its checker files, plus the original's state and tape to compare a replay with. The programs and the checks really run again.",
        tags: ["goals"],
        params: goalIdParams,
        response: { 200: goalScript, 401: errorBody, 404: errorBody, 409: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const goal = await loadGoalRecord(opts.deps().prisma, { tenantId: tenantOf(req).id, id: req.params.id });
      if (!goal) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${req.params.id}.`);
      if (!(EXPORTABLE_STATES as readonly string[]).includes(goal.state))
        throw new LoopSmithError("LS_ERR_GOAL_STATE", `The goal is in ${goal.state}; only a goal that ended ${EXPORTABLE_STATES.join(" or ")} can be exported.`, { state: goal.state });
      return exportGoal({ ...goal, inputs: goal.inputFiles, checkerFiles: goal.checkerFiles });
    },
  );

  app.get(
    "/reports/judges",
    {
      schema: {
        summary: "Judge agreement: where the inspector model and the deterministic checks disagreed",
        description: `Over the calling tenant's goals created in [since, until) (at most ${JUDGE_REPORT_MAX_GOALS}, newest first): false accepts (the inspector said verified, a check failed, the veto stopped it) and false rejects (the inspector said not verified while every check passed), with the attempts and tokens the false rejects cost; per model and per vetoing check.`,
        tags: ["reports"],
        querystring: judgeReportQuery,
        response: { 200: judgeReportSchema, 400: errorBody, 401: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const until = req.query.until ? new Date(req.query.until) : new Date();
      const since = req.query.since ? new Date(req.query.since) : new Date(until.getTime() - DEFAULT_WINDOW_MS);
      if (since.getTime() > until.getTime())
        throw new LoopSmithError("LS_ERR_VALIDATION", "The request is invalid.", [{ path: "querystring.since", message: "since is after until" }]);
      const goals = await loadJudgeInputs(opts.deps().prisma, { tenantId: tenantOf(req).id, since, until, limit: JUDGE_REPORT_MAX_GOALS });
      return judgeReport(goals, { since, until });
    },
  );
};
