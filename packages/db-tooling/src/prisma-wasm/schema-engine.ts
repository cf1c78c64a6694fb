// Prisma's schema engine (the thing behind `prisma migrate diff/dev`) compiled to wasm, driven in-process
// through @prisma/adapter-pg. The prisma package ships schema_engine_bg.wasm but not its JS bindings, and
// the CLI only runs the native binary, which cannot be downloaded here. These are the bindings.
//
// Import names carry wasm-bindgen hashes: they are tied to the installed prisma version. A mismatch fails
// at load with the list of missing names (see assertImportsCovered), never silently.
import { createRequire } from "node:module";
import { assertImportsCovered, BindgenHost, compileWasm, instantiate, panicRegistry, type BindgenExports } from "./bindgen";

interface EngineExports extends BindgenExports {
  __externref_table_alloc(): number;
  __wbindgen_exn_store(idx: number): void;
  __wbg_schemaengine_free(ptr: number, owned: number): void;
  schemaengine_new(options: unknown, log: unknown, adapterFactory: unknown): Promise<unknown>;
  version(): [number, number];
  [method: string]: unknown;
}

type Fn = (...args: never[]) => unknown;

/** JSON-RPC style params/results of the engine; shapes follow prisma-engines' json-rpc-api types. */
export interface SchemaContainer {
  path: string;
  content: string;
}
export interface MigrationDirectoryInput {
  path: string;
  migrationFile: { path: string; content: { tag: "ok"; value: string } | { tag: "error"; value: string } };
}
export interface MigrationListInput {
  baseDir: string;
  lockfile: { path: string; content: string | null };
  migrationDirectories: MigrationDirectoryInput[];
  shadowDbInitScript: string;
}
export type DiffTarget =
  | { tag: "empty" }
  | { tag: "schemaDatamodel"; files: SchemaContainer[] }
  | ({ tag: "migrations" } & MigrationListInput);
export interface DiffParams {
  from: DiffTarget;
  to: DiffTarget;
  script: boolean;
  shadowDatabaseUrl: string | null;
  exitCode: boolean | null;
  filters: SchemaFilter;
}
export interface DiffResult {
  /** 0 = no difference, 2 = difference (when exitCode was requested). */
  exitCode: number;
  stdout: string | null;
}

export interface ApplyMigrationsInput {
  migrationsList: MigrationListInput;
  filters: SchemaFilter;
}
export interface DiagnoseMigrationHistoryInput {
  migrationsList: MigrationListInput;
  optInToShadowDatabase: boolean;
  filters: SchemaFilter;
}
export interface SchemaFilter {
  externalTables: string[];
  externalEnums: string[];
}

export interface DiagnoseMigrationHistoryOutput {
  editedMigrationNames: string[];
  failedMigrationNames: string[];
  hasMigrationsTable: boolean;
  history: { diagnostic: string; [key: string]: unknown } | null;
}

export interface WasmSchemaEngine {
  diff(params: DiffParams): Promise<DiffResult>;
  /** What `prisma migrate deploy` runs. */
  applyMigrations(input: ApplyMigrationsInput): Promise<{ appliedMigrationNames: string[] }>;
  /** What `prisma migrate status` runs. */
  diagnoseMigrationHistory(input: DiagnoseMigrationHistoryInput): Promise<DiagnoseMigrationHistoryOutput>;
  free(): void;
}

interface WasmModule {
  newEngine(options: { datamodels: [string, string][] | null }, log: (line: string) => void, adapterFactory: unknown): Promise<WasmSchemaEngine>;
  version(): string;
}

let loaded: WasmModule | undefined;

