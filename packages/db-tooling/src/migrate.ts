// Applies prisma/migrations/*/migration.sql with the same `_prisma_migrations` bookkeeping as
// `prisma migrate deploy`, so either tool can take over a database the other one migrated. It exists
// because `prisma migrate deploy` needs the native schema-engine binary, which some machines cannot fetch.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { checksumMatches, readMigrations, type MigrationFile } from "./migrations-dir";
import { paths } from "./paths";

export interface MigrateOptions {
  /** Progress lines (one per applied migration, warnings). */
  log?: (line: string) => void;
  /** Defaults to the repository's prisma/migrations. */
  migrationsDir?: string;
}

export interface MigrateResult {
  /** Names of the migrations applied by this call, in order; empty when the database was up to date. */
  applied: string[];
}

/** The key `prisma migrate` itself locks on, so this applier and Prisma's also exclude each other. */
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

// Column for column what Prisma's schema engine creates.
const CREATE_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

/**
 * Brings the database at `databaseUrl` up to date with the migrations directory.
 * Creates the database when it does not exist. Each migration runs in its own transaction and is
 * recorded in the same transaction, so a failing migration leaves neither schema changes nor a row.
 * Safe to call concurrently: callers serialize on an advisory lock and the later ones find nothing to do.
 */
export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const log = options.log ?? (() => {});
  const migrations = await readMigrations(options.migrationsDir ?? paths.migrations);
  await ensureDatabase(databaseUrl, log);

  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [PRISMA_MIGRATE_LOCK_KEY]);
    try {
      await client.query(CREATE_MIGRATIONS_TABLE);
      const { rows } = await client.query<AppliedRow>(
        `SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at`,
      );
      const pending = pendingMigrations(migrations, rows, log);
      const applied: string[] = [];
      for (const migration of pending) {
        await applyOne(client, migration);
        applied.push(migration.name);
        log(`applied migration ${migration.name}`);
      }
      return { applied };
    } finally {
      // If the connection broke, the session lock went with it; keep the original error.
      await client.query("SELECT pg_advisory_unlock($1)", [PRISMA_MIGRATE_LOCK_KEY]).catch(() => {});
    }
  } finally {
    await client.end();
  }
}

function pendingMigrations(local: MigrationFile[], rows: AppliedRow[], log: (line: string) => void): MigrationFile[] {
  const live = rows.filter((r) => r.rolled_back_at === null);
  const failed = live.filter((r) => r.finished_at === null);
  if (failed.length > 0) {
    const names = failed.map((r) => r.migration_name).join(", ");
    throw new Error(
      `migration ${names} failed in an earlier run and was never resolved (Prisma error P3009). ` +
        `Fix the database by hand, then mark it with \`prisma migrate resolve --applied|--rolled-back\`.`,
    );
  }
  const appliedByName = new Map(live.map((r) => [r.migration_name, r]));
  const localNames = new Set(local.map((m) => m.name));
  for (const row of live) {
    if (!localNames.has(row.migration_name)) {
      log(`warning: migration ${row.migration_name} is applied to the database but missing from the migrations directory`);
    }
  }
  const pending: MigrationFile[] = [];
  for (const migration of local) {
    const row = appliedByName.get(migration.name);
    if (!row) {
      pending.push(migration);
    } else if (!checksumMatches(row.checksum, migration)) {
      throw new Error(
        `migration ${migration.name} was modified after it was applied: its migration.sql has checksum ` +
          `${migration.checksum} but the database recorded ${row.checksum}. Applied migrations are immutable; ` +
          `restore the file and put the change in a new migration.`,
      );
    }
  }
  return pending;
}

async function applyOne(client: pg.Client, migration: MigrationFile): Promise<void> {
  const startedAt = new Date();
  await client.query("BEGIN");
  try {
    // Simple-query protocol (no parameters): the script may hold many statements.
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations"
         (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
       VALUES ($1, $2, now(), $3, NULL, NULL, $4, 1)`,
      [randomUUID(), migration.checksum, migration.name, startedAt],
    );
    await client.query("COMMIT");
  } catch (e) {
    await client.query("ROLLBACK").catch(() => {});
    const reason = e instanceof Error ? e.message : String(e);
    throw new Error(`migration ${migration.name} failed and was rolled back: ${reason}`, { cause: e });
  }
}

/** Creates the target database (through the server's `postgres` database) when it is missing. */
async function ensureDatabase(databaseUrl: string, log: (line: string) => void): Promise<void> {
  const probe = new pg.Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
    return;
  } catch (e) {
    if ((e as { code?: string }).code !== "3D000") throw e; // 3D000: database does not exist
  } finally {
    await probe.end().catch(() => {});
  }
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  url.pathname = "/postgres";
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    log(`created database ${name}`);
  } catch (e) {
    // Another caller created it first: 42P04 duplicate_database, or 23505 when both raced in the catalog.
    const code = (e as { code?: string }).code;
    if (code !== "42P04" && code !== "23505") throw e;
  } finally {
    await admin.end();
  }
}
