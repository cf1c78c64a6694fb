// @loopsmith/db-tooling: the offline Prisma schema-engine tooling. Nothing here runs while the API or the
// runner serve; it applies and writes migrations and proves them equal to prisma/schema.prisma.

// Schema migrations (same bookkeeping as `prisma migrate deploy`).
export { migrate, type MigrateOptions, type MigrateResult } from "./migrate";

// Where the schema and the migrations live.
export { paths } from "./paths";

// The next migration, computed by Prisma's schema engine (wasm).
export { diffMigrationsToSchema, migrationDirName, type MigrationDiff, type MigrationDiffOptions } from "./migration-diff";

// The migrated database against the schema's DMMF.
export { compareSchemaToDatabase, describeDatabase, loadSchemaDmmf, type DbShape } from "./schema-check";
