// Minimal host side of the wasm-bindgen ABI (externref mode), shared by the two Prisma wasm modules that
// the prisma package ships in node_modules/prisma/build but does not expose as importable JS.
// Why this exists: the Prisma CLI needs a native schema-engine binary that cannot be downloaded here,
// while the same engine compiled to wasm sits in node_modules. See packages/db-tooling/README.md.
import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";

// The project compiles without the DOM lib, which is where TypeScript declares `WebAssembly`; these are
// the few pieces used here, typed locally.
export interface WasmTable {
  get(index: number): unknown;
  set(index: number, value: unknown): void;
  grow(delta: number): number;
}
export interface WasmModule {
  readonly __wasmModule: unique symbol;
}
interface WasmApi {
  Module: { new (bytes: Uint8Array): WasmModule; imports(module: WasmModule): { module: string; name: string; kind: string }[] };
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: object };
}
const wasmApi = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

/** The exports every wasm-bindgen module in externref mode has. */
export interface BindgenExports {
  memory: { buffer: ArrayBuffer };
  __wbindgen_externrefs: WasmTable;
  __wbindgen_malloc(size: number, align: number): number;
  __wbindgen_free(ptr: number, size: number, align: number): void;
  __wbindgen_start(): void;
}

/** Directory of the installed `prisma` package's build output, where the wasm files live. */
export function prismaBuildDir(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve("prisma/package.json")), "build");
}

export function prismaVersion(): string {
  const require = createRequire(import.meta.url);
  const pkg: unknown = require("prisma/package.json");
  const version = typeof pkg === "object" && pkg !== null ? Reflect.get(pkg, "version") : undefined;
  return typeof version === "string" ? version : "unknown";
}

export function compileWasm(file: string): WasmModule {
  const full = path.join(prismaBuildDir(), file);
  if (!fs.existsSync(full)) {
    throw new Error(`${full} is missing: this tooling needs the prisma package's bundled wasm (prisma 7.x)`);
  }
  return new wasmApi.Module(fs.readFileSync(full));
}

export function instantiate<E>(module: WasmModule, imports: Record<string, Record<string, unknown>>): E {
  return new wasmApi.Instance(module, imports).exports as E;
}

/** Fails early, naming what is missing, when a Prisma upgrade changed the module's imports. */
export function assertImportsCovered(module: WasmModule, provided: Record<string, unknown>, what: string): void {
  const missing = wasmApi.Module.imports(module)
    .map((i) => i.name)
    .filter((name) => !(name in provided));
  if (missing.length > 0) {
    throw new Error(
      `${what}: the installed prisma (${prismaVersion()}) ships a wasm module needing imports this loader ` +
        `does not provide (${missing.join(", ")}). Update packages/db-tooling/src/prisma-wasm for this Prisma version.`,
    );
  }
}

/** Memory and value-passing helpers bound to one instance (set `exports` right after instantiation). */
export class BindgenHost<E extends BindgenExports> {
  exports!: E;
  private bytesView: Uint8Array | null = null;
  private dataView: DataView | null = null;
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true, fatal: true });
  private readonly encoder = new TextEncoder();

  bytes(ptr: number, len: number): Uint8Array {
    if (this.bytesView === null || this.bytesView.byteLength === 0) {
      this.bytesView = new Uint8Array(this.exports.memory.buffer);
    }
    return this.bytesView.subarray(ptr >>> 0, (ptr >>> 0) + len);
  }

  view(): DataView {
    if (this.dataView === null || this.dataView.buffer !== this.exports.memory.buffer) {
      this.dataView = new DataView(this.exports.memory.buffer);
    }
    return this.dataView;
  }

  string(ptr: number, len: number): string {
    return this.decoder.decode(this.bytes(ptr, len));
  }

  /** Copies a string into wasm memory; ownership passes to the callee. */
  passString(value: string): [ptr: number, len: number] {
    const encoded = this.encoder.encode(value);
    const ptr = this.exports.__wbindgen_malloc(encoded.length, 1) >>> 0;
    this.bytes(ptr, encoded.length).set(encoded);
    return [ptr, encoded.length];
  }

  /** Reads a string the module returned and frees it. */
  takeString(ptr: number, len: number): string {
    try {
      return this.string(ptr, len);
    } finally {
      this.exports.__wbindgen_free(ptr, len, 1);
    }
  }

  /** Writes an optional string as (ptr, len) at `retptr`, the ABI for `Option<String>` out-params. */
  writeOptionalString(retptr: number, value: string | undefined): void {
    const [ptr, len] = value === undefined ? [0, 0] : this.passString(value);
    this.view().setInt32(retptr + 4, len, true);
    this.view().setInt32(retptr, ptr, true);
  }

  initExternrefTable(): void {
    const table = this.exports.__wbindgen_externrefs;
    const offset = table.grow(4);
    table.set(0, undefined);
    table.set(offset, undefined);
    table.set(offset + 1, null);
    table.set(offset + 2, true);
    table.set(offset + 3, false);
  }
}

interface PanicRegistry {
  set_message(message: string): void;
}

/** The modules report Rust panics through `globalThis.PRISMA_WASM_PANIC_REGISTRY.set_message()`. */
export function panicRegistry(): PanicRegistry & { message: string } {
  const existing: unknown = Reflect.get(globalThis, "PRISMA_WASM_PANIC_REGISTRY");
  if (typeof existing === "object" && existing !== null && "set_message" in existing && "message" in existing) {
    return existing as PanicRegistry & { message: string };
  }
  const registry = {
    message: "",
    set_message(message: string) {
      registry.message = `RuntimeError: ${message}`;
    },
  };
  Reflect.set(globalThis, "PRISMA_WASM_PANIC_REGISTRY", registry);
  return registry;
}
