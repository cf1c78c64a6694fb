// `npm run tenant:create -- --name acme [--approval-threshold-usd 2.5]`: creates a tenant and prints its
// API key and webhook signing secret as JSON. The key is shown only here: it is stored hashed.
import { parseArgs } from "node:util";
import { configOrExit } from "@loopsmith/core";
import { createPrisma, createTenant } from "@loopsmith/db";
import { loadWebhookSecretBox } from "@loopsmith/webhooks";
import { loadApiConfig } from "./config";

const { values } = parseArgs({
  options: { name: { type: "string" }, "approval-threshold-usd": { type: "string" } },
  strict: true,
});
if (!values.name?.trim()) {
  console.error("usage: npm run tenant:create -- --name <name> [--approval-threshold-usd <usd>]");
  process.exit(64);
}
const threshold = values["approval-threshold-usd"] === undefined ? null : Number(values["approval-threshold-usd"]);
if (threshold !== null && !(Number.isFinite(threshold) && threshold >= 0)) {
  console.error("--approval-threshold-usd must be a non-negative number");
  process.exit(64);
}
const config = configOrExit("tenant:create", () => loadApiConfig(process.env));
const prisma = createPrisma(config.DATABASE_URL);
try {
  const { box } = loadWebhookSecretBox(config);
  const created = await createTenant(prisma, { name: values.name.trim(), approvalThresholdUsd: threshold, secretBox: box });
  console.log(JSON.stringify(created, null, 2));
} finally {
  await prisma.$disconnect();
}
