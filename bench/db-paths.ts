// Benchmark: what the client side of a step's database work costs by path. The same four statements (a
// compare-and-set update that matches nothing, the previous tape row's hash, the latest tape row, the
// goal's version: the shape of a step's commit, writing nothing) through Prisma's interactive transaction,
// through pg (the driver under Prisma's adapter) in one transaction, and as one statement with CTEs through
// pg and through Prisma ($queryRawUnsafe: how a move is committed); then one goal read through each client.
// Prints wall time and this process's CPU per transaction, side by side, in one run.
//
//   npx tsx bench/db-paths.ts [--n 300]
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import { DEFAULT_DATABASE_URL } from "@loopsmith/core";
import { createPrisma } from "@loopsmith/db";

const { values } = parseArgs({ options: { n: { type: "string", default: "300" } } });
const n = Number(values.n);
const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
const prisma = createPrisma(url);
const pool = new pg.Pool({ connectionString: url, max: 1 });
// Any goal's rows (or none: the statements still run and plan the same way).
const id = (await prisma.goal.findFirst({ select: { id: true } }))?.id ?? randomUUID();

async function time(name: string, f: () => Promise<unknown>) {
  for (let i = 0; i < Math.min(50, n); i++) await f();
  const wall = performance.now();
  const cpu = process.cpuUsage();
  for (let i = 0; i < n; i++) await f();
  const used = process.cpuUsage(cpu);
  const ms = (performance.now() - wall) / n;
  console.log(`${name.padEnd(52)} ${ms.toFixed(2).padStart(6)} ms wall  ${((used.user + used.system) / 1000 / n).toFixed(2).padStart(6)} ms CPU`);
}

try {
  console.log(`${n} transactions each (4 statements, nothing written), ${url.replace(/\/\/[^@]*@/, "//")}`);
  await time("Prisma: interactive transaction, model queries", () =>
    prisma.$transaction(async (tx) => {
      await tx.goal.updateMany({ where: { id, version: -1 }, data: { version: 0 } });
      await tx.transition.findUnique({ where: { goalId_seq: { goalId: id, seq: 0 } }, select: { hash: true } });
      await tx.transition.findFirst({ where: { goalId: id }, orderBy: { seq: "desc" } });
      await tx.goal.findUnique({ where: { id }, select: { version: true } });
    }),
  );
  await time("pg: BEGIN, the 4 statements, COMMIT", async () => {
    const c = await pool.connect();
    try {
      await c.query("BEGIN");
      await c.query("UPDATE goals SET version = 0 WHERE id = $1 AND version = -1", [id]);
      await c.query("SELECT hash FROM transitions WHERE goal_id = $1 AND seq = 0", [id]);
      await c.query("SELECT * FROM transitions WHERE goal_id = $1 ORDER BY seq DESC LIMIT 1", [id]);
      await c.query("SELECT version FROM goals WHERE id = $1", [id]);
      await c.query("COMMIT");
    } finally {
      c.release();
    }
  });
  await time("pg: one statement (CTEs)", () =>
    pool.query(
      `WITH u AS (UPDATE goals SET version = 0 WHERE id = $1 AND version = -1 RETURNING id),
            h AS (SELECT hash FROM transitions WHERE goal_id = $1 AND seq = 0),
            l AS (SELECT * FROM transitions WHERE goal_id = $1 ORDER BY seq DESC LIMIT 1)
       SELECT (SELECT count(*) FROM u), (SELECT hash FROM h), (SELECT to_jsonb(l) FROM l), (SELECT version FROM goals WHERE id = $1)`,
      [id],
    ),
  );
  await time("Prisma: the same one statement, $queryRawUnsafe", () =>
    prisma.$queryRawUnsafe(
      `WITH u AS (UPDATE goals SET version = 0 WHERE id = $1::uuid AND version = -1 RETURNING id),
            h AS (SELECT hash FROM transitions WHERE goal_id = $1::uuid AND seq = 0),
            l AS (SELECT * FROM transitions WHERE goal_id = $1::uuid ORDER BY seq DESC LIMIT 1)
       SELECT (SELECT count(*) FROM u)::int AS n, (SELECT hash FROM h), (SELECT to_jsonb(l) FROM l) AS l, (SELECT version FROM goals WHERE id = $1::uuid)`,
      id,
    ),
  );
  await time("Prisma: findUnique of a goal (outside a transaction)", () => prisma.goal.findUnique({ where: { id } }));
  await time("pg: SELECT * of a goal", () => pool.query("SELECT * FROM goals WHERE id = $1", [id]));
} finally {
  await prisma.$disconnect();
  await pool.end();
}
