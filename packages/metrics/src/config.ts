import { z } from "zod";

/**
 * Who may read /metrics. Apps merge it into their config with `.extend(metricsConfigSchema.shape)`.
 * METRICS_TOKEN set: a scrape must send `Authorization: Bearer <METRICS_TOKEN>`. Unset: the API's
 * /metrics is off (403), and the runner's (off unless RUNNER_METRICS_PORT is set) answers anyone who can
 * reach its address (127.0.0.1 unless RUNNER_METRICS_HOST says otherwise).
 */
export const metricsConfigSchema = z.object({
  METRICS_TOKEN: z.string().min(16, "use at least 16 characters").optional(),
});
export type MetricsConfig = z.output<typeof metricsConfigSchema>;
