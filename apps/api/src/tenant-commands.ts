// The tenant CLI's commands (apps/api/src/tenant-cli.ts), as a function of its arguments and the database,
// so that tests run them without a child process. Output is JSON; keys and secrets are printed once.
import { parseArgs } from "node:util";
import {
  createTenant,
  expireWebhookSecret,
  issueApiKey,
  listApiKeys,
  listWebhookSecrets,
  revokeApiKey,
  rotateApiKey,
  UUID,
  type PrismaClient,
  type SecretBox,
} from "@loopsmith/db";
import { DEFAULT_KEY_OVERLAP_SECONDS } from "./routes/admin-keys";

export const TENANT_USAGE = `usage:
  npm run tenant:create -- --name <name> [--approval-threshold-usd <usd>]
  npm run tenant -- keys create  --tenant <id> [--name <label>] [--expires-in-seconds <s>]
  npm run tenant -- keys list    --tenant <id>
  npm run tenant -- keys revoke  --tenant <id> --key <key id>
  npm run tenant -- keys rotate  --tenant <id> --key <key id> [--overlap-seconds <s>] [--expires-in-seconds <s>]
  npm run tenant -- secrets list   --tenant <id>
  npm run tenant -- secrets expire --tenant <id> --secret <secret id>`;

export interface CommandResult {
  /** 0 done, 1 not found or refused, 64 usage. */
  code: number;
  out: string;
}

const usage = (why: string): CommandResult => ({ code: 64, out: `${why}\n${TENANT_USAGE}` });
const json = (v: unknown, code = 0): CommandResult => ({ code, out: JSON.stringify(v, null, 2) });

function seconds(raw: string | undefined, flag: string): number | undefined | string {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isInteger(n) && n >= 0 ? n : `${flag} must be a whole number of seconds`;
}

export async function tenantCommand(argv: string[], deps: { prisma: PrismaClient; secretBox: SecretBox; now?: () => Date }): Promise<CommandResult> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        name: { type: "string" },
        "approval-threshold-usd": { type: "string" },
        tenant: { type: "string" },
        key: { type: "string" },
        secret: { type: "string" },
        "expires-in-seconds": { type: "string" },
        "overlap-seconds": { type: "string" },
      },
    });
  } catch (e) {
    return usage((e as Error).message);
  }
  const { values, positionals } = parsed;
  const now = deps.now?.() ?? new Date();
  const [group, action] = positionals;

  if (group === undefined) {
    if (!values.name?.trim()) return usage("--name is required");
    const threshold = values["approval-threshold-usd"] === undefined ? null : Number(values["approval-threshold-usd"]);
    if (threshold !== null && !(Number.isFinite(threshold) && threshold >= 0)) return usage("--approval-threshold-usd must be a non-negative number");
    return json(await createTenant(deps.prisma, { name: values.name.trim(), approvalThresholdUsd: threshold, secretBox: deps.secretBox }));
  }

  const tenant = values.tenant;
  if (!tenant || !UUID.test(tenant)) return usage("--tenant <tenant id> is required");
  const expiresIn = seconds(values["expires-in-seconds"], "--expires-in-seconds");
  const overlap = seconds(values["overlap-seconds"], "--overlap-seconds");
  if (typeof expiresIn === "string") return usage(expiresIn);
  if (typeof overlap === "string") return usage(overlap);
  const expiresAt = expiresIn === undefined ? null : new Date(now.getTime() + expiresIn * 1000);
  const notFound = (what: string) => json({ error: `no ${what}` }, 1);
  const id = (v: string | undefined) => (v && UUID.test(v) ? v : null);

  if (group === "keys") {
    if (action === "create") {
      const key = await issueApiKey(deps.prisma, tenant, { name: values.name ?? null, expiresAt, now });
      return key ? json(key) : notFound(`tenant ${tenant}`);
    }
    if (action === "list") {
      const keys = await listApiKeys(deps.prisma, tenant, now);
      return keys ? json({ api_keys: keys }) : notFound(`tenant ${tenant}`);
    }
    const keyId = id(values.key);
    if (action === "revoke" || action === "rotate") {
      if (!keyId) return usage("--key <key id> is required (see keys list)");
      if (action === "revoke") {
        const key = await revokeApiKey(deps.prisma, tenant, keyId, now);
        return key ? json(key) : notFound(`key ${keyId} of tenant ${tenant}`);
      }
      const rotated = await rotateApiKey(deps.prisma, tenant, keyId, { overlapSeconds: overlap ?? DEFAULT_KEY_OVERLAP_SECONDS, name: values.name, expiresAt, now });
      if (!rotated) return notFound(`key ${keyId} of tenant ${tenant}`);
      if ("refused" in rotated) return json({ error: `the key is ${rotated.refused}: issue a new one with keys create` }, 1);
      return json(rotated);
    }
  }
  if (group === "secrets") {
    if (action === "list") {
      const secrets = await listWebhookSecrets(deps.prisma, tenant, now);
      return secrets ? json({ webhook_secrets: secrets }) : notFound(`tenant ${tenant}`);
    }
    if (action === "expire") {
      const secretId = id(values.secret);
      if (!secretId) return usage("--secret <secret id> is required (see secrets list)");
      const res = await expireWebhookSecret(deps.prisma, tenant, secretId, { secretBox: deps.secretBox, now });
      return res ? json(res) : notFound(`webhook secret ${secretId} of tenant ${tenant}`);
    }
  }
  return usage(`unknown command: ${positionals.join(" ")}`);
}
