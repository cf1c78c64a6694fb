// The driver adapter the wasm schema engine talks to Postgres through: @prisma/adapter-pg, wrapped in
// Prisma's own error-capturing binding, with two fixes. The engine's schema describer selects catalog
// columns of Postgres' internal "char" type (pg_class.relkind, ...), which adapter-pg 7.10 rejects as an
// unsupported native type. Its values arrive from pg as strings already, so they are relabelled as text.
// And a script (a migration) is run whole, not split at every ";" (see patchAdapter).
// Shadow databases are created here rather than by adapter-pg's connectToShadowDb(), which (7.10) has two
// bugs: built from a connection string, its "shadow" pool silently opens the main database (pg lets the
// URL override `database`) and replays every migration into it; and it drops the shadow database before
// closing the shadow pool, so the DROP fails and the database is left behind.
import { randomUUID } from "node:crypto";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";
import pg from "pg";

const PG_INTERNAL_CHAR_OID = 18;
const PG_TEXT_OID = 25;

interface Disposable {
  dispose(): Promise<void>;
}

type Queryable = Pick<pg.Pool, "query">;

function relabelCharColumns(result: unknown): unknown {
  const fields: unknown = typeof result === "object" && result !== null ? Reflect.get(result, "fields") : undefined;
  if (Array.isArray(fields)) {
    for (const field of fields as { dataTypeID: number }[]) {
      if (field.dataTypeID === PG_INTERNAL_CHAR_OID) field.dataTypeID = PG_TEXT_OID;
    }
  }
  return result;
}

function patchQuery(target: Queryable): void {
  const original = target.query.bind(target) as (...args: unknown[]) => unknown;
  const patched = (...args: unknown[]) => {
    const out = original(...args);
    return out instanceof Promise ? out.then(relabelCharColumns) : out;
  };
  Reflect.set(target, "query", patched);
}

/** adapter-pg keeps its pg.Pool in a protected field; patch it and the clients it hands to transactions. */
function patchAdapter<T extends object>(adapter: T): T {
  const pool: unknown = Reflect.get(adapter, "client");
  if (typeof pool !== "object" || pool === null || typeof Reflect.get(pool, "query") !== "function") {
    throw new Error("@prisma/adapter-pg changed shape: cannot find its pg.Pool (packages/db-tooling/src/prisma-wasm/engine-adapter.ts)");
  }
  const p = pool as pg.Pool;
  patchQuery(p);
  const connect = p.connect.bind(p) as (...args: unknown[]) => unknown;
  const patchedConnect = (...args: unknown[]) => {
    if (typeof args[0] === "function") return connect(...args); // callback style, used by pool.query itself
    return (connect() as Promise<pg.PoolClient>).then((client) => {
      if (!Reflect.get(client, "__loopsmithCharPatched")) {
        patchQuery(client);
        Reflect.set(client, "__loopsmithCharPatched", true);
      }
      return client;
    });
  };
  Reflect.set(p, "connect", patchedConnect);
  // adapter-pg 7.10 runs a script by splitting it at every ";", inside a function body or a comment too, so
  // a migration that creates a plpgsql function (prisma/migrations/*_tenant_open_goals) failed to replay in
  // the shadow database. Postgres runs a script of many statements as sent (the simple query protocol).
  const onError: unknown = Reflect.get(adapter, "onError");
  if (typeof onError !== "function") {
    throw new Error("@prisma/adapter-pg changed shape: cannot find its onError (packages/db-tooling/src/prisma-wasm/engine-adapter.ts)");
  }
  Reflect.set(adapter, "executeScript", async (script: string) => {
    try {
      await p.query(script);
    } catch (e) {
      (onError as (e: unknown) => never).call(adapter, e);
    }
  });
  return adapter;
}

export interface EngineAdapter {
  /** Pass to the wasm engine's constructor. */
  factory: unknown;
  /** Disposes every connection the engine opened through this factory. */
  close(): Promise<void>;
}

/** postgresql://user:pass@host:port/db?host=/socket/dir as discrete pg.PoolConfig fields. */
export function poolConfigFromUrl(databaseUrl: string): pg.PoolConfig {
  const url = new URL(databaseUrl);
  const socketDir = url.searchParams.get("host");
  return {
    host: socketDir ?? (url.hostname || undefined),
    port: url.port ? Number(url.port) : undefined,
    user: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    database: url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : undefined,
  };
}

async function adminQuery(config: pg.PoolConfig, sql: string): Promise<void> {
  const admin = new pg.Client(config);
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

export function createEngineAdapter(databaseUrl: string): EngineAdapter {
  const config = poolConfigFromUrl(databaseUrl);
  const base = new PrismaPg(config);
  const opened: Disposable[] = [];
  const shadowDatabases = new Set<string>();
  const dropShadow = async (name: string) => {
    if (!shadowDatabases.delete(name)) return;
    await adminQuery(config, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  };
  const factory = bindMigrationAwareSqlAdapterFactory({
    provider: base.provider,
    adapterName: base.adapterName,
    async connect() {
      const adapter = patchAdapter(await base.connect());
      opened.push(adapter);
      return adapter;
    },
    async connectToShadowDb() {
      const name = `prisma_migrate_shadow_db_${randomUUID()}`;
      await adminQuery(config, `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      shadowDatabases.add(name);
      const adapter = patchAdapter(await new PrismaPg({ ...config, database: name }).connect());
      const closePool = adapter.dispose.bind(adapter);
      adapter.dispose = async () => {
        await closePool();
        await dropShadow(name);
      };
      return adapter;
    },
  });
  return {
    factory,
    async close() {
      await Promise.allSettled(opened.splice(0).map((a) => a.dispose()));
      // Shadow databases the engine did not dispose (it failed midway) are dropped here.
      await Promise.allSettled([...shadowDatabases].map(dropShadow));
    },
  };
}
