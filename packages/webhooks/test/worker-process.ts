// A delivery worker in a process of its own, for tests that SIGKILL it in the middle of an attempt.
//   node --import tsx packages/webhooks/test/worker-process.ts '{"prefix": "...", "env": {...}, "lockDurationMs": 2000, "stalledIntervalMs": 1000}'
import { createLogger } from "@loopsmith/core";
import { createDeliveryWorker, webhookConfigSchema } from "../src/index";
import { services, testSecretBox } from "./support";

const opts = JSON.parse(process.argv[2] ?? "{}") as { prefix: string; env: Record<string, string>; lockDurationMs: number; stalledIntervalMs: number };
const { prisma, redis } = services();
const worker = createDeliveryWorker({
  prisma,
  connection: redis,
  prefix: opts.prefix,
  config: webhookConfigSchema.parse(opts.env),
  secretBox: testSecretBox(),
  log: createLogger({ name: "webhooks-test-child", level: "silent" }),
  lockDurationMs: opts.lockDurationMs,
  stalledIntervalMs: opts.stalledIntervalMs,
});
await worker.waitUntilReady();
console.log("delivery worker ready");
