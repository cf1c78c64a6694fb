// What the code reports to monitoring, as calls on an interface: packages and handlers call these, the
// apps pass in an implementation (@loopsmith/metrics, prom-client) or leave the no-op default. So nothing
// but the apps and @loopsmith/metrics imports prom-client, and a test can pass a recorder.
//
// Labels are bounded by design: states, outcomes and failure reasons are closed sets; provider and model
// names are capped by the implementation. No goal, tenant or delivery ids.

/** How a sandbox run ended: exit 0, another exit code, killed at its time limit, killed for memory, stopped because its goal moved on (cancelled), or the sandbox itself failed. */
export type SandboxOutcome = "exit_zero" | "exit_nonzero" | "timeout" | "oom" | "aborted" | "error";
/**
 * A part of a goal's step: reading the goal (and its tenant's admission), the state's handler (its reads, a
 * sandbox run or a model call), committing the move, and scheduling what follows.
 */
export type StepPhase = "read" | "handler" | "commit" | "schedule";
/** One model call: an answer, an answer that failed its schema, or no answer (provider down, refused). */
export type ModelCallOutcome = "ok" | "output_error" | "unavailable";
/** One webhook HTTP attempt: a 2xx, a failure (retried while tries remain), 410 Gone, or a URL refused by the SSRF guard. */
export type WebhookAttemptOutcome = "delivered" | "failed" | "gone" | "refused";
/** How a delivery ended: a 2xx came back, tries ran out, or the receiver's 410 disabled the goal's webhook. */
export type WebhookDeliveryOutcome = "delivered" | "dead" | "disabled";

export interface Metrics {
  /**
   * A goal moved `from` -> `to` after `secondsInState` in `from`; `reason` for moves to failed;
   * `secondsSinceSubmit` when the move ended the goal (verified, failed, cancelled): its whole duration.
   */
  goalMoved(m: { from: string; to: string; secondsInState: number; reason?: string | null; secondsSinceSubmit?: number }): void;
  /** A program (or a check's run) finished in the sandbox. */
  sandboxRun(m: { outcome: SandboxOutcome; seconds: number }): void;
  /** A model call that went out (not one reused from the ledger). */
  modelCall(m: { provider: string; model: string; outcome: ModelCallOutcome; seconds: number; tokensIn: number; tokensOut: number; costUsd: number }): void;
  /** A part of a step of a goal in `state` took `seconds`. */
  stepPhase(m: { state: string; phase: StepPhase; seconds: number }): void;
  /** A queued job started `waitSeconds` after it became due. */
  jobStarted(m: { queue: string; waitSeconds: number }): void;
  webhookAttempt(m: { outcome: WebhookAttemptOutcome; seconds: number }): void;
  webhookDelivery(m: { outcome: WebhookDeliveryOutcome }): void;
  /** An HTTP request answered: `route` is the route's template (/goals/:id), never the raw URL. */
  httpRequest(m: { route: string; method: string; statusCode: number; seconds: number }): void;
}

/** Reports nothing: the default wherever no Metrics is passed. */
export const noopMetrics: Metrics = Object.freeze({
  goalMoved() {},
  sandboxRun() {},
  modelCall() {},
  stepPhase() {},
  jobStarted() {},
  webhookAttempt() {},
  webhookDelivery() {},
  httpRequest() {},
});
