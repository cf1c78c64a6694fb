// A schedule's ticks: BullMQ's job scheduler adds one job per tick to the schedules queue; whichever runner
// takes it creates the tick's goal from the schedule's template, its current inputs and its pin. A tick is
// decided under a row lock on the schedule, so ticks of one schedule never overlap however many runners
// take them, and the goal's idempotency key is the tick's job id, so a tick retried after its runner died
// finds the goal it created instead of creating another.
import { createHash } from "node:crypto";
import { DelayedError, Queue, Worker, type Job } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "@loopsmith/core";
import { asJson, createGoal, type NewGoal, type PrismaClient, type Tx } from "@loopsmith/db";
import { TERMINAL_STATES } from "@loopsmith/machine";
import { loadLatestCode } from "./states/evidence";
import { QUEUES, scheduleJobSchema, scheduleRepeat, scheduleTickTemplate, type GoalJob, type SchedulePin } from "@loopsmith/schemas";

export type TickResult =
  | { result: "created"; goalId: string; replayed: boolean }
  | { result: "skipped_paused" | "skipped_overlap" | "skipped_unchanged" }
  | { result: "wait" }
  | { result: "gone" };

export interface TickDeps {
  prisma: PrismaClient;
  enqueue: (job: GoalJob) => Promise<void>;
  now: () => Date;
  loopsmithVersion?: string;
}

/** The fields of a goal a schedule stores as its template (see apps/api/src/routes/schedules.ts). */
type Template = Omit<NewGoal, "tenantId" | "inputs" | "checkerFiles" | "idempotencyKey" | "requestHash" | "queuePrefix" | "workspace" | "scheduleId" | "pinned">;

/** One tick of one schedule; `tickKey` names the tick (its job id), the same on every retry. */
export async function runTick(deps: TickDeps, scheduleId: string, tickKey: string): Promise<TickResult> {
  const { prisma } = deps;
  const key = `schedule-tick:${tickKey}`;
  const outcome = await prisma.$transaction(async (tx): Promise<TickResult & { version?: number }> => {
    // Ticks of one schedule take turns here: the overlap check and the goal's insert see each other.
    const locked = await tx.$queryRaw<{ id: string }[]>`SELECT "id"::text FROM "schedules" WHERE "id" = ${scheduleId}::uuid FOR UPDATE`;
    if (locked.length === 0) return { result: "gone" };
    const s = await tx.schedule.findUniqueOrThrow({ where: { id: scheduleId }, include: { files: { orderBy: { name: "asc" } } } });
    const prior = await tx.goal.findUnique({ where: { tenantId_idempotencyKey: { tenantId: s.tenantId, idempotencyKey: key } }, select: { id: true, version: true } });
    if (prior) return { result: "created", goalId: prior.id, replayed: true, version: prior.version };
    const at = deps.now();
    const skip = async (result: "skipped_paused" | "skipped_overlap" | "skipped_unchanged") => {
      await tx.schedule.update({ where: { id: s.id }, data: { skippedTicks: { increment: 1 }, lastTick: { at: at.toISOString(), result, goal_id: null } } });
      return { result };
    };
    if (s.paused) return skip("skipped_paused");
    const open = await tx.goal.findFirst({ where: { scheduleId: s.id, state: { notIn: [...TERMINAL_STATES] } }, select: { id: true } });
    if (open) return s.overlap === "wait" ? { result: "wait" } : skip("skipped_overlap");
    if (s.skipUnchanged && s.tickedInputsVersion === s.inputsVersion) return skip("skipped_unchanged");
    const files = (kind: string) => s.files.filter((f) => f.kind === kind).map((f) => ({ name: f.name, content: Buffer.from(f.content), sha256: f.sha256 }));
    const goal = await createGoal(tx, {
      ...(s.template as unknown as Template),
      tenantId: s.tenantId,
      idempotencyKey: key,
      queuePrefix: s.queuePrefix,
      inputs: files("input"),
      checkerFiles: files("checker"),
      scheduleId: s.id,
      pinned: s.pin,
      loopsmithVersion: deps.loopsmithVersion ?? null,
    });
    await tx.schedule.update({
      where: { id: s.id },
      data: { ticks: { increment: 1 }, tickedInputsVersion: s.inputsVersion, lastTick: { at: at.toISOString(), result: "created", goal_id: goal.id } },
    });
    return { result: "created", goalId: goal.id, replayed: false, version: goal.version };
  });
  // After the commit, as POST /goals does; a retried tick enqueues again (job ids dedupe), and the sweep
  // finds a goal whose enqueue was lost.
  if (outcome.result === "created" && outcome.version !== undefined) await deps.enqueue({ goalId: outcome.goalId, version: outcome.version });
  const { version: _version, ...result } = outcome as TickResult & { version?: number };
  return result as TickResult;
}

