// migrate() claims the same bookkeeping as `prisma migrate deploy`. Prisma's own schema engine (wasm,
// the code behind `migrate deploy` and `migrate status`) is the judge, in both directions.
import fs from "node:fs";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { migrate } from "../src/migrate";
import { loadMigrationList, withSchemaEngine } from "../src/migration-diff";
import { paths } from "../src/paths";
import { dropDatabase, tempDatabaseName, urlForDatabase } from "./temp-db";

const created: string[] = [];
const filters = { externalTables: [], externalEnums: [] };
const schemaFiles = [{ path: "schema.prisma", content: fs.readFileSync(paths.schema, "utf8") }];
const localMigrations = fs
  .readdirSync(paths.migrations, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

async function emptyDatabase(): Promise<string> {
  const name = tempDatabaseName();
  created.push(name);
  const admin = new pg.Client({ connectionString: urlForDatabase("postgres") });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  await admin.end();
  return urlForDatabase(name);
}

afterAll(async () => {
  await Promise.all(created.map(dropDatabase));
});

describe("compatibility with Prisma's migrate deploy/status", () => {
  it("Prisma sees a database migrated by migrate() as up to date, with no edited or failed migrations", async () => {
    const url = await emptyDatabase();
    await migrate(url);
    const migrationsList = await loadMigrationList(paths.migrations);
    const { status, deploy } = await withSchemaEngine(url, schemaFiles, async (engine) => ({
      status: await engine.diagnoseMigrationHistory({ migrationsList, optInToShadowDatabase: false, filters }),
      deploy: await engine.applyMigrations({ migrationsList, filters }),
    }));
    expect(status).toEqual({ editedMigrationNames: [], failedMigrationNames: [], hasMigrationsTable: true, history: null });
    expect(deploy.appliedMigrationNames).toEqual([]);
  });

  it("migrate() sees a database migrated by Prisma as up to date", async () => {
    const url = await emptyDatabase();
    const migrationsList = await loadMigrationList(paths.migrations);
    const deploy = await withSchemaEngine(url, schemaFiles, (engine) => engine.applyMigrations({ migrationsList, filters }));
    expect(deploy.appliedMigrationNames).toEqual(localMigrations);
    expect((await migrate(url)).applied).toEqual([]);
  });

  it("an engine call the engine cannot deserialize fails fast instead of hanging", async () => {
    const url = await emptyDatabase();
    const migrationsList = await loadMigrationList(paths.migrations);
    const call = withSchemaEngine(url, schemaFiles, (engine) =>
      engine.applyMigrations({ migrationsList } as unknown as Parameters<typeof engine.applyMigrations>[0]),
    );
    await expect(call).rejects.toThrow("missing field `filters`");
    // The next engine is a fresh instance and works.
    const deploy = await withSchemaEngine(url, schemaFiles, (engine) => engine.applyMigrations({ migrationsList, filters }));
    expect(deploy.appliedMigrationNames).toEqual(localMigrations);
  }, 10_000);
});
