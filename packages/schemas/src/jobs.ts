import { z } from "zod";

// The job catalog: every queue and the payload its jobs carry. Producers and consumers import both
// from here so that a renamed queue or a changed payload is a type error, not a silent drop.
export const QUEUES = {
  goals: "goals",
} as const;

export const goalJobSchema = z.object({
  goalId: z.uuid(),
  // The goal version this job was scheduled from: a worker that finds a newer version does nothing.
  version: z.number().int().nonnegative(),
});
export type GoalJob = z.infer<typeof goalJobSchema>;
