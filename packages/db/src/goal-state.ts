// The only code that writes goal state. Every move is one SQL statement (one transaction when it has
// writes that read what is stored): compare-and-set on the goal's version, append the tape row, and write
// whatever evidence the step produced, so that a crash leaves either all of a step or none of it.
import { randomUUID } from "node:crypto";
import { LoopSmithError } from "@loopsmith/core";
import { assertTransition, isState, isTerminal } from "@loopsmith/machine";
import { transitionHash } from "@loopsmith/receipts";
import type { FailureReport } from "@loopsmith/schemas";
import type { Prisma, PrismaClient } from "./generated/client";
import { sendStatement } from "./client";
import { buildFailureReport } from "./goal-view";
import { insertRowsSql, sqlParams, type RowInsert } from "./rows";
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
  /** Best-of-N: programs sampled per GENERATE and REFINE turn (default 1). */
  candidates?: number;
  /** The schedule whose tick creates it. */
  scheduleId?: string | null;
  /** The schedule's pin at the tick ({goal_id, code, plan}): the goal starts from that program. */
  pinned?: unknown;
}

/** What createGoal refuses a goal for: the tenant already has `limit` goals that have not ended. */
export interface OpenGoalCap {
  limit: number;
}

/**
 * Insert a goal in its first state (`plan`, version 0) with tape row 0, its files and its workspace, in
 * one SQL statement: one round trip and no interactive transaction (issue 29: the Prisma transaction took
 * six round trips, BEGIN to COMMIT, holding a pooled connection throughout). A single statement is atomic.
 *
 * With `cap`, the statement inserts only while the tenant has fewer than `cap.limit` goals that have not
 * ended, and throws LS_ERR_GOAL_LIMIT otherwise. It reads the tenant's `open_goals` (kept by the database's
 * goals_open_count trigger, so a submit costs the same with 10 or 10,000 goals open) under the tenant row's
 * lock, which the insert's own trigger then raises: racing submits of one tenant take turns at that lock for
 * the rest of the statement, and the cap is exact.
 *
 * A second goal with the tenant's idempotency key fails with Prisma's unique-violation code, P2002.
 */
