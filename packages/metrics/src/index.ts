// @loopsmith/metrics: Prometheus metrics (prom-client) behind @loopsmith/core's Metrics interface.
export { metricsConfigSchema, type MetricsConfig } from "./config";
export {
  addGoalStateGauge,
  addPoolGauge,
  addQueueDepthGauge,
  createPromMetrics,
  MAX_MODEL_LABELS,
  QUEUE_STATES,
  type CountableQueue,
  type Exposition,
  type PromMetrics,
  type ScrapeGaugeOptions,
} from "./prom";
export { startMetricsServer, type MetricsServer } from "./server";
export { bearerToken, tokenMatches } from "./token";
