import { z } from "zod";
import { baseConfigSchema, parseConfig } from "@loopsmith/core";
import { modelConfigSchema, pricingConfigSchema } from "@loopsmith/models";
import { metricsConfigSchema } from "@loopsmith/metrics";
import { KEY_ID } from "@loopsmith/receipts";
import { DEFAULT_POOL_OPTIONS, MiB } from "@loopsmith/sandbox";
import { stepRetryConfigSchema } from "@loopsmith/schemas";
import { webhookConfigSchema } from "@loopsmith/webhooks";
import { parseSigningKey } from "./receipt-key";

export const runnerConfigSchema = baseConfigSchema
  .extend(modelConfigSchema.shape)
  .extend(pricingConfigSchema.shape)
  .extend(stepRetryConfigSchema.shape)
  .extend(webhookConfigSchema.shape)
  .extend(metricsConfigSchema.shape)
  .extend({
    // Prometheus /metrics of this runner (README "Metrics"): off unless a port is set (9464 is the usual
    // one); on 127.0.0.1 unless RUNNER_METRICS_HOST opens it wider (then set METRICS_TOKEN too).
    RUNNER_METRICS_PORT: z.coerce.number().int().min(0).max(65535).default(0),
    RUNNER_METRICS_HOST: z.string().min(1).default("127.0.0.1"),
    RUNNER_ID: z.string().regex(/^[a-zA-Z0-9_.-]+$/).optional(),
    // What goals created by schedule ticks record as the LoopSmith that accepted them, when the code is
    // not a git checkout (an image); the API's setting of the same name does this for POST /goals.
    LOOPSMITH_VERSION: z.string().min(1).max(200).optional(),
    RUNNER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(1),
    // How long SIGTERM waits for the job in hand before releasing it back to the queue.
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(30_000),
    SELF_CHECK_TIMEOUT_MS: z.coerce.number().int().positive().default(60_000),
    // The engine runtime sandbox containers run under: "auto" takes gVisor (runsc) wherever the engine
    // offers it, else the engine's default (runc); a name (runc, runsc, any runtime registered with the
    // engine) is required to exist: the runner refuses to start without it.
    SANDBOX_RUNTIME: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]*$/, 'a runtime registered with the Docker engine (runc, runsc, ...) or "auto"')
      .default("auto"),
    // The sandbox pool (issue 12): idle pre-started containers kept per runner (unset: RUNNER_CONCURRENCY;
    // 0: none, every run starts its own), replaced after SANDBOX_POOL_TTL_MS idle, and never more than
    // SANDBOX_POOL_MAX_IDLE_MB of memory limits idle at once. SANDBOX_PREIMPORT: the modules the waiting
    // interpreter imports (comma-separated; "none" turns pre-import off: every program in a pristine process.
    // Not "": an empty variable means unset, like every other, and unset is the default).
    SANDBOX_POOL_SIZE: z.coerce.number().int().min(0).max(64).optional(),
    SANDBOX_POOL_TTL_MS: z.coerce.number().int().min(10_000).default(DEFAULT_POOL_OPTIONS.ttlMs),
    SANDBOX_POOL_MAX_IDLE_MB: z.coerce.number().int().min(0).default(DEFAULT_POOL_OPTIONS.maxIdleBytes / MiB),
    // When a handed-out container's replacement starts: 0 (the default) at hand-out, so that it is being made
    // while the program runs and the goal's next step comes; otherwise when the run ends, or after this long
    // if the run is still going (the program then has the CPU to itself for that long). See benchmarks.md.
    SANDBOX_POOL_REFILL_DELAY_MS: z.coerce.number().int().min(0).max(600_000).default(DEFAULT_POOL_OPTIONS.refillDelayMs),
    SANDBOX_PREIMPORT: z
      .string()
      .regex(/^none$|^[A-Za-z_][A-Za-z0-9_.]*(,[A-Za-z_][A-Za-z0-9_.]*)*$/, 'comma-separated module names, or "none"')
      .default(DEFAULT_POOL_OPTIONS.preimport.join(",")),
    // A job whose runner stops renewing its lock (the process died) is handed to another runner once the
    // lock has lapsed (renewed every WORKER_LOCK_MS / 2, so 1/2 to 1 lock after the death) and a stalled-
    // job check has seen it twice: BullMQ's check marks the active jobs on one pass and moves those still
    // unlocked on the next, one pass per STALLED_INTERVAL_MS across all runners. So the interval must be
    // short beside the lock: at 30 s each (BullMQ's defaults, ours before issue 16.7) a step waited
    // 37-82 s. The lock stays long: a runner whose event loop stalls past half of it loses its step to
    // another runner, and that costs a try of the step (see runtime.ts).
    WORKER_LOCK_MS: z.coerce.number().int().min(1000).default(30_000),
    STALLED_INTERVAL_MS: z.coerce.number().int().min(500).default(5_000),
    // Liveness: each runner refreshes a Redis key; sandbox containers of runners whose key expired are
    // removed by any other runner's sweep.
    HEARTBEAT_TTL_MS: z.coerce.number().int().min(1000).default(30_000),
    SWEEP_INTERVAL_MS: z.coerce.number().int().min(500).default(30_000),
    // The sweep reschedules a goal (or a webhook delivery) only after it has been quiet this long: its job
    // may be a moment away.
    SWEEP_QUIET_MS: z.coerce.number().int().min(1000).default(60_000),
    // Time limit of one deterministic check (checks run on worker threads; one that overruns is stopped
    // and fails). Thread start-up is not part of it.
    CHECK_TIMEOUT_MS: z.coerce.number().int().min(100).default(30_000),
    // Progress guard: the same attempt outcome STUCK_REPEATS times within the last STUCK_WINDOW attempts
    // ends the goal failed/stuck.
    STUCK_REPEATS: z.coerce.number().int().min(2).default(3),
    STUCK_WINDOW: z.coerce.number().int().min(2).default(6),
    // Tenant fairness (README "Tenant limits"): a step runs only while fewer than TENANT_MAX_ACTIVE_GOALS
    // of its tenant's working goals are older than its goal; the step of a younger goal is put back
    // (delayed, its tries untouched) for TENANT_DEFER_MS per goal it must wait for, at most ten times
    // that. So however many goals a tenant submits at once, at most this many of them take turns in the
    // queue, and another tenant's step waits behind at most that many of theirs. 0 disables the cap.
    TENANT_MAX_ACTIVE_GOALS: z.coerce.number().int().min(0).default(4),
    TENANT_DEFER_MS: z.coerce.number().int().min(50).default(1000),
    // A goal's inputs, checker files, workspace and frozen plan, which never change, are kept in the runner
    // between its steps (each step read all four); this bounds them across goals, least recently used out.
    // 0 reads them for every step.
    RUNNER_GOAL_CACHE_MB: z.coerce.number().int().min(0).max(65536).default(64),
    // How long a goal waits in awaiting_approval before it fails with approval_timeout.
    APPROVAL_TIMEOUT_SECONDS: z.coerce.number().int().min(1).default(24 * 3600),
    // Token estimate for a model call's output, reserved before the call (the real figure settles after).
    MODEL_OUTPUT_TOKENS_ESTIMATE: z.coerce.number().int().min(0).default(1024),
    // Testing only: "after-commit:<state>" makes the runner SIGKILL itself right after committing a move
    // out of <state>, before scheduling the next step (the crash-resume tests use it).
    RUNNER_FAULT: z.string().regex(/^after-commit:[a-z_]+$/).optional(),
    // The Ed25519 key that signs receipts (PKCS#8: PEM, or base64 of the DER), and the id that names it in
    // the published key list. Without a key, one is generated on first start and kept in RECEIPT_KEY_FILE
    // (default .loopsmith/receipt-key.pem in the checkout), fine for a demo, not for production.
    RECEIPT_SIGNING_KEY: z
      .string()
      .optional()
      .superRefine((v, ctx) => {
        if (v === undefined) return;
        try {
          parseSigningKey(v);
        } catch (e) {
          ctx.addIssue({ code: "custom", message: (e as Error).message });
        }
      }),
    RECEIPT_KEY_ID: z.string().regex(KEY_ID, "letters, digits and . _ : - (up to 64)").optional(),
    RECEIPT_KEY_FILE: z.string().min(1).optional(),
    // issue 25: the signing key's expiry, published as its not_after. A receipt issued after it does not
    // verify, so the runner neither starts with a key past it nor signs past it (rotate before then).
    RECEIPT_KEY_NOT_AFTER: timestamp().optional(),
    // Keys to revoke, "KEY_ID=RFC3339,...": each published as that key's revoked_at, after which its
    // receipts do not verify. Whoever holds a leaked key can date a receipt anything, so give the earliest
    // moment it may have leaked. A revocation is never lifted and only ever moved earlier.
    RECEIPT_KEYS_REVOKED: z
      .string()
      .default("")
      .transform((raw, ctx) => {
        const revoked: { keyId: string; at: Date }[] = [];
        for (const entry of raw.split(",").map((e) => e.trim()).filter(Boolean)) {
          const eq = entry.indexOf("=");
          const [keyId, at] = [entry.slice(0, eq), entry.slice(eq + 1)];
          const when = timestamp().safeParse(at);
          if (eq < 0 || !KEY_ID.test(keyId) || !when.success) {
            ctx.addIssue({ code: "custom", message: `"${entry.slice(0, 120)}" is not KEY_ID=TIMESTAMP (an RFC 3339 timestamp, like receipts-2025=2026-03-01T00:00:00Z)` });
          } else if (revoked.some((r) => r.keyId === keyId)) {
            ctx.addIssue({ code: "custom", message: `key ${keyId} is listed twice` });
          } else revoked.push({ keyId, at: when.data });
        }
        return revoked;
      }),
  });

