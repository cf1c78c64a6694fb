// Prisma 7 reads the connection string for CLI commands (migrate deploy/status, db pull, studio) from here;
// schema.prisma no longer carries a datasource url. The app itself connects through @prisma/adapter-pg
// (packages/db), and `prisma generate` needs no database at all.
import { defineConfig } from "prisma/config";

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: {
    url: process.env.DATABASE_URL ?? "postgresql://postgres:postgres@127.0.0.1:5432/loopsmith",
  },
});
