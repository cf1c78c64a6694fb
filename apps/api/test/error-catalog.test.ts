// The error catalog and the OpenAPI document must agree: clients generate code from the document and
// match on codes, so a code the API can answer with must be in the Error schema, and every error status
// a route documents must carry the Error schema.
import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOG, type ErrorCode } from "@loopsmith/core";
import { generateOpenApi } from "../src/openapi";
import { BEFORE_ROUTING } from "../src/openapi-docs";

type Response = { content?: Record<string, { schema?: { $ref?: string } }> };
type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, Response> }>>;
  components: { schemas: Record<string, { properties: { error: { properties: { code: { enum: string[] } } } } }> };
};

const ERROR_REF = "#/components/schemas/Error";
// The readiness probe answers 503 with its own body (which dependency is missing), by design.
const OWN_ERROR_BODIES = new Set(["GET /readyz 503"]);
/**
 * Codes no route answers with: they cross process boundaries inside the system (job results, the tape,
 * dead letters) and never become an HTTP answer. Checked below: apps/api/src does not use them.
 */
const NOT_HTTP_ANSWERS: ErrorCode[] = ["LS_ERR_MODEL_OUTPUT"];
/** issue 25: answered by the HTTP server before any route is matched; the document's description lists them. */
const BEFORE_ROUTING_CODES = Object.keys(BEFORE_ROUTING) as ErrorCode[];

async function doc(): Promise<Doc> {
  return JSON.parse(await generateOpenApi()) as Doc;
}

function operations(d: Doc) {
  return Object.entries(d.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })));
}

async function sourceFiles(dir: URL): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((e) => (e.isDirectory() ? sourceFiles(new URL(`${e.name}/`, dir)) : Promise.resolve(e.name.endsWith(".ts") ? [new URL(e.name, dir).pathname] : []))),
  );
  return nested.flat();
}

describe("the error catalog in the OpenAPI document", () => {
  it("lists exactly the catalog's codes in the Error schema", async () => {
    const codes = (await doc()).components.schemas.Error!.properties.error.properties.code.enum;
    expect([...codes].sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
  });

  it("uses the Error schema for every documented error status of every route", async () => {
    const wrong = operations(await doc()).flatMap(({ route, op }) =>
      Object.entries(op.responses)
        .filter(([status]) => Number(status) >= 400 && !OWN_ERROR_BODIES.has(`${route} ${status}`))
        .filter(([, r]) => {
          const types = Object.entries(r.content ?? {});
          return types.length === 0 || types.some(([type, c]) => type !== "application/json" || c.schema?.$ref !== ERROR_REF);
        })
        .map(([status, r]) => `${route} ${status}: ${JSON.stringify(r.content)}`),
    );
    expect(wrong).toEqual([]);
  });

  it("documents every status a catalog code maps to on at least one route", async () => {
    const documented = new Set(operations(await doc()).flatMap(({ op }) => Object.keys(op.responses).map(Number)));
    const answerable = (Object.keys(ERROR_CATALOG) as ErrorCode[]).filter((c) => !NOT_HTTP_ANSWERS.includes(c) && !BEFORE_ROUTING_CODES.includes(c));
    const missing = answerable.filter((c) => !documented.has(ERROR_CATALOG[c].status)).map((c) => `${c} (${ERROR_CATALOG[c].status})`);
    expect(missing).toEqual([]);
  });

  it("lists the answers given before routing, with their statuses, in the document's description (issue 25)", async () => {
    const description = ((await doc()) as unknown as { info: { description: string } }).info.description;
    expect(BEFORE_ROUTING_CODES.length).toBeGreaterThan(0);
    for (const code of BEFORE_ROUTING_CODES) {
      expect(code in ERROR_CATALOG).toBe(true);
      expect(description).toContain(`${ERROR_CATALOG[code].status}: `);
      expect(description).toContain(`(${code})`);
    }
  });

  it("documents no error status that no catalog code has", async () => {
    const statuses = new Set<number>(Object.values(ERROR_CATALOG).map((e) => e.status));
    const stray = operations(await doc()).flatMap(({ route, op }) =>
      Object.keys(op.responses)
        .filter((s) => Number(s) >= 400 && !OWN_ERROR_BODIES.has(`${route} ${s}`) && !statuses.has(Number(s)))
        .map((s) => `${route} ${s}`),
    );
    expect(stray).toEqual([]);
  });

  it("keeps the codes exempted from the above out of the API's code", async () => {
    const files = await sourceFiles(new URL("../src/", import.meta.url));
    expect(files.length).toBeGreaterThan(5);
    const uses: string[] = [];
    for (const file of files) {
      const text = await readFile(file, "utf8");
      for (const code of NOT_HTTP_ANSWERS) if (text.includes(code)) uses.push(`${file}: ${code}`);
    }
    expect(uses, "an exempted code is used by the API: document its status on the route and drop the exemption").toEqual([]);
  });
});
