// `npm run db:migrate`: applies prisma/migrations to DATABASE_URL (creating the database if needed).
import { migrate } from "./migrate";

const DEFAULT_DATABASE_URL = "postgresql://postgres:postgres@127.0.0.1:5432/loopsmith";

function redact(databaseUrl: string): string {
  try {
    const url = new URL(databaseUrl);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return "<unparseable DATABASE_URL>";
  }
}

const databaseUrl = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
const started = performance.now();
try {
  const { applied } = await migrate(databaseUrl, { log: (line) => console.log(`db:migrate: ${line}`) });
  const ms = Math.round(performance.now() - started);
  console.log(
    applied.length > 0
      ? `db:migrate: applied ${applied.length} migration(s) to ${redact(databaseUrl)} in ${ms} ms`
      : `db:migrate: ${redact(databaseUrl)} is up to date (${ms} ms)`,
  );
} catch (e) {
  console.error(`db:migrate: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
