// The Prometheus implementation of @loopsmith/core's Metrics: one Registry per process (never prom-client's
// global one, so that tests can build several), the series README "Metrics" lists, and scrape-time
// collectors for what is cheaper to read than to count (goals by state, queue depth, the sandbox pool).
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Metrics } from "@loopsmith/core";

/** What a /metrics endpoint serves. */
export interface Exposition {
  contentType: string;
  text(): Promise<string>;
}

export interface PromMetrics extends Metrics, Exposition {
  registry: Registry;
  /** A gauge whose values are read at scrape time (see the add* collectors below). */
  scrapeGauge(o: ScrapeGaugeOptions): void;
}

export interface ScrapeGaugeOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  /** The current values; a reader that throws keeps the last values and counts an error. */
  read: () => Promise<{ labels: Record<string, string>; value: number }[]>;
  /** Reuse the last read for this long (ms): a scrape every few seconds must not hammer Postgres. */
  cacheMs?: number;
}

/** Distinct (provider, model) pairs kept as labels; past this, a new pair counts as model="other". */
export const MAX_MODEL_LABELS = 50;

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

const BUCKETS = {
  state: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600, 6 * 3600, 24 * 3600],
  sandbox: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
  model: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  step: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  queue: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
  webhook: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
  http: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  // A goal's whole life: seconds for a scripted one, an hour or a day with an approval gate or a slow model.
  goal: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600],
};

export function createPromMetrics(o: { app: string; defaultMetrics?: boolean; now?: () => number } = { app: "loopsmith" }): PromMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ app: o.app });
  if (o.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: "loopsmith_" });
  const now = o.now ?? Date.now;

  const transitions = new Counter({ name: "loopsmith_goal_transitions_total", help: "Goal moves made by the runner, by from and to state.", labelNames: ["from", "to"], registers: [registry] });
  const failures = new Counter({ name: "loopsmith_goal_failures_total", help: "Goals the runner moved to failed, by failure reason.", labelNames: ["reason"], registers: [registry] });
  const timeInState = new Histogram({
    name: "loopsmith_goal_state_duration_seconds",
    help: "Time a goal spent in a state, observed when the runner moves it out.",
    labelNames: ["state"],
    buckets: BUCKETS.state,
    registers: [registry],
  });
  const goalDuration = new Histogram({
    name: "loopsmith_goal_duration_seconds",
    help: "From a goal's submission to its end, by final state (verified, failed, cancelled), observed when the runner ends it.",
    labelNames: ["state"],
    buckets: BUCKETS.goal,
    registers: [registry],
  });
  const sandboxRuns = new Histogram({
    name: "loopsmith_sandbox_run_duration_seconds",
    help: "Sandbox runs (programs and checks' runs) by outcome: exit_zero, exit_nonzero, timeout, oom, aborted, error.",
    labelNames: ["outcome"],
    buckets: BUCKETS.sandbox,
    registers: [registry],
  });
  const modelCalls = new Counter({ name: "loopsmith_model_calls_total", help: "Model calls sent, by provider, model and outcome (ok, output_error, unavailable).", labelNames: ["provider", "model", "outcome"], registers: [registry] });
  const modelTokens = new Counter({ name: "loopsmith_model_tokens_total", help: "Model tokens, by provider, model and direction (input, output).", labelNames: ["provider", "model", "direction"], registers: [registry] });
  const modelCost = new Counter({ name: "loopsmith_model_cost_usd_total", help: "Model spend in USD from the price table, by provider and model.", labelNames: ["provider", "model"], registers: [registry] });
  const modelLatency = new Histogram({ name: "loopsmith_model_call_duration_seconds", help: "Model call latency, by provider and model.", labelNames: ["provider", "model"], buckets: BUCKETS.model, registers: [registry] });
  const stepPhases = new Histogram({
    name: "loopsmith_step_phase_duration_seconds",
    help: "Parts of a goal's step, by the state it ran in and phase: read (the goal and its tenant's admission), handler (the state's work: its reads, a sandbox run, a model call), commit (the move), schedule (what follows).",
    labelNames: ["state", "phase"],
    buckets: BUCKETS.step,
    registers: [registry],
  });
  const jobLatency = new Histogram({
    name: "loopsmith_queue_job_latency_seconds",
    help: "From when a job was due to when its work started (a goal's step, a delivery's first attempt), once per job, by queue; waits for tenant fairness or webhook slots count in.",
    labelNames: ["queue"],
    buckets: BUCKETS.queue,
    registers: [registry],
  });
  const webhookAttempts = new Histogram({
    name: "loopsmith_webhook_attempt_duration_seconds",
    help: "Webhook HTTP attempts by outcome: delivered, failed (retried while tries remain), gone (410), refused (SSRF guard).",
    labelNames: ["outcome"],
    buckets: BUCKETS.webhook,
    registers: [registry],
  });
  const webhookDeliveries = new Counter({ name: "loopsmith_webhook_deliveries_total", help: "Webhook deliveries ended, by outcome: delivered, dead, disabled (410 Gone).", labelNames: ["outcome"], registers: [registry] });
  const http = new Histogram({
    name: "loopsmith_http_request_duration_seconds",
    help: "API requests by route template, method and status code.",
    labelNames: ["route", "method", "status_code"],
    buckets: BUCKETS.http,
    registers: [registry],
  });
  const collectErrors = new Counter({ name: "loopsmith_metrics_collect_errors_total", help: "Scrape-time reads that failed (their gauge keeps its last values).", labelNames: ["gauge"], registers: [registry] });

  const pairs = new Set<string>();
  const modelLabels = (provider: string, model: string) => {
    const key = `${provider}\u0000${model}`;
    if (pairs.has(key)) return { provider, model };
    if (pairs.size < MAX_MODEL_LABELS) {
      pairs.add(key);
      return { provider, model };
    }
    // Providers are the server's few configured ones; model names come from goals, so they are the ones capped.
    return { provider, model: "other" };
  };
  const seconds = (s: number) => (Number.isFinite(s) && s > 0 ? s : 0);

  return {
    registry,
    contentType: registry.contentType,
    text: () => registry.metrics(),
    goalMoved(m) {
      transitions.inc({ from: m.from, to: m.to });
      if (m.to === "failed") failures.inc({ reason: m.reason ?? "unknown" });
      timeInState.observe({ state: m.from }, seconds(m.secondsInState));
      if (m.secondsSinceSubmit !== undefined) goalDuration.observe({ state: m.to }, seconds(m.secondsSinceSubmit));
    },
    sandboxRun(m) {
      sandboxRuns.observe({ outcome: m.outcome }, seconds(m.seconds));
    },
    modelCall(m) {
      const l = modelLabels(m.provider, m.model);
      modelCalls.inc({ ...l, outcome: m.outcome });
      if (m.tokensIn > 0) modelTokens.inc({ ...l, direction: "input" }, m.tokensIn);
      if (m.tokensOut > 0) modelTokens.inc({ ...l, direction: "output" }, m.tokensOut);
      // Touched even at 0, so that a free (scripted or local) model still shows a series.
      modelCost.inc(l, m.costUsd > 0 ? m.costUsd : 0);
      modelLatency.observe(l, seconds(m.seconds));
    },
    stepPhase(m) {
      stepPhases.observe({ state: m.state, phase: m.phase }, seconds(m.seconds));
    },
    jobStarted(m) {
      jobLatency.observe({ queue: m.queue }, seconds(m.waitSeconds));
    },
    webhookAttempt(m) {
      webhookAttempts.observe({ outcome: m.outcome }, seconds(m.seconds));
    },
    webhookDelivery(m) {
      webhookDeliveries.inc({ outcome: m.outcome });
    },
    httpRequest(m) {
      http.observe({ route: m.route, method: METHODS.has(m.method) ? m.method : "OTHER", status_code: String(m.statusCode) }, seconds(m.seconds));
    },
    scrapeGauge(g) {
      let last: { at: number; rows: { labels: Record<string, string>; value: number }[] } | undefined;
      new Gauge({
        name: g.name,
        help: g.help,
        labelNames: [...g.labelNames],
        registers: [registry],
        async collect() {
          if (last === undefined || now() - last.at >= (g.cacheMs ?? 0)) {
            try {
              last = { at: now(), rows: await g.read() };
            } catch {
              collectErrors.inc({ gauge: g.name });
              if (last === undefined) return;
            }
          }
          // Label sets that vanished (no goal left in a state) go, rather than keep their last count.
          this.reset();
          for (const r of last.rows) this.set(r.labels, r.value);
        },
      });
    },
  };
}

