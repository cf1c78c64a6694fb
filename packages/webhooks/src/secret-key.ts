// The key webhook signing secrets are encrypted with. From configuration (WEBHOOK_SECRET_KEY) in
// production; otherwise generated on first start and kept in a file, which is enough on one machine. The
// API (tenant creation, rotation) and the runner (signing) must hold the same key.
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createKeyFileOnce, LoopSmithError } from "@loopsmith/core";
import { createSecretBox, SECRET_KEY_BYTES, type SecretBox } from "@loopsmith/db";

// packages/webhooks/src -> the repository root, whose .loopsmith/ is git-ignored.
export const DEFAULT_WEBHOOK_SECRET_KEY_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../.loopsmith/webhook-secret.key");

export interface LoadedSecretBox {
  box: SecretBox;
  /** Where the key came from, for the start-up log. */
  source: "config" | "file" | "generated";
  file?: string;
}

export function loadWebhookSecretBox(config: { WEBHOOK_SECRET_KEY?: readonly Buffer[]; WEBHOOK_SECRET_KEY_FILE?: string }): LoadedSecretBox {
  if (config.WEBHOOK_SECRET_KEY?.length) return { box: createSecretBox(config.WEBHOOK_SECRET_KEY), source: "config" };
  const file = config.WEBHOOK_SECRET_KEY_FILE ?? DEFAULT_WEBHOOK_SECRET_KEY_FILE;
  const created = createKeyFileOnce(file, () => randomBytes(SECRET_KEY_BYTES).toString("base64") + "\n");
  const text = fs.readFileSync(file, "utf8").trim();
  const key = Buffer.from(text, "base64");
  if (key.length !== SECRET_KEY_BYTES || key.toString("base64") !== text) {
    throw new LoopSmithError("LS_ERR_CONFIG", `WEBHOOK_SECRET_KEY_FILE ${file} does not hold base64 of ${SECRET_KEY_BYTES} bytes`);
  }
  return { box: createSecretBox([key]), source: created ? "generated" : "file", file };
}
