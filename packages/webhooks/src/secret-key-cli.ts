// Makes sure the webhook secret key exists (generating WEBHOOK_SECRET_KEY_FILE unless WEBHOOK_SECRET_KEY is
// set) and says where it is. Compose runs it in the one-shot `migrate` service, as the unprivileged user,
// so that the key file in the shared volume is readable by the API (which runs unprivileged) whichever of
// the API and the runner starts first.
import { configOrExit, parseConfig } from "@loopsmith/core";
import { webhookConfigSchema } from "./config";
import { loadWebhookSecretBox } from "./secret-key";

const config = configOrExit("loopsmith-webhook-key", () => parseConfig(webhookConfigSchema, process.env));
const loaded = loadWebhookSecretBox(config);
console.log(JSON.stringify({ webhook_secret_key: { source: loaded.source, key_id: loaded.box.keyId, file: loaded.file ?? null } }));
