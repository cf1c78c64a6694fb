// Proves prisma/migrations builds exactly what prisma/schema.prisma describes, two independent ways:
// our catalog checker against Prisma's DMMF, and Prisma's own schema engine diffing migrations vs schema.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../src/migrate";
import { diffMigrationsToSchema } from "../src/migration-diff";
import { paths } from "../src/paths";
import { getDmmf } from "../src/prisma-wasm/dmmf";
import { compareSchemaToDatabase, describeDatabase, loadSchemaDmmf } from "../src/schema-check";
import { dropDatabase, maintenanceUrl, tempDatabaseName, urlForDatabase } from "./temp-db";

const dbName = tempDatabaseName();
let client: pg.Client;

beforeAll(async () => {
  await migrate(urlForDatabase(dbName));
  client = new pg.Client({ connectionString: urlForDatabase(dbName) });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
  await dropDatabase(dbName);
});

/** Runs `ddl` inside a transaction, describes the altered database, and rolls everything back. */
async function problemsAfter(ddl: string): Promise<string[]> {
  await client.query("BEGIN");
  try {
    await client.query(ddl);
    return compareSchemaToDatabase(loadSchemaDmmf(), await describeDatabase(client));
  } finally {
    await client.query("ROLLBACK");
  }
}

describe("prisma/schema.prisma and prisma/migrations agree", () => {
  it("the migrated database has every model, column, index and foreign key of the schema, and nothing else", async () => {
    const dmmf = loadSchemaDmmf();
    const db = await describeDatabase(client);
    expect(compareSchemaToDatabase(dmmf, db)).toEqual([]);

    // Not vacuous: the comparison covered all models and columns.
    const models = dmmf.datamodel.models.map((m) => m.dbName ?? m.name).sort();
    expect(models).toEqual([
      "api_keys",
      "artifacts",
      "check_results",
      "check_runs",
      "delivery_attempts",
      "executions",
      "goal_checker_files",
      "goal_inputs",
      "goal_workspaces",
      "goals",
      "model_calls",
      "plans",
      "receipt_keys",
      "schedule_files",
      "schedules",
      "tenants",
      "transitions",
      "webhook_deliveries",
      "webhook_secrets",
    ]);
    expect([...db.keys()].sort()).toEqual([...models, "_prisma_migrations"].sort());
    expect(db.get("goals")?.columns.get("updated_at")).toEqual({ type: "timestamp(3) with time zone", notNull: true, defaultExpr: null });
    expect(db.get("model_calls")?.indexes.map((i) => i.name)).toContain("model_calls_goal_id_state_attempt_request_hash_key");
  });

  it.each([
    ["an extra column", `ALTER TABLE goals ADD COLUMN extra integer`, "column goals.extra exists in the database but not in model Goal"],
    ["a changed type", `ALTER TABLE goals ALTER COLUMN max_attempts TYPE bigint`, "column goals.max_attempts (Goal.maxAttempts) has type bigint, the schema says integer"],
    ["a changed nullability", `ALTER TABLE goals ALTER COLUMN success SET NOT NULL`, "column goals.success (Goal.success) is NOT NULL, the schema says optional"],
    ["a dropped default", `ALTER TABLE goals ALTER COLUMN version DROP DEFAULT`, "column goals.version (Goal.version) has no database default"],
    ["a dropped column", `ALTER TABLE transitions DROP COLUMN detail`, "column transitions.detail (Transition.detail) is missing"],
    ["a dropped index", `DROP INDEX goals_state_idx`, "index on goals(state) is missing"],
    ["a unique index turned plain", `DROP INDEX transitions_goal_id_seq_key; CREATE INDEX transitions_goal_id_seq_key ON transitions(goal_id, seq)`, "unique index on transitions(goal_id, seq) is missing"],
    ["an extra index", `CREATE INDEX goals_objective_idx ON goals(objective)`, "index goals_objective_idx on goals(objective) is not in the schema"],
    ["a changed ON DELETE", `ALTER TABLE artifacts DROP CONSTRAINT artifacts_goal_id_fkey, ADD CONSTRAINT artifacts_goal_id_fkey FOREIGN KEY (goal_id) REFERENCES goals(id) ON DELETE RESTRICT ON UPDATE CASCADE`, "has ON DELETE Restrict, the schema says Cascade"],
    ["a dropped foreign key", `ALTER TABLE plans DROP CONSTRAINT plans_goal_id_fkey`, "foreign key plans(goal_id) -> goals(id) (Plan.goal) is missing"],
    ["an extra table", `CREATE TABLE stray (id int)`, "table stray exists in the database but no model maps to it"],
  ])("the checker reports %s", async (_what, ddl, expected) => {
    const problems = await problemsAfter(ddl);
    expect(problems.join("\n")).toContain(expected);
  });

  it("the checker reports a schema change that no migration holds", async () => {
    const edited = fs
      .readFileSync(paths.schema, "utf8")
      .replace("  attempts      Int       @default(0)\n", "  attempts      Int       @default(0)\n  priority      Int       @default(0)\n");
    expect(edited).toContain("priority");
    const problems = compareSchemaToDatabase(getDmmf([["schema.prisma", edited]]), await describeDatabase(client));
    expect(problems).toEqual(["column goals.priority (Goal.priority) is missing"]);
  });

  it("Prisma's schema engine finds nothing to migrate between prisma/migrations and the schema", async () => {
    const diff = await diffMigrationsToSchema({ databaseUrl: maintenanceUrl });
    expect(diff).toEqual({ sql: "", hasChanges: false });
  });

  it("Prisma's schema engine writes the missing migration for an edited schema", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "loopsmith-schema-"));
    try {
      const schemaPath = path.join(dir, "schema.prisma");
      fs.writeFileSync(schemaPath, fs.readFileSync(paths.schema, "utf8").replace("  state         String\n", "  state         String\n  priority      Int       @default(0)\n"));
      const diff = await diffMigrationsToSchema({ databaseUrl: maintenanceUrl, schemaPath });
      expect(diff.hasChanges).toBe(true);
      expect(diff.sql).toContain(`ALTER TABLE "goals" ADD COLUMN     "priority" INTEGER NOT NULL DEFAULT 0;`);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
