// A key file made on first start (the demo's receipt signing key, the webhook secret key), when no key
// is configured.
import fs from "node:fs";
import path from "node:path";

/**
 * Creates `file` with `content()` (mode 0600, its directory 0700) unless it exists; true when this call
 * created it. Written beside it and linked into place, so that processes starting together (an API and a
 * runner, several runners) all end up with one key and none reads a half-written file.
 */
export function createKeyFileOnce(file: string, content: () => string | Buffer): boolean {
  if (fs.existsSync(file)) return false;
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  fs.writeFileSync(tmp, content(), { mode: 0o600, flag: "wx" });
  try {
    fs.linkSync(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    return false;
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
