// What packages/db's tests that talk to Postgres share: the generated client (git-ignored, so generated
// first; skipped when up to date, so cheap) and a migrated database of the test file's own, with a client on
// it, dropped after the file.
import { execFileSync } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
import { migrate, paths } from "@loopsmith/db-tooling";
import { dropDatabase, tempDatabaseName, urlForDatabase } from "../../../db-tooling/test/temp-db";

export async function testDatabase() {
  execFileSync("bash", [path.join(paths.repoRoot, "scripts", "prisma-generate.sh")], { stdio: "ignore" });
  const db = await import("../../src/index");
  const name = tempDatabaseName();
  const it = { db, url: urlForDatabase(name), prisma: undefined as unknown as ReturnType<typeof db.createPrisma> };
  beforeAll(async () => {
    await migrate(it.url);
    it.prisma = db.createPrisma(it.url);
  });
  afterAll(async () => {
    await it.prisma?.$disconnect();
    await dropDatabase(name);
  });
  return it;
}
