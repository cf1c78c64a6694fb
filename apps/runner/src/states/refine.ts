// REFINE: the refiner gets the script, the real run, the failed checks and the diagnosis, and writes the
// next complete program.
import { refinerRequest } from "@loopsmith/agents";
import { giveUpOf } from "@loopsmith/db";
import { checkOutcome, type Language } from "@loopsmith/schemas";
import type { StateHandler } from "./context";
import { loadExecution, loadLatestCode, loadLatestInspection, runSummary } from "./evidence";
import { candidatesDetail, sampled } from "./candidates";
import { modelFailed, modelTurns } from "./model-call";

export const refine: StateHandler = async (ctx, deps) => {
  const { goal } = ctx;
  // Side by side: a step's reads are independent round trips (issue 29).
  const [{ plan }, exec, failedRows, entered, latestCode, inspection, workspace] = await Promise.all([
    deps.material.plan(goal.id),
    loadExecution(deps.prisma, goal.id, goal.attempts),
    deps.prisma.checkResult.findMany({ where: { goalId: goal.id, attempt: goal.attempts, passed: false }, orderBy: { createdAt: "asc" } }),
    // issue 27: the client approved going on after a give-up: the refiner hears the give-up and the note.
    deps.prisma.transition.findFirst({
      // A retry from errored carries nothing: the row that sent the goal here before it counts.
      where: { goalId: goal.id, toState: "refine", fromState: { not: "errored" } },
      orderBy: { seq: "desc" },
    }),
    loadLatestCode(deps.prisma, goal.id),
    loadLatestInspection(deps.prisma, goal.id),
    deps.material.workspace(goal.id),
  ]);
  const failed = failedRows.map((r) =>
    checkOutcome.parse({ id: r.checkId, params: r.params, passed: r.passed, message: r.message, feedback: r.feedback || r.message, hidden: r.hidden, findings: r.findings }),
  );
  const overruled = entered?.fromState === "awaiting_approval" ? giveUpOf(entered.detail) : null;
  const note = (entered?.detail as { note?: unknown } | null)?.note;
  const req = refinerRequest({
    plan,
    code: latestCode,
    run: runSummary(exec, goal.deliverable),
    failed,
    inspection,
    deliverable: goal.deliverable,
    feedback: goal.feedback === "retry_only" ? "retry_only" : "full",
    language: goal.language as Language,
    workspace,
    overruledGiveUp: overruled ? { reason: overruled.reason, note: typeof note === "string" ? note : null } : null,
  });
  const n = goal.candidates;
  const { outputs, errors } = sampled(await modelTurns(ctx, deps, req, n));
  if (outputs.length === 0) return modelFailed("refine", errors[0]!.error);
  // Best-of-N: a candidate that gives up is dropped while another wrote a program; all giving up is a give-up.
  const programs = outputs.filter((o) => !o.infeasible).map(({ infeasible: _, ...code }) => code);
  const infeasible = programs.length === 0 ? outputs[0]!.infeasible : null;
  const code = programs[0]!;
  if (infeasible) {
    return {
      event: { type: "DECLARED_INFEASIBLE", onInfeasible: goal.onInfeasible === "ask" ? "ask" : "fail", attemptsLeft: goal.attempts < goal.maxAttempts },
      detail: { attempt: goal.attempts, feedback: goal.feedback, infeasible: { reason: infeasible.reason, declared_by: "refiner" } },
      failure: { message: `The refiner declared the goal infeasible: ${infeasible.reason}` },
    };
  }
  return { event: { type: "CODE_READY" }, detail: { attempt: goal.attempts, feedback: goal.feedback, code, ...candidatesDetail(programs, errors, n) } };
};
