import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";

/** One `prisma/migrations/<timestamp>_<name>/migration.sql`, in Prisma's layout. */
export interface MigrationFile {
  name: string;
  sql: string;
  /** sha256 hex of the file's bytes: the value Prisma stores in `_prisma_migrations.checksum`. */
  checksum: string;
}

export const LOCKFILE_NAME = "migration_lock.toml";

export function checksumOf(content: string | Buffer): string {
  return createHash("sha256").update(content).digest("hex");
}

/**
 * The checksum recorded for `name` still matches `file`. Like Prisma, a script whose only change is
 * LF <-> CRLF line endings (a git checkout on another OS) still counts as the same migration.
 */
export function checksumMatches(recorded: string, file: MigrationFile): boolean {
  if (recorded === file.checksum) return true;
  return (
    recorded === checksumOf(file.sql.replace(/\r\n/g, "\n")) ||
    recorded === checksumOf(file.sql.replace(/\r?\n/g, "\r\n"))
  );
}

/** Migration directories sorted by name (their timestamp prefix), each with its migration.sql. */
export async function readMigrations(migrationsDir: string): Promise<MigrationFile[]> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await fs.readdir(migrationsDir, { withFileTypes: true });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw e;
  }
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const migrations: MigrationFile[] = [];
  for (const name of names) {
    const file = path.join(migrationsDir, name, "migration.sql");
    let bytes: Buffer;
    try {
      bytes = await fs.readFile(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") {
        throw new Error(`migration directory ${name} has no migration.sql (${file})`);
      }
      throw e;
    }
    migrations.push({ name, sql: bytes.toString("utf8"), checksum: checksumOf(bytes) });
  }
  return migrations;
}

export async function readLockfile(migrationsDir: string): Promise<string | null> {
  try {
    return await fs.readFile(path.join(migrationsDir, LOCKFILE_NAME), "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}
