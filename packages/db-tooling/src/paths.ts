import path from "node:path";
import { fileURLToPath } from "node:url";

// Source layout: packages/db-tooling/src/paths.ts -> repository root three levels up.
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export const paths = Object.freeze({
  repoRoot,
  schema: path.join(repoRoot, "prisma", "schema.prisma"),
  migrations: path.join(repoRoot, "prisma", "migrations"),
});
