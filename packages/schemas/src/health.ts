import { z } from "zod";

export const healthzResponse = z.object({ status: z.literal("ok") }).meta({ id: "Healthz" });

export const dependencyNames = ["postgres", "redis", "docker", "sandbox_image"] as const;
export type DependencyName = (typeof dependencyNames)[number];

export const dependencyStatus = z.object({
  ok: z.boolean(),
  latency_ms: z.number(),
  detail: z.string().describe("What was checked, or why it failed (a short message: the full error is in the server's log)."),
  code: z.string().nullable().describe("Why it failed, as an error code (LS_ERR_DATABASE, LS_ERR_SANDBOX_UNAVAILABLE, ...); null when ok."),
});

export const readyzResponse = z
  .object({
    status: z.enum(["ready", "not_ready"]),
    checks: z.object({
      postgres: dependencyStatus,
      redis: dependencyStatus,
      // The names predate readiness from the runners; the API itself never asks the Docker engine.
      docker: dependencyStatus.describe("A runner of this deployment (its queue prefix) is alive: its heartbeat in Redis is fresh."),
      sandbox_image: dependencyStatus.describe(
        "A runner has passed its start-up sandbox self-check (the image runs and imports pandas, a never-ending program is killed at its limit).",
      ),
    }),
    missing: z.array(z.enum(dependencyNames)),
  })
  .meta({ id: "Readyz" });
export type ReadyzResponse = z.infer<typeof readyzResponse>;
