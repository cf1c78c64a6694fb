// Vitest global setup: compiles the API and the runner once, before any worker starts, so that the files
// that spawn them as processes (scripts/lib/proc.ts) find the bundles fresh and none builds beside another.
import { buildAll } from "../../scripts/build";

export default async function setup(): Promise<void> {
  await buildAll();
}
