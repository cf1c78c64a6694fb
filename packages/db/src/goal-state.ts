// The only code that writes goal state. Every move is one transaction: compare-and-set on the goal's
// version, append the tape row, and write whatever evidence the step produced, so that a crash leaves
// either all of a step or none of it.
import { LoopSmithError } from "@loopsmith/core";
import { assertTransition, isState, isTerminal } from "@loopsmith/machine";
import { transitionHash } from "@loopsmith/receipts";
import type { FailureReport } from "@loopsmith/schemas";
import type { Prisma, PrismaClient } from "./generated/client";
import { buildFailureReport } from "./goal-view";
import type { Tx } from "./tx";

export type { Tx } from "./tx";

/**
 * For values already validated by zod (params are `Record<string, unknown>`), which Prisma's JSON input
 * type cannot see are JSON.
 */
export function asJson(value: unknown): Prisma.InputJsonValue {
  return value as Prisma.InputJsonValue;
}

export interface NewGoal {
  tenantId: string;
  idempotencyKey?: string | null;
  /** sha256 of the request body, to tell a replay from a conflicting reuse of the key. */
  requestHash?: string | null;
  webhook?: { url: string } | null;
  /** The queue prefix the goal's steps are scheduled on. */
  queuePrefix?: string;
  objective: string;
  success: string | null;
  checks: unknown;
  inputs: { name: string; content: Buffer; sha256: string }[];
  /** Hidden material for the checks; stored apart from the inputs so that nothing that reads inputs can reach it. */
  checkerFiles?: { name: string; content: Buffer; sha256: string }[];
  /** The artifact the goal delivers, or null (the program itself); default result.json. */
  deliverable?: string | null;
  /** The refiner's arm: "full" (default) or "retry_only". */
  feedback?: string;
  /** issue 27: what a model's give-up does, "fail" (default) or "ask". */
  onInfeasible?: string;
  /** The client's self-test fixtures. */
  selfTest?: unknown;
  maxAttempts: number;
  budgets: Prisma.InputJsonValue;
  model: unknown;
  /** The LoopSmith that accepted the goal (see loopsmithVersion in @loopsmith/core). */
  loopsmithVersion?: string | null;
  /** issue 14: the program's language (default python). */
  language?: string;
  /** issue 14: the unpacked workspace, stored as a normalized tar, with its file list and locked paths. */
  workspace?: { archive: Buffer; files: { path: string; size: number; sha256: string }[]; locked: string[]; sha256: string } | null;
}

/** Insert a goal in its first state (`plan`, version 0) with tape row 0. */
export async function createGoal(prisma: PrismaClient, goal: NewGoal): Promise<{ id: string; version: number }> {
  assertTransition(null, "plan");
  const first = { seq: 0, from: null, to: "plan", at: new Date(), detail: {} };
  return prisma.$transaction(async (tx) => {
    const row = await tx.goal.create({
      data: {
        tenantId: goal.tenantId,
        idempotencyKey: goal.idempotencyKey ?? null,
        requestHash: goal.requestHash ?? null,
        webhook: goal.webhook ? asJson(goal.webhook) : undefined,
        ...(goal.queuePrefix ? { queuePrefix: goal.queuePrefix } : {}),
        objective: goal.objective,
        success: goal.success,
        checks: asJson(goal.checks),
        ...(goal.deliverable !== undefined ? { deliverable: goal.deliverable } : {}),
        ...(goal.feedback !== undefined ? { feedback: goal.feedback } : {}),
        ...(goal.onInfeasible !== undefined ? { onInfeasible: goal.onInfeasible } : {}),
        ...(goal.selfTest != null ? { selfTest: asJson(goal.selfTest) } : {}),
        inputs: goal.inputs.map((f) => ({ name: f.name, size: f.content.length, sha256: f.sha256 })),
        maxAttempts: goal.maxAttempts,
        budgets: goal.budgets,
        model: goal.model == null ? undefined : asJson(goal.model),
        state: "plan",
        version: 0,
        loopsmithVersion: goal.loopsmithVersion ?? null,
        ...(goal.language !== undefined ? { language: goal.language } : {}),
        ...(goal.workspace
          ? { workspace: { create: { archive: new Uint8Array(goal.workspace.archive), files: asJson(goal.workspace.files), locked: asJson(goal.workspace.locked), sha256: goal.workspace.sha256 } } }
          : {}),
        inputFiles: {
          create: goal.inputs.map((f) => ({
            name: f.name,
            size: f.content.length,
            sha256: f.sha256,
            content: new Uint8Array(f.content),
          })),
        },
        checkerFiles: {
          create: (goal.checkerFiles ?? []).map((f) => ({ name: f.name, size: f.content.length, sha256: f.sha256, content: new Uint8Array(f.content) })),
        },
        transitions: { create: { seq: 0, fromState: null, toState: "plan", at: first.at, detail: {}, hash: hashRow("", first) } },
      },
      select: { id: true, version: true },
    });
    return row;
  });
}

