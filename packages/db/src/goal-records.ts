// Reads for export and the judge report (issue 15), through the tenant like every other read: the rows
// @loopsmith/replay turns into a goal script and a judge agreement report.
import type { PrismaClient } from "./generated/client";
import { UUID } from "./goal-view";

/** A goal with its files, tape and model turns, or null when it is not this tenant's. */
export async function loadGoalRecord(prisma: PrismaClient, scope: { tenantId: string; id: string }) {
  if (!UUID.test(scope.id)) return null;
  return prisma.goal.findFirst({
    where: { id: scope.id, tenantId: scope.tenantId },
    include: {
      inputFiles: { orderBy: { name: "asc" }, select: { name: true, content: true } },
      checkerFiles: { orderBy: { name: "asc" }, select: { name: true, content: true } },
      transitions: { orderBy: { seq: "asc" }, select: { seq: true, fromState: true, toState: true, at: true, detail: true } },
      modelCalls: {
        orderBy: [{ createdAt: "asc" }, { id: "asc" }],
        select: { state: true, attempt: true, provider: true, model: true, response: true, error: true, createdAt: true },
      },
    },
  });
}

/** The tenant's goals created in [since, until), newest first, with their tapes and model-call figures. */
export async function loadJudgeInputs(prisma: PrismaClient, scope: { tenantId: string; since: Date; until: Date; limit: number }) {
  const goals = await prisma.goal.findMany({
    where: { tenantId: scope.tenantId, createdAt: { gte: scope.since, lt: scope.until } },
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: scope.limit,
    select: {
      id: true,
      state: true,
      // Only what the report reads: what each INSPECT concluded, and which attempts ran (from the executions,
      // not their tape rows, which carry the runs' output).
      transitions: { where: { fromState: "inspect" }, orderBy: { seq: "asc" }, select: { fromState: true, toState: true, detail: true } },
      executions: { select: { attempt: true } },
      modelCalls: { select: { state: true, attempt: true, provider: true, model: true, tokensIn: true, tokensOut: true, costUsd: true } },
    },
  });
  return goals.map((g) => ({
    id: g.id,
    state: g.state,
    calls: g.modelCalls,
    transitions: [
      ...g.executions.map((e) => ({ from: "execute", to: "inspect", detail: { attempt: e.attempt } })),
      ...g.transitions.map((t) => ({ from: t.fromState, to: t.toState, detail: t.detail })),
    ],
  }));
}