export async function createGoal(prisma: PrismaClient | Tx, goal: NewGoal, cap?: OpenGoalCap): Promise<{ id: string; version: number }> {
  assertTransition(null, "plan");
  const first = { seq: 0, from: null, to: "plan", at: new Date(), detail: {} };
  const id = randomUUID();
  const { params, p, json } = sqlParams();
  // Columns left out take the schema's defaults (deliverable, feedback, language...).
  const columns: [string, string][] = [
    ["id", p(id, "uuid")],
    ["tenant_id", p(goal.tenantId, "uuid")],
    ["idempotency_key", p(goal.idempotencyKey ?? null)],
    ["request_hash", p(goal.requestHash ?? null)],
    ["webhook", goal.webhook ? json(goal.webhook) : "NULL"],
    ["objective", p(goal.objective)],
    ["success", p(goal.success)],
    ["checks", json(goal.checks)],
    ["inputs", json(goal.inputs.map((f) => ({ name: f.name, size: f.content.length, sha256: f.sha256 })))],
    ["max_attempts", p(goal.maxAttempts, "int")],
    ["budgets", json(goal.budgets)],
    ["model", goal.model == null ? "NULL" : json(goal.model)],
    ["state", "'plan'"],
    ["version", "0"],
    ["loopsmith_version", p(goal.loopsmithVersion ?? null)],
    ["updated_at", "now()"],
  ];
  if (goal.queuePrefix) columns.push(["queue_prefix", p(goal.queuePrefix)]);
  if (goal.deliverable !== undefined) columns.push(["deliverable", p(goal.deliverable)]);
  if (goal.feedback !== undefined) columns.push(["feedback", p(goal.feedback)]);
  if (goal.onInfeasible !== undefined) columns.push(["on_infeasible", p(goal.onInfeasible)]);
  if (goal.selfTest != null) columns.push(["self_test", json(goal.selfTest)]);
  if (goal.language !== undefined) columns.push(["language", p(goal.language)]);
  if (goal.candidates !== undefined) columns.push(["candidates", p(goal.candidates, "int")]);
  if (goal.scheduleId) columns.push(["schedule_id", p(goal.scheduleId, "uuid")]);
  if (goal.pinned != null) columns.push(["pinned", json(goal.pinned)]);

  const under = cap
    ? `WHERE (SELECT "open_goals" FROM "tenants" WHERE "id" = ${p(goal.tenantId, "uuid")} FOR NO KEY UPDATE) < ${p(cap.limit, "int")}`
    : "";
  const files = (table: string, list: { name: string; content: Buffer; sha256: string }[]) =>
    list.length === 0
      ? ""
      : `, ${table} AS (INSERT INTO "${table}" ("id", "goal_id", "name", "size", "sha256", "content") SELECT gen_random_uuid(), g."id", f.* FROM g, (VALUES ${list
          .map((f) => `(${p(f.name)}, ${p(f.content.length, "int")}, ${p(f.sha256)}, ${p(new Uint8Array(f.content), "bytea")})`)
          .join(", ")}) AS f)`;
  const ws = goal.workspace;
  const sql = [
    `WITH g AS (INSERT INTO "goals" (${columns.map(([c]) => `"${c}"`).join(", ")}) SELECT ${columns.map(([, v]) => v).join(", ")} ${under} RETURNING "id", "version")`,
    files("goal_inputs", goal.inputs),
    files("goal_checker_files", goal.checkerFiles ?? []),
    ws
      ? `, goal_workspaces AS (INSERT INTO "goal_workspaces" ("goal_id", "archive", "files", "locked", "sha256") SELECT g."id", ${p(new Uint8Array(ws.archive), "bytea")}, ${json(ws.files)}, ${json(ws.locked)}, ${p(ws.sha256)} FROM g)`
      : "",
    `, tape AS (INSERT INTO "transitions" ("id", "goal_id", "seq", "from_state", "to_state", "at", "detail", "hash") SELECT gen_random_uuid(), g."id", 0, NULL, 'plan', ${p(first.at.toISOString(), "timestamptz")}, '{}'::jsonb, ${p(hashRow("", first))} FROM g)`,
    `SELECT "id"::text AS "id", "version" FROM g`,
  ].join("");
  let rows: { id: string; version: number }[];
  try {
    rows = await sendStatement<{ id: string; version: number }>(prisma, sql, params);
  } catch (e) {
    // The same code a Prisma create gives, which callers already match on (a replay raced this submit).
    if (uniqueViolation(e)) throw Object.assign(new Error("Unique constraint failed on (tenant_id, idempotency_key)"), { code: "P2002" });
    throw e;
  }
  const row = rows[0];
  if (!row) {
    const limit = cap!.limit;
    throw new LoopSmithError("LS_ERR_GOAL_LIMIT", `This tenant has ${limit} goals that have not ended, its limit; submit again when some have ended.`, { limit });
  }
  return { id: row.id, version: Number(row.version) };
}

/** Postgres 23505 (unique_violation), as node-postgres or a raw query through the driver adapter reports it. */
function uniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; meta?: { code?: string; driverAdapterError?: { cause?: { kind?: string; originalCode?: string } } } };
  if (err.code === "P2002" || err.code === "23505") return true;
  const cause = err.meta?.driverAdapterError?.cause;
  return err.meta?.code === "23505" || cause?.originalCode === "23505" || cause?.kind === "UniqueConstraintViolation";
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
  /** Goal columns that change with the move (undefined: left as they are). */
  patch?: { attempts?: number; verified?: boolean; report?: unknown; budgets?: unknown };
  /** The machine's reason for a move to `failed`: stored on the tape row and as the goal's failure reason. */
  reason?: string;
  /** When the move happens (finishedAt of a terminal move); default now. */
  at?: Date;
  /** For moves to `failed`: a message for the failure report, and extra fields (the stuck hashes...). */
  failure?: { message: string; extra?: Partial<FailureReport> };
  /**
   * The hash of the tape row at fromVersion, when the caller read it already (a step reads it beside its
   * handler's work). That row never changes; a goal that moved on fails the CAS whatever was read.
   */
  prevHash?: Promise<string | null>;
  /** Rows written with the move, in its statement (the execution, its artifacts, check results, the plan...). */
  rows?: RowInsert[];
  /** Writes that need reads of their own (the receipt, webhook deliveries), in the move's transaction after its rows. */
  effects?: (tx: Tx) => Promise<void>;
}