/** An RFC 3339 timestamp with its offset, as a Date (digits past the millisecond dropped: the key's window only narrows). */
function timestamp() {
  return z.iso.datetime({ offset: true, error: "an RFC 3339 timestamp with an offset, like 2027-01-01T00:00:00Z" }).transform((s) => new Date(s));
}
export type RunnerConfig = z.output<typeof runnerConfigSchema>;

/** The sandbox pool's settings from the runner's config (see createDockerSandbox). */
export function sandboxPoolOptions(
  config: Pick<RunnerConfig, "SANDBOX_POOL_SIZE" | "SANDBOX_POOL_TTL_MS" | "SANDBOX_POOL_MAX_IDLE_MB" | "SANDBOX_POOL_REFILL_DELAY_MS" | "SANDBOX_PREIMPORT" | "RUNNER_CONCURRENCY">,
) {
  return {
    size: config.SANDBOX_POOL_SIZE ?? config.RUNNER_CONCURRENCY,
    ttlMs: config.SANDBOX_POOL_TTL_MS,
    refillDelayMs: config.SANDBOX_POOL_REFILL_DELAY_MS,
    maxIdleBytes: config.SANDBOX_POOL_MAX_IDLE_MB * MiB,
    preimport: config.SANDBOX_PREIMPORT === "none" ? [] : config.SANDBOX_PREIMPORT.split(",").filter((m) => m.length > 0),
  };
}

export function loadRunnerConfig(env: Record<string, string | undefined>): Readonly<RunnerConfig> {
  return parseConfig(runnerConfigSchema, env);
}