/**
 * Inside the transaction that verifies a schedule's goal: its program (with the plan it was written for)
 * becomes the schedule's pin, which the next tick runs first.
 */
export async function pinVerified(tx: Tx, goal: { id: string; scheduleId: string | null }, at: Date): Promise<void> {
  if (!goal.scheduleId) return;
  const plan = await tx.plan.findUnique({ where: { goalId: goal.id } });
  if (!plan) return;
  // The program of the verified attempt (best-of-N: the candidate EXECUTE chose).
  const code: SchedulePin["code"] = await loadLatestCode(tx, goal.id);
  const pin = {
    goal_id: goal.id,
    code,
    plan: { objective: plan.objective, approach: plan.approach, output_contract: plan.outputContract, checks: plan.checks },
    pinned_at: at.toISOString(),
    sha256: createHash("sha256").update(code.source).digest("hex"),
  };
  await tx.schedule.updateMany({ where: { id: goal.scheduleId }, data: { pin: asJson(pin) } });
}

/** How long a tick of an "overlap: wait" schedule waits before it looks at the previous goal again. */
const WAIT_MS = 1000;

export function createTickWorker(
  deps: TickDeps & {
    connection: Redis;
    prefix: string;
    log: Logger;
    /** Removes a schedule's job scheduler: a deleted schedule's (its tenant deleted, say) stops ticking. */
    forget: (scheduleId: string) => Promise<unknown>;
    lockDurationMs?: number;
    stalledIntervalMs?: number;
  },
): Worker {
  const worker = new Worker(
    QUEUES.schedules,
    async (job: Job, token?: string) => {
      const payload = scheduleJobSchema.safeParse(job.data);
      if (!payload.success) {
        deps.log.error({ jobId: job.id, issues: payload.error.issues }, "malformed schedule tick");
        throw new Error(`malformed schedule tick: ${payload.error.message}`);
      }
      const tick = await runTick(deps, payload.data.scheduleId, String(job.id));
      if (tick.result === "wait") {
        await job.moveToDelayed(Date.now() + WAIT_MS, token);
        throw new DelayedError();
      }
      if (tick.result === "gone") await deps.forget(payload.data.scheduleId);
      deps.log.info({ scheduleId: payload.data.scheduleId, jobId: job.id, ...tick }, "schedule ticked");
      return tick;
    },
    {
      connection: deps.connection,
      prefix: deps.prefix,
      concurrency: 1,
      autorun: false,
      ...(deps.lockDurationMs ? { lockDuration: deps.lockDurationMs } : {}),
      ...(deps.stalledIntervalMs ? { stalledInterval: deps.stalledIntervalMs } : {}),
    },
  );
  worker.on("failed", (job, err) => deps.log.warn({ jobId: job?.id, err: err.message }, "schedule tick failed"));
  worker.on("error", (err) => deps.log.error({ err }, "schedule worker error"));
  return worker;
}

/**
 * Every schedule of this queue prefix that is not paused has its job scheduler (Redis may have lost
 * them); upserting one that exists changes nothing. Returns how many were written.
 */
export async function restoreJobSchedulers(prisma: PrismaClient, queue: Queue, prefix: string): Promise<number> {
  const rows = await prisma.schedule.findMany({ where: { queuePrefix: prefix, paused: false }, select: { id: true, cron: true, timezone: true, everyMs: true }, take: 1000 });
  let restored = 0;
  for (const s of rows) {
    if (await queue.getJobScheduler(s.id)) continue;
    await queue.upsertJobScheduler(s.id, scheduleRepeat(s), scheduleTickTemplate(s.id));
    restored++;
  }
  return restored;
}