/**
 * Moves a goal: compare-and-set on its version and state, its tape row, and the move's rows, all in one SQL
 * statement (the data-modifying CTEs insert only when the CAS matched). A move with `effects`, or to
 * `failed` (which builds its report from what is stored), runs that statement and then those in one
 * interactive transaction; every other move is the one statement, one round trip (issue 29: the
 * interactive transaction took a round trip per row, 25-30 ms for an EXECUTE's commit on a busy machine).
 */
export async function advanceGoal(prisma: PrismaClient, move: Advance): Promise<{ version: number }> {
  assertTransition(move.from, move.to);
  const version = move.fromVersion + 1;
  // The row before ours was written by the move that brought the goal to fromVersion and never changes
  // (the tape is append-only); if the goal moved on meanwhile, the CAS below matches nothing.
  const prevHash = await (move.prevHash ?? tapeHash(prisma, move.goalId, move.fromVersion));
  const at = new Date();
  const ends = isState(move.to) && isTerminal(move.to);
  const detail = move.reason ? asJson({ ...(move.detail as object), reason: move.reason }) : move.detail;
  const hash = hashRow(prevHash ?? "", { seq: version, from: move.from, to: move.to, at, detail });

  const { params, p, json } = sqlParams();
  const set: string[] = [`"state" = ${p(move.to, "text")}`, `"version" = ${p(version, "int")}`, `"updated_at" = ${p(at.toISOString(), "timestamptz")}`];
  const patch = move.patch ?? {};
  if (patch.attempts !== undefined) set.push(`"attempts" = ${p(patch.attempts, "int")}`);
  if (patch.verified !== undefined) set.push(`"verified" = ${p(patch.verified, "boolean")}`);
  if (patch.report !== undefined) set.push(`"report" = ${json(patch.report)}`);
  if (patch.budgets !== undefined) set.push(`"budgets" = ${json(patch.budgets)}`);
  if (ends) set.push(`"finished_at" = ${p((move.at ?? new Date()).toISOString(), "timestamptz")}`);
  if (move.to === "failed") set.push(`"failure_reason" = ${p(move.reason ?? "unknown", "text")}`);
  const sql = [
    `WITH cas AS (UPDATE "goals" SET ${set.join(", ")} WHERE "id" = ${p(move.goalId, "uuid")} AND "version" = ${p(move.fromVersion, "int")} AND "state" = ${p(move.from, "text")} RETURNING "id")`,
    `, tape AS (INSERT INTO "transitions" ("id", "goal_id", "seq", "from_state", "to_state", "at", "detail", "hash") SELECT ${p(randomUUID(), "uuid")}, cas."id", ${p(version, "int")}, ${p(move.from, "text")}, ${p(move.to, "text")}, ${p(at.toISOString(), "timestamptz")}, ${json(detail)}, ${p(hash, "text")} FROM cas)`,
    insertRowsSql(move.rows ?? [], "cas", p),
    ` SELECT count(*)::int AS "moved" FROM cas`,
  ].join("");

  const write = async (db: PrismaClient | Tx) => {
    const [row] = await sendStatement<{ moved: number }>(db, sql, params);
    if (Number(row?.moved) !== 1) {
      throw new LoopSmithError("LS_ERR_STALE_VERSION", `goal ${move.goalId} is no longer at version ${move.fromVersion} in state ${move.from}`);
    }
  };
  if (!move.effects && move.to !== "failed") {
    await write(prisma);
    return { version };
  }
  await prisma.$transaction(async (tx) => {
    await write(tx);
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

/** The hash of a goal's tape row `seq` (null: no such row, or a row written before hashes). */
export async function tapeHash(prisma: PrismaClient, goalId: string, seq: number): Promise<string | null> {
  const row = await prisma.transition.findUnique({ where: { goalId_seq: { goalId, seq } }, select: { hash: true } });
  return row?.hash ?? null;
}
