// Writes the next migration for prisma/schema.prisma, computed by Prisma's schema engine (wasm):
//   npm run migration:new -w @loopsmith/db-tooling -- <name>     write prisma/migrations/<timestamp>_<name>/migration.sql
//   npm run migration:new -w @loopsmith/db-tooling -- --check    exit 1 when the schema has changes no migration holds
// DATABASE_URL names the Postgres server used for the temporary shadow database.
import fs from "node:fs/promises";
import path from "node:path";
import { DEFAULT_LOCKFILE, diffMigrationsToSchema, migrationDirName } from "./migration-diff";
import { LOCKFILE_NAME, readLockfile } from "./migrations-dir";
import { paths } from "./paths";

const DEFAULT_DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:5432/loopsmith";

async function main(argv: string[]): Promise<number> {
  const check = argv.includes("--check");
  const name = argv.find((a) => !a.startsWith("--"));
  if (!check && !name) {
    console.error("usage: migration-new-cli.ts <name> | --check");
    return 2;
  }
  // The engine only needs a server; use its maintenance database so the app database need not exist.
  const server = new URL(process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL);
  server.pathname = "/postgres";
  const diff = await diffMigrationsToSchema({ databaseUrl: server.toString() });
  if (!diff.hasChanges) {
    console.log("prisma/schema.prisma and prisma/migrations agree: no new migration needed");
    return 0;
  }
  if (check) {
    console.error("prisma/schema.prisma has changes that no migration holds. The missing migration:\n");
    console.error(diff.sql);
    return 1;
  }
  const dir = path.join(paths.migrations, migrationDirName(name as string));
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, "migration.sql"), diff.sql);
  if ((await readLockfile(paths.migrations)) === null) {
    await fs.writeFile(path.join(paths.migrations, LOCKFILE_NAME), DEFAULT_LOCKFILE);
  }
  console.log(`wrote ${path.relative(paths.repoRoot, path.join(dir, "migration.sql"))}`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
