// Compares the Prisma schema (through Prisma's DMMF) with a live database's catalog: tables, columns
// (type, nullability, presence of a database default), primary keys, unique and plain indexes, foreign
// keys, and anything in the database that the schema does not know. Used by the test that proves
// prisma/migrations builds exactly what prisma/schema.prisma describes.
import fs from "node:fs";
import path from "node:path";
import type pg from "pg";
import { paths } from "./paths";
import { getDmmf, type Dmmf, type DmmfField, type DmmfModel } from "./prisma-wasm/dmmf";

/** Tables the database may hold beyond the schema's models. */
const BOOKKEEPING_TABLES = new Set(["_prisma_migrations"]);

export interface DbColumn {
  type: string;
  notNull: boolean;
  defaultExpr: string | null;
}

export interface DbIndex {
  name: string;
  columns: string[];
  unique: boolean;
  primary: boolean;
}

export interface DbForeignKey {
  name: string;
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}

export interface DbTable {
  columns: Map<string, DbColumn>;
  indexes: DbIndex[];
  foreignKeys: DbForeignKey[];
}

export type DbShape = Map<string, DbTable>;

type Queryable = Pick<pg.ClientBase, "query">;

/** Reads tables, columns, indexes and foreign keys of one schema from pg_catalog. */
export async function describeDatabase(db: Queryable, schema = "public"): Promise<DbShape> {
  const shape: DbShape = new Map();
  const tables = await db.query<{ table: string }>(
    `SELECT c.relname AS table FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') ORDER BY 1`,
    [schema],
  );
  for (const { table } of tables.rows) shape.set(table, { columns: new Map(), indexes: [], foreignKeys: [] });

  const columns = await db.query<{ table: string; column: string; type: string; not_null: boolean; default_expr: string | null }>(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS not_null, pg_get_expr(d.adbin, d.adrelid) AS default_expr
     FROM pg_attribute a
     JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
     LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped
     ORDER BY c.relname, a.attnum`,
    [schema],
  );
  for (const r of columns.rows) {
    shape.get(r.table)?.columns.set(r.column, { type: r.type, notNull: r.not_null, defaultExpr: r.default_expr });
  }

  const indexes = await db.query<{ table: string; name: string; columns: string[]; unique: boolean; primary: boolean }>(
    `SELECT t.relname AS table, i.relname AS name, ix.indisunique AS unique, ix.indisprimary AS primary,
            ARRAY(SELECT a.attname FROM unnest(ix.indkey) WITH ORDINALITY k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns
     FROM pg_index ix
     JOIN pg_class t ON t.oid = ix.indrelid JOIN pg_class i ON i.oid = ix.indexrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = $1 ORDER BY 1, 2`,
    [schema],
  );
  for (const r of indexes.rows) shape.get(r.table)?.indexes.push({ name: r.name, columns: r.columns, unique: r.unique, primary: r.primary });

  const fks = await db.query<{ table: string; name: string; columns: string[]; ref_table: string; ref_columns: string[]; on_delete: string; on_update: string }>(
    `SELECT t.relname AS table, con.conname AS name, rt.relname AS ref_table,
            con.confdeltype::text AS on_delete, con.confupdtype::text AS on_update,
            ARRAY(SELECT a.attname FROM unnest(con.conkey) WITH ORDINALITY k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS columns,
            ARRAY(SELECT a.attname FROM unnest(con.confkey) WITH ORDINALITY k(attnum, ord)
                  JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord)::text[] AS ref_columns
     FROM pg_constraint con
     JOIN pg_class t ON t.oid = con.conrelid JOIN pg_class rt ON rt.oid = con.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = $1 AND con.contype = 'f' ORDER BY 1, 2`,
    [schema],
  );
  const actions: Record<string, string> = { a: "NoAction", r: "Restrict", c: "Cascade", n: "SetNull", d: "SetDefault" };
  for (const r of fks.rows) {
    shape.get(r.table)?.foreignKeys.push({
      name: r.name,
      columns: r.columns,
      refTable: r.ref_table,
      refColumns: r.ref_columns,
      onDelete: actions[r.on_delete] ?? r.on_delete,
      onUpdate: actions[r.on_update] ?? r.on_update,
    });
  }
  return shape;
}

/** The repository's schema (or another file) as DMMF. */
export function loadSchemaDmmf(schemaPath = paths.schema): Dmmf {
  return getDmmf([[path.basename(schemaPath), fs.readFileSync(schemaPath, "utf8")]]);
}

// Postgres type Prisma uses for a scalar when the field has no @db.* attribute.
const DEFAULT_NATIVE_TYPE: Record<string, [string, string[]]> = {
  String: ["Text", []],
  Int: ["Integer", []],
  BigInt: ["BigInt", []],
  Float: ["DoublePrecision", []],
  Decimal: ["Decimal", ["65", "30"]],
  Boolean: ["Boolean", []],
  DateTime: ["Timestamp", ["3"]],
  Json: ["JsonB", []],
  Bytes: ["ByteA", []],
};

/** Renders a Prisma native type the way Postgres' format_type() prints it. */
function formatNativeType([name, args]: [string, string[]]): string {
  const withArgs = (base: string) => (args.length > 0 ? `${base}(${args.join(",")})` : base);
  switch (name) {
    case "Text": return "text";
    case "Uuid": return "uuid";
    case "Integer": return "integer";
    case "SmallInt": return "smallint";
    case "BigInt": return "bigint";
    case "Oid": return "oid";
    case "Real": return "real";
    case "DoublePrecision": return "double precision";
    case "Decimal": return withArgs("numeric");
    case "Money": return "money";
    case "Boolean": return "boolean";
    case "VarChar": return withArgs("character varying");
    case "Char": return withArgs("character");
    case "Citext": return "citext";
    case "Inet": return "inet";
    case "Xml": return "xml";
    case "Bit": return withArgs("bit");
    case "VarBit": return withArgs("bit varying");
    case "Json": return "json";
    case "JsonB": return "jsonb";
    case "ByteA": return "bytea";
    case "Date": return "date";
    case "Timestamp": return `${withArgs("timestamp")} without time zone`;
    case "Timestamptz": return `${withArgs("timestamp")} with time zone`;
    case "Time": return `${withArgs("time")} without time zone`;
    case "Timetz": return `${withArgs("time")} with time zone`;
    default: return `<unsupported native type ${name}>`;
  }
}

function expectedColumnType(field: DmmfField): string {
  const base =
    field.kind === "enum"
      ? field.type
      : formatNativeType(field.nativeType ?? DEFAULT_NATIVE_TYPE[field.type] ?? [`?${field.type}`, []]);
  return field.isList ? `${base}[]` : base;
}

/** Defaults Prisma Client fills in itself, so the column has none in the database. */
const CLIENT_SIDE_DEFAULTS = new Set(["uuid", "cuid", "nanoid", "ulid"]);

function expectsDbDefault(field: DmmfField): boolean {
  if (!field.hasDefaultValue) return false;
  const d = field.default;
  if (typeof d === "object" && d !== null && "name" in d) return !CLIENT_SIDE_DEFAULTS.has(String(d.name));
  return true;
}

const columnName = (field: DmmfField) => field.dbName ?? field.name;
const tableName = (model: DmmfModel) => model.dbName ?? model.name;
const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Every way the database disagrees with the schema, as readable lines; empty when they agree. */
export function compareSchemaToDatabase(dmmf: Dmmf, db: DbShape): string[] {
  const problems: string[] = [];
  const models = new Map(dmmf.datamodel.models.map((m) => [m.name, m]));
  const known = new Set<string>();

  for (const model of dmmf.datamodel.models) {
    const table = tableName(model);
    known.add(table);
    const actual = db.get(table);
    if (!actual) {
      problems.push(`table ${table} (model ${model.name}) is missing`);
      continue;
    }
    const scalars = model.fields.filter((f) => f.kind === "scalar" || f.kind === "enum");
    const fieldColumns = new Set(scalars.map(columnName));
    for (const field of scalars) {
      const col = columnName(field);
      const where = `${table}.${col} (${model.name}.${field.name})`;
      const c = actual.columns.get(col);
      if (!c) {
        problems.push(`column ${where} is missing`);
        continue;
      }
      const type = expectedColumnType(field);
      if (c.type !== type) problems.push(`column ${where} has type ${c.type}, the schema says ${type}`);
      if (c.notNull !== field.isRequired) {
        problems.push(`column ${where} is ${c.notNull ? "NOT NULL" : "nullable"}, the schema says ${field.isRequired ? "required" : "optional"}`);
      }
      const wantsDefault = expectsDbDefault(field);
      if (wantsDefault !== (c.defaultExpr !== null)) {
        problems.push(
          wantsDefault
            ? `column ${where} has no database default, the schema has @default(${JSON.stringify(field.default)})`
            : `column ${where} has database default ${c.defaultExpr}, the schema has none`,
        );
      }
    }
    for (const col of actual.columns.keys()) {
      if (!fieldColumns.has(col)) problems.push(`column ${table}.${col} exists in the database but not in model ${model.name}`);
    }

    // Indexes: @id / @@id -> primary key, @unique / @@unique -> unique index, @@index -> plain index.
    const toColumns = (names: string[]) =>
      names.map((n) => {
        const f = model.fields.find((x) => x.name === n);
        return f ? columnName(f) : n;
      });
    const expected = dmmf.datamodel.indexes
      .filter((i) => i.model === model.name && i.type !== "fulltext")
      .map((i) => {
        const columns = toColumns(i.fields.map((f) => f.name));
        const suffix = i.type === "id" ? "pkey" : i.type === "unique" ? "key" : "idx";
        const name = i.dbName ?? (i.type === "id" ? `${table}_pkey` : `${table}_${columns.join("_")}_${suffix}`);
        return { kind: i.type, columns, name };
      });
    const matched = new Set<DbIndex>();
    for (const e of expected) {
      const found = actual.indexes.find(
        (x) => same(x.columns, e.columns) && x.primary === (e.kind === "id") && x.unique === (e.kind !== "normal"),
      );
      const label = `${e.kind === "id" ? "primary key" : e.kind === "unique" ? "unique index" : "index"} on ${table}(${e.columns.join(", ")})`;
      if (!found) {
        problems.push(`${label} is missing`);
        continue;
      }
      matched.add(found);
      if (e.name.length <= 63 && found.name !== e.name) problems.push(`${label} is named ${found.name}, Prisma expects ${e.name}`);
    }
    for (const x of actual.indexes) {
      if (!matched.has(x)) {
        problems.push(`${x.primary ? "primary key" : x.unique ? "unique index" : "index"} ${x.name} on ${table}(${x.columns.join(", ")}) is not in the schema`);
      }
    }

    // Foreign keys: declared on the relation field that holds `fields: [...]`.
    const expectedFks = model.fields
      .filter((f) => f.kind === "object" && (f.relationFromFields?.length ?? 0) > 0)
      .map((f) => {
        const target = models.get(f.type);
        const columns = toColumns(f.relationFromFields ?? []);
        const refColumns = (f.relationToFields ?? []).map((n) => {
          const tf = target?.fields.find((x) => x.name === n);
          return tf ? columnName(tf) : n;
        });
        return {
          field: f.name,
          columns,
          refTable: target ? tableName(target) : f.type,
          refColumns,
          // Prisma's defaults: Restrict for a required relation, SetNull for an optional one; Cascade on update.
          onDelete: f.relationOnDelete ?? (f.isRequired ? "Restrict" : "SetNull"),
          onUpdate: f.relationOnUpdate ?? "Cascade",
        };
      });
    const matchedFks = new Set<DbForeignKey>();
    for (const e of expectedFks) {
      const label = `foreign key ${table}(${e.columns.join(", ")}) -> ${e.refTable}(${e.refColumns.join(", ")}) (${model.name}.${e.field})`;
      const found = actual.foreignKeys.find((x) => same(x.columns, e.columns) && x.refTable === e.refTable && same(x.refColumns, e.refColumns));
      if (!found) {
        problems.push(`${label} is missing`);
        continue;
      }
      matchedFks.add(found);
      if (found.onDelete !== e.onDelete) problems.push(`${label} has ON DELETE ${found.onDelete}, the schema says ${e.onDelete}`);
      if (found.onUpdate !== e.onUpdate) problems.push(`${label} has ON UPDATE ${found.onUpdate}, the schema says ${e.onUpdate}`);
    }
    for (const x of actual.foreignKeys) {
      if (!matchedFks.has(x)) problems.push(`foreign key ${x.name} on ${table} is not in the schema`);
    }
  }

  for (const table of db.keys()) {
    if (!known.has(table) && !BOOKKEEPING_TABLES.has(table)) problems.push(`table ${table} exists in the database but no model maps to it`);
  }
  return problems;
}
