import { randomBytes } from "node:crypto";
import pg from "pg";

// Tests find the Postgres server through DATABASE_URL (any database on it), like the app does.
const serverUrl = new URL(process.env.DATABASE_URL ?? "postgresql://postgres:postgres@127.0.0.1:5432/loopsmith");

export function urlForDatabase(name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export const maintenanceUrl = urlForDatabase("postgres");

export function tempDatabaseName(): string {
  return `loopsmith_test_${randomBytes(6).toString("hex")}`;
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: maintenanceUrl });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export async function databaseExists(name: string): Promise<boolean> {
  const admin = new pg.Client({ connectionString: maintenanceUrl });
  await admin.connect();
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    return rowCount === 1;
  } finally {
    await admin.end();
  }
}
