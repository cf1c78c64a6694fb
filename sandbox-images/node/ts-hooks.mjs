// Node module hooks that run TypeScript as JavaScript (types stripped by TypeScript's own transpiler, no
// type checking: that is `tsc --noEmit`'s job). Registered by ts-register.mjs: node --import <it> file.ts
import { readFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

// Loaded on the first TypeScript file only: plain JavaScript runs do not pay for the compiler.
let ts;
const typescript = () => (ts ??= createRequire(import.meta.url)("/usr/local/lib/node_modules/typescript/lib/typescript.js"));

const TS = /\.(ts|mts|cts|tsx)$/;

export async function resolve(specifier, context, next) {
  try {
    return await next(specifier, context);
  } catch (e) {
    // TypeScript sources import "./x.js" (or "./x") for x.ts; try the TypeScript file before giving up.
    if (!(specifier.startsWith(".") || specifier.startsWith("/")) || !context.parentURL) throw e;
    const base = specifier.replace(/\.(js|mjs|cjs)$/, "");
    for (const cand of [`${base}.ts`, `${base}.mts`, `${base}.cts`, `${base}.tsx`, `${base}/index.ts`]) {
      const url = new URL(cand, context.parentURL);
      if (existsSync(fileURLToPath(url))) return { url: url.href, shortCircuit: true };
    }
    throw e;
  }
}

export async function load(url, context, next) {
  if (!url.startsWith("file:") || !TS.test(url)) return next(url, context);
  const path = fileURLToPath(url);
  const cjs = path.endsWith(".cts");
  const ts = typescript();
  const out = ts.transpileModule(await readFile(path, "utf8"), {
    fileName: path,
    compilerOptions: {
      module: cjs ? ts.ModuleKind.CommonJS : ts.ModuleKind.ESNext,
      target: ts.ScriptTarget.ES2022,
      jsx: ts.JsxEmit.ReactJSX,
      sourceMap: false,
      inlineSourceMap: true,
      esModuleInterop: true,
    },
  });
  return { format: cjs ? "commonjs" : "module", source: out.outputText, shortCircuit: true };
}
