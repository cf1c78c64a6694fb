// Issue 13: the series /metrics serves, their bounded labels, scrape-time gauges and the runner's endpoint.
import { describe, expect, it } from "vitest";
import { sample } from "./parse";
import { addGoalStateGauge, addPoolGauge, addQueueDepthGauge, createPromMetrics, MAX_MODEL_LABELS, startMetricsServer } from "../src/index";


describe("createPromMetrics", () => {
  it("turns each Metrics call into its series", async () => {
    const m = createPromMetrics({ app: "test", defaultMetrics: false });
    m.goalMoved({ from: "inspect", to: "failed", secondsInState: 2, reason: "budget_attempts", secondsSinceSubmit: 42 });
    m.goalMoved({ from: "plan", to: "generate", secondsInState: 0.3 });
    m.sandboxRun({ outcome: "timeout", seconds: 4 });
    m.modelCall({ provider: "scripted", model: "scripted", outcome: "ok", seconds: 0.01, tokensIn: 120, tokensOut: 30, costUsd: 0 });
    m.modelCall({ provider: "anthropic", model: "claude-x", outcome: "ok", seconds: 1.2, tokensIn: 1000, tokensOut: 200, costUsd: 0.0125 });
    m.jobStarted({ queue: "goals", waitSeconds: 0.02 });
    m.stepPhase({ state: "inspect", phase: "commit", seconds: 0.004 });
    m.stepPhase({ state: "inspect", phase: "commit", seconds: 0.03 });
    m.webhookAttempt({ outcome: "gone", seconds: 0.01 });
    m.webhookDelivery({ outcome: "disabled" });
    m.httpRequest({ route: "/goals/:id", method: "GET", statusCode: 200, seconds: 0.004 });
    m.httpRequest({ route: "/goals/:id", method: "BREW", statusCode: 400, seconds: 0.001 });
    const text = await m.text();
    expect(m.contentType).toMatch(/^text\/plain/);
    expect(sample(text, "loopsmith_goal_transitions_total", { from: "inspect", to: "failed" })).toBe(1);
    expect(sample(text, "loopsmith_goal_failures_total", { reason: "budget_attempts" })).toBe(1);
    expect(sample(text, "loopsmith_goal_state_duration_seconds_count", { state: "plan" })).toBe(1);
    expect(sample(text, "loopsmith_goal_state_duration_seconds_sum", { state: "inspect" })).toBe(2);
    // issue 28: submit-to-end duration, by final state, only for the move that ended the goal.
    expect(sample(text, "loopsmith_goal_duration_seconds_count", { state: "failed" })).toBe(1);
    expect(sample(text, "loopsmith_goal_duration_seconds_sum", { state: "failed" })).toBe(42);
    expect(sample(text, "loopsmith_goal_duration_seconds_bucket", { state: "failed", le: "30" })).toBe(0);
    expect(sample(text, "loopsmith_goal_duration_seconds_bucket", { state: "failed", le: "60" })).toBe(1);
    expect(sample(text, "loopsmith_goal_duration_seconds_count", { state: "generate" })).toBeUndefined();
    expect(sample(text, "loopsmith_sandbox_run_duration_seconds_count", { outcome: "timeout" })).toBe(1);
    expect(sample(text, "loopsmith_model_calls_total", { provider: "anthropic", model: "claude-x", outcome: "ok" })).toBe(1);
    expect(sample(text, "loopsmith_model_tokens_total", { provider: "anthropic", model: "claude-x", direction: "input" })).toBe(1000);
    expect(sample(text, "loopsmith_model_cost_usd_total", { provider: "anthropic", model: "claude-x" })).toBe(0.0125);
    // A free model still shows its (zero) spend series.
    expect(sample(text, "loopsmith_model_cost_usd_total", { provider: "scripted", model: "scripted" })).toBe(0);
    expect(sample(text, "loopsmith_queue_job_latency_seconds_count", { queue: "goals" })).toBe(1);
    expect(sample(text, "loopsmith_step_phase_duration_seconds_count", { state: "inspect", phase: "commit" })).toBe(2);
    expect(sample(text, "loopsmith_step_phase_duration_seconds_sum", { state: "inspect", phase: "commit" })).toBeCloseTo(0.034, 6);
    expect(sample(text, "loopsmith_step_phase_duration_seconds_bucket", { state: "inspect", phase: "commit", le: "0.005" })).toBe(1);
    expect(sample(text, "loopsmith_webhook_attempt_duration_seconds_count", { outcome: "gone" })).toBe(1);
    expect(sample(text, "loopsmith_webhook_deliveries_total", { outcome: "disabled" })).toBe(1);
    expect(sample(text, "loopsmith_http_request_duration_seconds_count", { route: "/goals/:id", method: "GET", status_code: "200" })).toBe(1);
    expect(sample(text, "loopsmith_http_request_duration_seconds_count", { route: "/goals/:id", method: "OTHER", status_code: "400" })).toBe(1);
  });

  it("caps the model names it keeps as labels", async () => {
    const m = createPromMetrics({ app: "test", defaultMetrics: false });
    for (let i = 0; i < MAX_MODEL_LABELS + 25; i++) m.modelCall({ provider: "openai-compatible", model: `m-${i}`, outcome: "ok", seconds: 0.1, tokensIn: 1, tokensOut: 1, costUsd: 0 });
    const text = await m.text();
    const series = text.split("\n").filter((l) => l.startsWith("loopsmith_model_calls_total{"));
    expect(series).toHaveLength(MAX_MODEL_LABELS + 1);
    expect(sample(text, "loopsmith_model_calls_total", { provider: "openai-compatible", model: "other", outcome: "ok" })).toBe(25);
  });

  it("reads scrape-time gauges through a cache, drops vanished label sets, and survives a failing read", async () => {
    let clock = 0;
    const m = createPromMetrics({ app: "test", defaultMetrics: false, now: () => clock });
    let reads = 0;
    let rows = [
      { state: "plan", failureReason: null, count: 2 },
      { state: "failed", failureReason: "stuck", count: 1 },
    ];
    let broken = false;
    addGoalStateGauge(
      m,
      async () => {
        reads++;
        if (broken) throw new Error("database down");
        return rows;
      },
      10_000,
    );
    addQueueDepthGauge(m, [{ name: "goals", getJobCounts: async () => ({ waiting: 3, active: 1, delayed: 2 }) }]);
    addPoolGauge(m, () => ({ idle: 2, ready: 1, target: 2 }));
    let text = await m.text();
    expect(sample(text, "loopsmith_goals", { state: "plan", failure_reason: "" })).toBe(2);
    expect(sample(text, "loopsmith_goals", { state: "failed", failure_reason: "stuck" })).toBe(1);
    expect(sample(text, "loopsmith_queue_jobs", { queue: "goals", status: "waiting" })).toBe(3);
    expect(sample(text, "loopsmith_queue_jobs", { queue: "goals", status: "failed" })).toBe(0);
    expect(sample(text, "loopsmith_sandbox_pool_containers", { status: "ready" })).toBe(1);
    rows = [{ state: "verified", failureReason: null, count: 5 }];
    clock = 5000;
    text = await m.text();
    expect(reads).toBe(1);
    clock = 10_000;
    text = await m.text();
    expect(reads).toBe(2);
    expect(sample(text, "loopsmith_goals", { state: "plan", failure_reason: "" })).toBeUndefined();
    expect(sample(text, "loopsmith_goals", { state: "verified", failure_reason: "" })).toBe(5);
    broken = true;
    clock = 20_000;
    text = await m.text();
    expect(sample(text, "loopsmith_goals", { state: "verified", failure_reason: "" })).toBe(5);
    // Counted during that scrape, shown from the next (the registry reads its series side by side).
    text = await m.text();
    expect(sample(text, "loopsmith_metrics_collect_errors_total", { gauge: "loopsmith_goals" })).toBeGreaterThanOrEqual(1);
  });
});

describe("startMetricsServer", () => {
  it("serves GET /metrics, behind the token when one is set", async () => {
    const m = createPromMetrics({ app: "runner" });
    m.sandboxRun({ outcome: "exit_zero", seconds: 0.2 });
    const token = "t".repeat(32);
    const srv = await startMetricsServer({ exposition: m, host: "127.0.0.1", port: 0, token });
    try {
      const url = `http://127.0.0.1:${srv.port}`;
      const ok = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("content-type")).toMatch(/^text\/plain/);
      const body = await ok.text();
      expect(sample(body, "loopsmith_sandbox_run_duration_seconds_count", { outcome: "exit_zero", app: "runner" })).toBe(1);
      // Node's process series too.
      expect(body).toMatch(/^loopsmith_process_resident_memory_bytes/m);
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
      expect((await fetch(`${url}/other`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
    } finally {
      await srv.close();
    }
  });
});
