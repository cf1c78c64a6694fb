import { randomBytes } from "node:crypto";
import { createConnection } from "node:net";
import type { SecretBox } from "@loopsmith/db";
import { loadWebhookSecretBox } from "@loopsmith/webhooks";
import { freePort } from "../../scripts/lib/stack";

// Tests run against the real services that `npm test` starts (scripts/setup.sh). When one is missing
// they fail loudly with what is missing: they never skip.
export const DATABASE_URL = process.env.DATABASE_URL ?? "postgresql://postgres:postgres@127.0.0.1:5432/loopsmith";
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

/** The queue prefix and runner id of a loop shared by the files of a worker start with this. */
export const SHARED_RUNNER_PREFIX = "lstest-shared-";

export function randomPrefix(label: string): string {
  return `lstest-${label}-${randomBytes(4).toString("hex")}`;
}

let secretBox: SecretBox | undefined;
/**
 * The webhook secret key of this checkout (.loopsmith/webhook-secret.key, generated on first use), the one
 * an API or runner started here without WEBHOOK_SECRET_KEY uses too: every tenant in the test database
 * stays readable by every test and child process.
 */
export function testSecretBox(): SecretBox {
  return (secretBox ??= loadWebhookSecretBox({}).box);
}

/** A TCP port on loopback that nothing listens on (bound, then released). */
export const closedPort = freePort;

export async function assertTcp(name: string, host: string, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = createConnection({ host, port }, () => {
      s.end();
      resolve();
    });
    s.on("error", (e) =>
      reject(new Error(`${name} is not reachable at ${host}:${port} (${e.message}). Run the suite with \`npm test\`, which starts it.`)),
    );
  });
}