/** Goals by state and failure reason, counted in Postgres at scrape time (all tenants; no tenant label). */
export function addGoalStateGauge(m: PromMetrics, count: () => Promise<{ state: string; failureReason: string | null; count: number }[]>, cacheMs = 10_000): void {
  m.scrapeGauge({
    name: "loopsmith_goals",
    help: "Goals by state and failure reason (failure_reason is empty unless the state is failed), read from Postgres.",
    labelNames: ["state", "failure_reason"],
    cacheMs,
    read: async () => (await count()).map((r) => ({ labels: { state: r.state, failure_reason: r.failureReason ?? "" }, value: r.count })),
  });
}

/** The job counts BullMQ keeps per queue (waiting, active, delayed, prioritized, failed, ...). */
export interface CountableQueue {
  name: string;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
}

export const QUEUE_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children", "paused", "failed"] as const;

export function addQueueDepthGauge(m: PromMetrics, queues: readonly CountableQueue[], cacheMs = 2000): void {
  m.scrapeGauge({
    name: "loopsmith_queue_jobs",
    help: "Jobs in each queue by status, from BullMQ's counts.",
    labelNames: ["queue", "status"],
    cacheMs,
    read: async () => {
      const all = await Promise.all(queues.map(async (q) => ({ q, counts: await q.getJobCounts(...QUEUE_STATES) })));
      return all.flatMap(({ q, counts }) => QUEUE_STATES.map((s) => ({ labels: { queue: q.name, status: s }, value: counts[s] ?? 0 })));
    },
  });
}

/** The sandbox pool of this runner: idle containers, those of them ready to take a program, and the target. */
export function addPoolGauge(m: PromMetrics, stats: () => { idle: number; ready: number; target: number }): void {
  m.scrapeGauge({
    name: "loopsmith_sandbox_pool_containers",
    help: "This runner's pool of pre-started sandbox containers: idle (all), ready (started and waiting), target.",
    labelNames: ["status"],
    read: async () => {
      const s = stats();
      return [
        { labels: { status: "idle" }, value: s.idle },
        { labels: { status: "ready" }, value: s.ready },
        { labels: { status: "target" }, value: s.target },
      ];
    },
  });
}