export function loadSchemaEngineWasm(): WasmModule {
  if (loaded) return loaded;
  panicRegistry();
  const h = new BindgenHost<EngineExports>();

  // A Rust panic, or an input the engine cannot deserialize, surfaces as an exception thrown inside a
  // promise callback, not as a rejection of the call's promise, which would then never settle. Such an
  // error fails every call in flight on this instance at once; the instance is then dropped (the next
  // load starts a fresh one) and its engines are never touched again, not even to free them.
  const inflight = new Set<(error: unknown) => void>();
  let poisoned = false;
  const track = <T,>(promise: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      inflight.add(reject);
      promise.then(resolve, reject).finally(() => inflight.delete(reject));
    });
  const poison = (error: unknown): void => {
    poisoned = true;
    if (loaded === self) loaded = undefined;
    const registry = panicRegistry();
    const panic = registry.message;
    registry.message = "";
    const message = error instanceof Error ? error.message : String(error);
    const failure = new Error(`schema engine wasm failed: ${panic && message.includes("unreachable") ? panic : message}`, { cause: error });
    for (const reject of [...inflight]) reject(failure);
    inflight.clear();
  };
  const nodeRequire = createRequire(import.meta.url);
  const exportNamed = (test: (name: string) => boolean): Fn => {
    const name = Object.keys(h.exports).find(test);
    const fn = name === undefined ? undefined : h.exports[name];
    if (typeof fn !== "function") throw new Error("schema engine wasm: a closure export is missing");
    return fn as Fn;
  };
  // Closures handed to JS: FnMut(JsValue) (promise callbacks) and the stack closure of `new Promise`.
  const invokeFnMut1 = () => exportNamed((n) => n.includes("invoke") && !n.includes("JsValue__wasm_bindgen")) as (a: number, b: number, x: unknown) => void;
  const invokeFnMut2 = () => exportNamed((n) => n.includes("invoke") && n.includes("JsValue__wasm_bindgen")) as (a: number, b: number, x: unknown, y: unknown) => void;
  const destroyClosure = () => exportNamed((n) => n.includes("closure__destroy")) as (a: number, b: number) => void;

  const addRef = (value: unknown): number => {
    const idx = h.exports.__externref_table_alloc();
    h.exports.__wbindgen_externrefs.set(idx, value);
    return idx;
  };
  const optionalRef = (value: unknown): number => (value === undefined || value === null ? 0 : addRef(value));
  /** For imports declared `catch` on the Rust side: the exception goes back to Rust as an Err. */
  const catching =
    <A extends unknown[], R>(f: (...args: A) => R) =>
    (...args: A): R | undefined => {
      try {
        return f(...args);
      } catch (e) {
        h.exports.__wbindgen_exn_store(addRef(e));
        return undefined;
      }
    };

  interface ClosureState {
    a: number;
    b: number;
    refs: number;
  }
  const closureFinalizer = new FinalizationRegistry<ClosureState>((s) => {
    if (s.a !== 0) destroyClosure()(s.a, s.b);
  });
  const makeMutClosure = (a: number, b: number) => {
    const state: ClosureState = { a, b, refs: 1 };
    const unref = () => {
      if (--state.refs === 0) {
        destroyClosure()(state.a, state.b);
        state.a = 0;
        closureFinalizer.unregister(state);
      }
    };
    const real = (arg: unknown) => {
      state.refs++;
      const current = state.a;
      state.a = 0;
      try {
        invokeFnMut1()(current, state.b, arg);
      } catch (e) {
        poison(e);
      } finally {
        state.a = current;
        unref();
      }
    };
    Reflect.set(real, "_wbg_cb_unref", unref);
    closureFinalizer.register(real, state, state);
    return real;
  };

  const engineFinalizer = new FinalizationRegistry<number>((ptr) => {
    if (!poisoned) h.exports.__wbg_schemaengine_free(ptr >>> 0, 1);
  });
  class Engine implements WasmSchemaEngine {
    private ptr: number;
    constructor(ptr: number) {
      this.ptr = ptr >>> 0;
      engineFinalizer.register(this, this.ptr, this);
    }
    private call<R>(method: string, input: unknown): Promise<R> {
      if (this.ptr === 0) return Promise.reject(new Error("schema engine already freed"));
      if (poisoned) return Promise.reject(new Error("schema engine wasm instance failed earlier; create a new engine"));
      const fn = h.exports[`schemaengine_${method}`];
      if (typeof fn !== "function") return Promise.reject(new Error(`schema engine wasm has no ${method}`));
      try {
        return track((fn as (ptr: number, input: unknown) => Promise<R>)(this.ptr, input));
      } catch (e) {
        poison(e);
        return Promise.reject(e);
      }
    }
    diff(params: DiffParams): Promise<DiffResult> {
      return this.call<DiffResult>("diff", params);
    }
    applyMigrations(input: ApplyMigrationsInput): Promise<{ appliedMigrationNames: string[] }> {
      return this.call("applyMigrations", input);
    }
    diagnoseMigrationHistory(input: DiagnoseMigrationHistoryInput): Promise<DiagnoseMigrationHistoryOutput> {
      return this.call("diagnoseMigrationHistory", input);
    }
    free(): void {
      if (this.ptr === 0) return;
      const ptr = this.ptr;
      this.ptr = 0;
      engineFinalizer.unregister(this);
      if (!poisoned) h.exports.__wbg_schemaengine_free(ptr, 0);
    }
  }

  const isA = (value: unknown, ctor: abstract new (...args: never[]) => unknown): boolean => {
    try {
      return value instanceof ctor;
    } catch {
      return false;
    }
  };
  const get = (o: unknown, k: unknown): unknown => Reflect.get(o as object, k as PropertyKey);
  const prop = (o: unknown, k: string): unknown => Reflect.get(o as object, k);
  const global = (name: string) => () => optionalRef(Reflect.get(globalThis, name));

  const imports: Record<string, Fn> = {
    __wbg_isArray_96e0af9891d0945d: (a: unknown) => Array.isArray(a),
    __wbg_length_cdd215e10d9dd507: (a: unknown) => prop(a, "length"),
    __wbg_length_69bca3cb64fc8748: (a: unknown) => prop(a, "length"),
    __wbg_set_3f1d0b984ed272ed: (o: unknown, k: unknown, v: unknown) => void Reflect.set(o as object, k as PropertyKey, v),
    __wbg_set_c213c871859d6500: (o: unknown, i: number, v: unknown) => void Reflect.set(o as object, i >>> 0, v),
    __wbg_new_e17d9f43105b08be: () => [],
    __wbg_new_1acc0b6eea89d040: () => ({}),
    __wbg_new_68651c719dcda04e: () => new Map(),
    __wbg_new_0_f9740686d739025c: () => new Date(),
    __wbg___wbindgen_is_object_c818261d21f283a4: (a: unknown) => typeof a === "object" && a !== null,
    __wbg___wbindgen_is_undefined_2d472862bd29a478: (a: unknown) => a === undefined,
    __wbg___wbindgen_is_string_fbb76cb2940daafd: (a: unknown) => typeof a === "string",
    __wbg___wbindgen_is_bigint_cb320707dcd35f0b: (a: unknown) => typeof a === "bigint",
    __wbg___wbindgen_is_function_ee8a6c5833c90377: (a: unknown) => typeof a === "function",
    __wbg___wbindgen_in_bb933bd9e1b3bc0f: (a: unknown, b: unknown) => (a as PropertyKey) in (b as object),
    __wbg___wbindgen_jsval_loose_eq_b664b38a2f582147: (a: unknown, b: unknown) => a == b,
    __wbg___wbindgen_jsval_eq_6b13ab83478b1c50: (a: unknown, b: unknown) => a === b,
    __wbg___wbindgen_boolean_get_6d5a1ee65bab5f68: (a: unknown) => (typeof a === "boolean" ? (a ? 1 : 0) : 0xffffff),
    __wbg___wbindgen_number_get_a20bf9b85341449d: (ret: number, a: unknown) => {
      h.view().setFloat64(ret + 8, typeof a === "number" ? a : 0, true);
      h.view().setInt32(ret, typeof a === "number" ? 1 : 0, true);
    },
    __wbg___wbindgen_bigint_get_as_i64_f3ebc5a755000afd: (ret: number, a: unknown) => {
      h.view().setBigInt64(ret + 8, typeof a === "bigint" ? a : 0n, true);
      h.view().setInt32(ret, typeof a === "bigint" ? 1 : 0, true);
    },
    __wbg___wbindgen_string_get_e4f06c90489ad01b: (ret: number, a: unknown) =>
      h.writeOptionalString(ret, typeof a === "string" ? a : undefined),
    __wbg___wbindgen_debug_string_df47ffb5e35e6763: (ret: number, a: unknown) => h.writeOptionalString(ret, debugString(a)),
    __wbg_String_8f0eb39a4a4c2f66: (ret: number, a: unknown) => h.writeOptionalString(ret, String(a)),
    __wbg___wbindgen_throw_b855445ff6a94295: (ptr: number, len: number) => {
      throw new Error(h.string(ptr, len));
    },
    __wbg_get_with_ref_key_1dc361bd10053bfe: get,
    __wbg_get_7bed016f185add81: (o: unknown, i: number) => get(o, i >>> 0),
    __wbg_get_ece95cf6585650d9: catching(get),
    __wbg_get_efcb449f58ec27c2: catching(get),
    __wbg_has_787fafc980c3ccdb: catching((o: unknown, k: unknown) => Reflect.has(o as object, k as PropertyKey)),
    __wbg_set_c2abbebe8b9ebee1: catching((o: unknown, k: unknown, v: unknown) => Reflect.set(o as object, k as PropertyKey, v)),
    __wbg_set_907fb406c34a251d: (m: unknown, k: unknown, v: unknown) => (m as Map<unknown, unknown>).set(k, v),
    __wbg_isSafeInteger_d216eda7911dde36: (a: unknown) => Number.isSafeInteger(a),
    __wbg_Number_bb48ca12f395cd08: (a: unknown) => Number(a),
    __wbg_iterator_e5822695327a3c39: () => Symbol.iterator,
    __wbg_next_2c826fe5dfec6b6a: (it: unknown) => prop(it, "next"),
    __wbg_next_020810e0ae8ebcb0: catching((it: unknown) => (it as Iterator<unknown>).next()),
    __wbg_done_2042aa2670fb1db1: (r: unknown) => prop(r, "done"),
    __wbg_value_692627309814bb8c: (r: unknown) => prop(r, "value"),
    __wbg_entries_e171b586f8f6bdbf: (o: unknown) => Object.entries(o as object),
    __wbg_valueOf_9eee4828c11458ca: (a: unknown) => (a as { valueOf(): unknown }).valueOf(),
    __wbg_push_df81a39d04db858c: (arr: unknown, v: unknown) => (arr as unknown[]).push(v),
    __wbg_instanceof_Map_8579b5e2ab5437c7: (a: unknown) => isA(a, Map),
    __wbg_instanceof_Promise_001fdd42afa1b7ef: (a: unknown) => isA(a, Promise),
    __wbg_instanceof_Uint8Array_20c8e73002f7af98: (a: unknown) => isA(a, Uint8Array),
    __wbg_instanceof_ArrayBuffer_70beb1189ca63b38: (a: unknown) => isA(a, ArrayBuffer),
    __wbg_set_message_f18c00fbf3b3e80e: (ptr: number, len: number) => panicRegistry().set_message(h.string(ptr, len)),
    __wbg_Error_e83987f665cf5504: (ptr: number, len: number) => new Error(h.string(ptr, len)),
    __wbg_new_a7442b4b19c1a356: (ptr: number, len: number) => new Error(h.string(ptr, len)),
    __wbg_set_name_d94846a29e626702: (o: unknown, ptr: number, len: number) => void Reflect.set(o as object, "name", h.string(ptr, len)),
    __wbg_schemaengine_new: (ptr: number) => new Engine(ptr),
    // `new Promise(executor)` where the executor is a Rust closure living on the wasm stack.
    __wbg_new_3c3d849046688a66: (a: number, b: number) => {
      const state = { a, b };
      try {
        return new Promise((resolve, reject) => {
          const current = state.a;
          state.a = 0;
          try {
            invokeFnMut2()(current, state.b, resolve, reject);
          } finally {
            state.a = current;
          }
        });
      } finally {
        state.a = 0;
        state.b = 0;
      }
    },
    __wbg_getTime_14776bfb48a1bff9: (d: unknown) => (d as Date).getTime(),
    __wbg_now_793306c526e2e3b6: () => Date.now(),
    __wbg_now_7fd00a794a07d388: (p: unknown) => (p as { now(): number }).now(),
    __wbg_new_23fa8b12a239f036: (a: number, b: number, c: number, d: number) => new RegExp(h.string(a, b), h.string(c, d)),
    __wbg_exec_fdeec61d47617356: (re: unknown, ptr: number, len: number) => optionalRef((re as RegExp).exec(h.string(ptr, len))),
    __wbg_new_from_slice_92f4d78ca282a2d2: (ptr: number, len: number) => new Uint8Array(h.bytes(ptr, len)),
    __wbg_new_with_length_01aa0dc35aa13543: (len: number) => new Uint8Array(len >>> 0),
    __wbg_new_5a79be3ab53b8aa5: (a: unknown) => new Uint8Array(a as ArrayBuffer),
    __wbg_subarray_480600f3d6a9f26c: (a: unknown, start: number, end: number) => (a as Uint8Array).subarray(start >>> 0, end >>> 0),
    __wbg_prototypesetcall_2a6620b6922694b2: (ptr: number, len: number, src: unknown) => h.bytes(ptr, len).set(src as Uint8Array),
    // getrandom's probes for a crypto source.
    __wbg_crypto_805be4ce92f1e370: (o: unknown) => prop(o, "crypto"),
    __wbg_msCrypto_2ac4d17c4748234a: (o: unknown) => prop(o, "msCrypto"),
    __wbg_process_5cff2739921be718: (o: unknown) => prop(o, "process"),
    __wbg_versions_a8e5a362e1f16442: (o: unknown) => prop(o, "versions"),
    __wbg_node_ecc8306b9857f33d: (o: unknown) => prop(o, "node"),
    __wbg_require_0c566c6f2eef6c79: catching(() => nodeRequire),
    __wbg_randomFillSync_d3c85af7e31cf1f8: catching((c: unknown, buf: unknown) => void (c as { randomFillSync(b: unknown): void }).randomFillSync(buf)),
    __wbg_getRandomValues_f6a868620c8bab49: catching((c: unknown, buf: unknown) => void (c as { getRandomValues(b: Uint8Array): unknown }).getRandomValues(buf as Uint8Array)),
    __wbg_new_no_args_ee98eee5275000a4: (ptr: number, len: number) => new Function(h.string(ptr, len)),
    __wbg_call_e762c39fa8ea36bf: catching((f: unknown, self: unknown) => (f as (this: unknown) => unknown).call(self)),
    __wbg_call_525440f72fbfc0ea: catching((f: unknown, self: unknown, a: unknown) => (f as (this: unknown, x: unknown) => unknown).call(self, a)),
    __wbg_static_accessor_GLOBAL_89e1d9ac6a1b250e: global("global"),
    __wbg_static_accessor_GLOBAL_THIS_8b530f326a9e48ac: () => optionalRef(globalThis),
    __wbg_static_accessor_WINDOW_b45bfc5a37f6cfa2: global("window"),
    __wbg_static_accessor_SELF_6fdf4b64710cc91b: global("self"),
    __wbg_setTimeout_5d6a1d4fc51ea450: (f: unknown, ms: number) => Number(setTimeout(f as () => void, ms)),
    __wbg__wbg_cb_unref_2454a539ea5790d9: (f: unknown) => (Reflect.get(f as object, "_wbg_cb_unref") as () => void)(),
    __wbg_then_4f46f6544e6b4a28: (p: unknown, f: unknown) => (p as Promise<unknown>).then(f as (v: unknown) => unknown),
    __wbg_then_70d05cf780a18d77: (p: unknown, f: unknown, g: unknown) =>
      (p as Promise<unknown>).then(f as (v: unknown) => unknown, g as (e: unknown) => unknown),
    __wbg_resolve_caf97c30b83f7053: (v: unknown) => Promise.resolve(v),
    __wbg_queueMicrotask_6d79674585219521: (f: unknown) => queueMicrotask(f as () => void),
    __wbg_queueMicrotask_5a8a9131f3f0b37b: (o: unknown) => prop(o, "queueMicrotask"),
    __wbindgen_init_externref_table: () => h.initExternrefTable(),
    __wbindgen_cast_cb9088102bce6b30: (ptr: number, len: number) => h.bytes(ptr, len),
    __wbindgen_cast_a9993887db3ced61: (a: number, b: number) => makeMutClosure(a, b),
    __wbindgen_cast_9ae0607507abb057: (v: bigint) => v,
    __wbindgen_cast_d6cd19b81560fd6e: (v: number) => v,
    __wbindgen_cast_2241b6af4c4b2941: (ptr: number, len: number) => h.string(ptr, len),
    __wbindgen_cast_4625c577ab2ec9ee: (v: bigint) => BigInt.asUintN(64, v),
  };

  const module = compileWasm("schema_engine_bg.wasm");
  assertImportsCovered(module, imports, "schema-engine wasm");
  h.exports = instantiate<EngineExports>(module, { "./schema_engine_bg.js": imports });
  h.exports.__wbindgen_start();

  const self: WasmModule = {
    newEngine: async (options, log, adapterFactory) =>
      (await track(h.exports.schemaengine_new(options, log, adapterFactory))) as WasmSchemaEngine,
    version: () => {
      const [ptr, len] = h.exports.version();
      return h.takeString(ptr, len);
    },
  };
  loaded = self;
  return self;
}

function debugString(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}\n${value.stack ?? ""}`;
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return typeof value === "object" && value !== null ? (JSON.stringify(value) ?? String(value)) : String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
