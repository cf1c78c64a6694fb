import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "../src/migrate";
import { paths } from "../src/paths";
import { databaseExists, dropDatabase, tempDatabaseName, urlForDatabase } from "./temp-db";

const created: string[] = [];
const tempDirs: string[] = [];

function freshDatabase(): { name: string; url: string } {
  const name = tempDatabaseName();
  created.push(name);
  return { name, url: urlForDatabase(name) };
}

/** A writable copy of prisma/migrations. */
function copyOfMigrations(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "loopsmith-migrations-"));
  tempDirs.push(dir);
  fs.cpSync(paths.migrations, dir, { recursive: true });
  return dir;
}

function addMigration(dir: string, name: string, sql: string): void {
  fs.mkdirSync(path.join(dir, name));
  fs.writeFileSync(path.join(dir, name, "migration.sql"), sql);
}

async function query<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

const localMigrations = fs
  .readdirSync(paths.migrations, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
  for (const dir of tempDirs) fs.rmSync(dir, { recursive: true, force: true });
});

describe("migrate()", () => {
  it("creates a missing database, applies every migration once and records it like prisma migrate deploy", async () => {
    const db = freshDatabase();
    expect(await databaseExists(db.name)).toBe(false);
    const lines: string[] = [];

    const first = await migrate(db.url, { log: (l) => lines.push(l) });
    expect(first.applied).toEqual(localMigrations);
    expect(await databaseExists(db.name)).toBe(true);
    expect(lines).toContain(`created database ${db.name}`);

    const rows = await query<{ id: string; checksum: string; finished_at: Date | null; migration_name: string; logs: string | null; rolled_back_at: Date | null; started_at: Date; applied_steps_count: number }>(
      db.url,
      `SELECT * FROM "_prisma_migrations" ORDER BY migration_name`,
    );
    expect(rows.map((r) => r.migration_name)).toEqual(localMigrations);
    for (const row of rows) {
      const file = fs.readFileSync(path.join(paths.migrations, row.migration_name, "migration.sql"));
      expect(row.checksum).toBe(createHash("sha256").update(file).digest("hex"));
      expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(row.finished_at).toBeInstanceOf(Date);
      expect(row.finished_at!.getTime()).toBeGreaterThanOrEqual(row.started_at.getTime());
      expect(row.rolled_back_at).toBeNull();
      expect(row.logs).toBeNull();
      expect(row.applied_steps_count).toBe(1);
    }

    const started = performance.now();
    const second = await migrate(db.url);
    const elapsed = performance.now() - started;
    expect(second.applied).toEqual([]);
    expect(elapsed).toBeLessThan(2_000); // typically ~30 ms: one connection, one lock, one SELECT
    expect(await query(db.url, `SELECT 1 FROM "_prisma_migrations"`)).toHaveLength(localMigrations.length);
  });

  it("creates _prisma_migrations with exactly Prisma's columns", async () => {
    const db = freshDatabase();
    await migrate(db.url);
    const columns = await query<{ column_name: string; data_type: string; len: number | null; nullable: string; column_default: string | null }>(
      db.url,
      `SELECT column_name, data_type, character_maximum_length AS len, is_nullable AS nullable, column_default
       FROM information_schema.columns WHERE table_name = '_prisma_migrations' ORDER BY ordinal_position`,
    );
    expect(columns).toEqual([
      { column_name: "id", data_type: "character varying", len: 36, nullable: "NO", column_default: null },
      { column_name: "checksum", data_type: "character varying", len: 64, nullable: "NO", column_default: null },
      { column_name: "finished_at", data_type: "timestamp with time zone", len: null, nullable: "YES", column_default: null },
      { column_name: "migration_name", data_type: "character varying", len: 255, nullable: "NO", column_default: null },
      { column_name: "logs", data_type: "text", len: null, nullable: "YES", column_default: null },
      { column_name: "rolled_back_at", data_type: "timestamp with time zone", len: null, nullable: "YES", column_default: null },
      { column_name: "started_at", data_type: "timestamp with time zone", len: null, nullable: "NO", column_default: "now()" },
      { column_name: "applied_steps_count", data_type: "integer", len: null, nullable: "NO", column_default: "0" },
    ]);
    const pk = await query<{ column_name: string }>(
      db.url,
      `SELECT a.attname AS column_name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
       WHERE i.indrelid = '"_prisma_migrations"'::regclass AND i.indisprimary`,
    );
    expect(pk).toEqual([{ column_name: "id" }]);
  });

  it("is safe to run concurrently: each migration is applied exactly once", async () => {
    const db = freshDatabase();
    const results = await Promise.all([migrate(db.url), migrate(db.url), migrate(db.url), migrate(db.url)]);
    expect(results.flatMap((r) => r.applied).sort()).toEqual(localMigrations);
    expect(await query(db.url, `SELECT 1 FROM "_prisma_migrations"`)).toHaveLength(localMigrations.length);
  });

  it("applies migrations added later, in name order", async () => {
    const dir = copyOfMigrations();
    const db = freshDatabase();
    await migrate(db.url, { migrationsDir: dir });
    addMigration(dir, "29990102000000_second", `CREATE TABLE "second" ("id" INTEGER NOT NULL);\n`);
    addMigration(dir, "29990101000000_first", `CREATE TABLE "first" ("id" INTEGER NOT NULL);\n`);
    expect((await migrate(db.url, { migrationsDir: dir })).applied).toEqual(["29990101000000_first", "29990102000000_second"]);
    expect((await migrate(db.url, { migrationsDir: dir })).applied).toEqual([]);
  });

  it("refuses to run when an applied migration's file changed", async () => {
    const dir = copyOfMigrations();
    const db = freshDatabase();
    await migrate(db.url, { migrationsDir: dir });
    const [first] = localMigrations;
    fs.appendFileSync(path.join(dir, first!, "migration.sql"), "\n-- edited after the fact\n");
    await expect(migrate(db.url, { migrationsDir: dir })).rejects.toThrow(`migration ${first} was modified after it was applied`);
  });

  it("still accepts an applied migration whose file only changed line endings", async () => {
    const dir = copyOfMigrations();
    const db = freshDatabase();
    await migrate(db.url, { migrationsDir: dir });
    const file = path.join(dir, localMigrations[0]!, "migration.sql");
    fs.writeFileSync(file, fs.readFileSync(file, "utf8").replace(/\n/g, "\r\n"));
    expect((await migrate(db.url, { migrationsDir: dir })).applied).toEqual([]);
  });

  it("rolls a failing migration back completely and records nothing for it", async () => {
    const dir = copyOfMigrations();
    const db = freshDatabase();
    addMigration(dir, "29990101000000_broken", `CREATE TABLE "half_done" ("id" INTEGER);\nSELECT 1/0;\n`);
    await expect(migrate(db.url, { migrationsDir: dir })).rejects.toThrow("migration 29990101000000_broken failed and was rolled back: division by zero");
    const names = await query<{ migration_name: string }>(db.url, `SELECT migration_name FROM "_prisma_migrations" ORDER BY 1`);
    expect(names.map((r) => r.migration_name)).toEqual(localMigrations);
    expect(await query(db.url, `SELECT to_regclass('public.half_done') IS NULL AS gone`)).toEqual([{ gone: true }]);
  });

  it("refuses to continue past a migration Prisma recorded as failed", async () => {
    const db = freshDatabase();
    await migrate(db.url);
    await query(
      db.url,
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count)
       VALUES ('00000000-0000-0000-0000-000000000000', 'x', '29990101000000_failed_elsewhere', now(), 0)`,
    );
    await expect(migrate(db.url)).rejects.toThrow("P3009");
  });
});
