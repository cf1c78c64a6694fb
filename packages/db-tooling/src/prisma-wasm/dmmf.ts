// Prisma's DMMF (the parsed, validated schema) from the prisma-schema wasm module that the prisma CLI
// itself uses for `getDMMF`. @prisma/internals is bundled into the CLI and not importable, and the
// generated client only keeps a reduced data model (no nullability, native types or indexes).
import { assertImportsCovered, BindgenHost, compileWasm, instantiate, panicRegistry, type BindgenExports } from "./bindgen";

/** The subset of Prisma's DMMF that the schema checks read. */
export interface DmmfField {
  name: string;
  dbName: string | null;
  kind: "scalar" | "object" | "enum" | "unsupported";
  type: string;
  isRequired: boolean;
  isList: boolean;
  isId: boolean;
  isUnique: boolean;
  isUpdatedAt: boolean;
  hasDefaultValue: boolean;
  default?: unknown;
  /** e.g. ["Uuid", []] or ["Timestamptz", ["3"]]; absent when the field uses the connector default. */
  nativeType?: [string, string[]] | null;
  relationName?: string | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string | null;
  relationOnUpdate?: string | null;
}

export interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { name: string | null; fields: string[] } | null;
}

export interface DmmfIndex {
  model: string;
  type: "id" | "unique" | "normal" | "fulltext";
  isDefinedOnField: boolean;
  name?: string;
  dbName?: string;
  fields: { name: string }[];
}

export interface Dmmf {
  datamodel: { models: DmmfModel[]; enums: unknown[]; indexes: DmmfIndex[] };
}

interface SchemaWasmExports extends BindgenExports {
  get_dmmf(ptr: number, len: number): [number, number, number, number];
  __externref_table_dealloc(idx: number): void;
}

let host: BindgenHost<SchemaWasmExports> | undefined;

function load(): BindgenHost<SchemaWasmExports> {
  if (host) return host;
  panicRegistry();
  const h = new BindgenHost<SchemaWasmExports>();
  const imports = {
    __wbg_set_message_f22ac4a6869ee695: (ptr: number, len: number) => panicRegistry().set_message(h.string(ptr, len)),
    __wbg_Error_e83987f665cf5504: (ptr: number, len: number) => new Error(h.string(ptr, len)),
    __wbg___wbindgen_throw_b855445ff6a94295: (ptr: number, len: number) => {
      throw new Error(h.string(ptr, len));
    },
    __wbindgen_init_externref_table: () => h.initExternrefTable(),
  };
  const module = compileWasm("prisma_schema_build_bg.wasm");
  assertImportsCovered(module, imports, "prisma-schema wasm");
  h.exports = instantiate<SchemaWasmExports>(module, { __wbindgen_placeholder__: imports });
  h.exports.__wbindgen_start();
  host = h;
  return h;
}

/** Parses and validates Prisma schema files (path, content) into the DMMF, or throws Prisma's validation errors. */
export function getDmmf(files: [path: string, content: string][]): Dmmf {
  const h = load();
  const [ptr, len] = h.passString(JSON.stringify({ prismaSchema: files, noColor: true }));
  const [outPtr, outLen, errIdx, isErr] = h.exports.get_dmmf(ptr, len);
  if (isErr) {
    const error: unknown = h.exports.__wbindgen_externrefs.get(errIdx);
    h.exports.__externref_table_dealloc(errIdx);
    throw error instanceof Error ? error : new Error(String(error));
  }
  return JSON.parse(h.takeString(outPtr, outLen)) as Dmmf;
}
