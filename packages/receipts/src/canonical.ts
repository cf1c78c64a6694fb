import { createHash } from "node:crypto";

export { canonicalJson } from "./canonical-json";

export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}
