// The tenant CLI. `npm run tenant:create -- --name acme [--approval-threshold-usd 2.5]` creates a tenant and
// prints its API key and webhook signing secret as JSON (the key is shown only here: it is stored hashed);
// `npm run tenant -- keys|secrets ...` manages a tenant's keys and secrets (see TENANT_USAGE).
import { configOrExit } from "@loopsmith/core";
import { createPrisma } from "@loopsmith/db";
import { loadWebhookSecretBox } from "@loopsmith/webhooks";
import { loadApiConfig } from "./config";
import { tenantCommand } from "./tenant-commands";

const config = configOrExit("tenant", () => loadApiConfig(process.env));
const prisma = createPrisma(config.DATABASE_URL);
let code = 0;
try {
  const { box } = loadWebhookSecretBox(config);
  const res = await tenantCommand(process.argv.slice(2), { prisma, secretBox: box });
  (res.code === 0 ? console.log : console.error)(res.out);
  code = res.code;
} finally {
  await prisma.$disconnect();
}
process.exit(code);