/**
 * The tape row's link in the hash chain, over exactly what GET /goals/:id will show: the timestamp is
 * set here (not by the database) so that it is known before the row is written, at the column's
 * millisecond precision.
 */
function hashRow(prev: string, row: { seq: number; from: string | null; to: string; at: Date; detail: unknown }): string {
  return transitionHash(prev, { ...row, at: row.at.toISOString() });
}

export interface Advance {
  goalId: string;
  /** The version the step was scheduled from; the move fails with LS_ERR_STALE_VERSION if it moved on. */
  fromVersion: number;
  from: string;
  to: string;
  /** The evidence for this move, stored on the tape row. */
  detail: Prisma.InputJsonValue;
  /** Goal columns that change with the move. */
  patch?: Pick<Prisma.GoalUpdateManyMutationInput, "attempts" | "verified" | "report" | "budgets">;
  /** The machine's reason for a move to `failed`: stored on the tape row and as the goal's failure reason. */
  reason?: string;
  /** When the move happens (finishedAt of a terminal move); default now. */
  at?: Date;
  /** For moves to `failed`: a message for the failure report, and extra fields (the stuck hashes...). */
  failure?: { message: string; extra?: Partial<FailureReport> };
  /** Rows written in the same transaction (the execution, check results, the plan...). */
  effects?: (tx: Tx) => Promise<void>;
}

export async function advanceGoal(prisma: PrismaClient, move: Advance): Promise<{ version: number }> {
  assertTransition(move.from, move.to);
  const version = move.fromVersion + 1;
  await prisma.$transaction(async (tx) => {
    const ends = isState(move.to) && isTerminal(move.to);
    const cas = await tx.goal.updateMany({
      where: { id: move.goalId, version: move.fromVersion, state: move.from },
      data: {
        ...move.patch,
        ...(ends ? { finishedAt: move.at ?? new Date() } : {}),
        ...(move.to === "failed" ? { failureReason: move.reason ?? "unknown" } : {}),
        state: move.to,
        version,
      },
    });
    if (cas.count !== 1) {
      throw new LoopSmithError(
        "LS_ERR_STALE_VERSION",
        `goal ${move.goalId} is no longer at version ${move.fromVersion} in state ${move.from}`,
      );
    }
    const detail = move.reason ? asJson({ ...(move.detail as object), reason: move.reason }) : move.detail;
    // The CAS above makes this the only writer of row `version`, so the row before it cannot change under us.
    const prev = await tx.transition.findUnique({ where: { goalId_seq: { goalId: move.goalId, seq: move.fromVersion } }, select: { hash: true } });
    const at = new Date();
    await tx.transition.create({
      data: {
        goalId: move.goalId,
        seq: version,
        fromState: move.from,
        toState: move.to,
        at,
        detail,
        hash: hashRow(prev?.hash ?? "", { seq: version, from: move.from, to: move.to, at, detail }),
      },
    });
    await move.effects?.(tx);
    // Every failed goal carries its report, written with the row that failed it.
    if (move.to === "failed") {
      const reason = move.reason ?? "unknown";
      const report = await buildFailureReport(tx, move.goalId, reason, move.failure?.message ?? reason, move.failure?.extra);
      await tx.goal.update({ where: { id: move.goalId }, data: { failureReport: asJson(report) } });
    }
  });
  return { version };
}
