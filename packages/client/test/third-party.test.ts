// Issue 28 (3): a third party's client, generated from the committed document with openapi-typescript's
// DEFAULT options, compiles (tsc, strict) with every goal body the docs show typed as the generated request
// body, and the commands of docs/api.md "Generating a client" work as pasted. The document once carried
// `default` in request schemas, which those options turn into required fields (`kind`, `language`,
// `checker_files`...): the last test puts them back and expects the same program to fail.
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const OPENAPI_TS = join(root, "node_modules/openapi-typescript/bin/cli.js");
const TSC = join(root, "node_modules/typescript/bin/tsc");

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { cwd, maxBuffer: 16 << 20, env: { ...process.env, NO_COLOR: "1" } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, out: `${stdout}${stderr}` }),
    );
  });
}

const page = (name: string) => readFile(join(root, "docs", name), "utf8");
/** The text under a `## heading`, up to the next heading of that level. */
function section(text: string, heading: string): string {
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`no "## ${heading}" section`);
  const end = text.indexOf("\n## ", start + 1);
  return text.slice(start, end < 0 ? undefined : end);
}
const parseOr = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};
const fenced = (text: string, lang: string) => [...text.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)\\n```", "g"))].map((m) => m[1]!);

/** Generates the types with openapi-typescript's CLI and no options but the output file. */
async function generate(document: string, out: string): Promise<void> {
  const r = await run(process.execPath, [OPENAPI_TS, document, "-o", out], root);
  expect(r.code, r.out).toBe(0);
}

/** Type-checks `files` in `dir` strictly; no @types and no DOM, so only the program and the client are read. */
async function typecheck(dir: string, files: string[]): Promise<{ code: number; out: string }> {
  const config = { compilerOptions: { strict: true, noEmit: true, module: "preserve", moduleResolution: "bundler", target: "es2022", lib: ["es2022"], types: [] }, files };
  await writeFile(join(dir, "tsconfig.json"), JSON.stringify(config));
  return run(process.execPath, [TSC, "-p", join(dir, "tsconfig.json")], dir);
}

let dir: string;
let program: string;
let examples = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "loopsmith-third-party-"));
  // A checkout as the docs' commands see it: the document, the installed tools, the walkthrough's folder.
  await mkdir(join(dir, "openapi"));
  await cp(join(root, "openapi/openapi.json"), join(dir, "openapi/openapi.json"));
  await symlink(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  await mkdir(join(dir, ".loopsmith-local"));

  const bodies: [string, unknown][] = [];
  for (const json of fenced(section(await page("checks.md"), "Worked examples"), "json")) bodies.push(["docs/checks.md worked example", JSON.parse(json)]);
  const models: unknown[] = [];
  for (const json of fenced(await page("api.md"), "json")) {
    if (json.trimStart().startsWith('"model":')) models.push((JSON.parse(`{${json}}`) as { model: unknown }).model);
    else if (/^\s*\{\s*"objective"/.test(json)) bodies.push(["docs/api.md", JSON.parse(json)]);
  }
  // The walkthrough builds its goal with a shell block: run it as written and take the file it writes.
  const walkthrough = fenced(await page("getting-started.md"), "sh").filter((b) => b.includes('".loopsmith-local/goal.json"'));
  expect(walkthrough).toHaveLength(1);
  const made = await run("bash", ["-e", "-c", walkthrough[0]!], dir);
  expect(made.code, made.out).toBe(0);
  bodies.push(["docs/getting-started.md goal.json", JSON.parse(await readFile(join(dir, ".loopsmith-local/goal.json"), "utf8"))]);
  expect(bodies.filter(([from]) => from.startsWith("docs/checks.md")).length).toBeGreaterThanOrEqual(4);
  expect(bodies.filter(([from]) => from === "docs/api.md").length).toBeGreaterThanOrEqual(1);
  expect(models.length).toBeGreaterThanOrEqual(1);
  examples = bodies.length + models.length;

  program = [
    'import type { paths } from "./loopsmith";',
    'type GoalBody = paths["/goals"]["post"]["requestBody"]["content"]["application/json"];',
    'type Model = NonNullable<GoalBody["model"]>;',
    // The least a client sends: every other field has a server default.
    'export const minimal: GoalBody = { objective: "Count the rows of data.csv." };',
    ...bodies.map(([from, body], i) => `// ${from}\nexport const body${i}: GoalBody = ${JSON.stringify(body, null, 2)};`),
    ...models.map((model, i) => `// docs/api.md "The scripted model"\nexport const model${i}: Model = ${JSON.stringify(model, null, 2)};`),
    // Responses as the server sends them: what it always sends is required, so no `undefined` to handle.
    'type Accepted = paths["/goals"]["post"]["responses"][202]["content"]["application/json"];',
    'type Goal = paths["/goals/{id}"]["get"]["responses"][200]["content"]["application/json"];',
    "export function read(accepted: Accepted, goal: Goal): [string, string, string, boolean, number, number, unknown[]] {",
    "  return [accepted.id, accepted.status_url, goal.state, goal.verified, goal.max_attempts, goal.attempts, goal.checks];",
    "}",
    "",
  ].join("\n");
}, 120_000);

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("a client generated with openapi-typescript's default options", () => {
  it("compiles with every goal body of the docs typed as the request body of POST /goals", async () => {
    const out = join(dir, "client");
    await mkdir(out);
    await generate(join(dir, "openapi/openapi.json"), join(out, "loopsmith.ts"));
    await writeFile(join(out, "examples.ts"), program);
    const r = await typecheck(out, ["examples.ts"]);
    expect(r.out).toBe("");
    expect(r.code).toBe(0);
    expect(examples).toBeGreaterThanOrEqual(7);
  }, 120_000);

  it('runs the commands of docs/api.md "Generating a client" as written', async () => {
    const blocks = fenced(section(await page("api.md"), "Generating a client"), "sh");
    expect(blocks).toHaveLength(1);
    const r = await run("bash", ["-e", "-c", blocks[0]!], dir);
    expect(r.code, r.out).toBe(0);
    expect(await readFile(join(dir, ".loopsmith-local/client/loopsmith.ts"), "utf8")).toContain("export interface paths");
  }, 120_000);

  it("fails to compile the same program when the request schemas carry `default` (what the test guards against)", async () => {
    // The document as it was: each "Default: X." in a request schema back as the `default` keyword.
    const doc = JSON.parse(await readFile(join(dir, "openapi/openapi.json"), "utf8")) as { components: { schemas: Record<string, unknown> } };
    let restored = 0;
    const restore = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(restore);
      if (!node || typeof node !== "object") return;
      const s = node as Record<string, unknown>;
      const m = typeof s.description === "string" ? /(?:^| )Default: (.+)\.$/.exec(s.description) : null;
      const value = m ? parseOr(m[1]!) : undefined; // prose such as "Default: the tenant's policy." is no default
      if (m && value !== undefined) {
        s.default = value;
        s.description = s.description === m[0] ? undefined : (s.description as string).slice(0, -m[0].length);
        restored++;
      }
      for (const [k, v] of Object.entries(s)) if (k !== "enum" && k !== "const" && k !== "default") restore(v);
    };
    for (const [name, schema] of Object.entries(doc.components.schemas)) if (name.endsWith("Input")) restore(schema);
    expect(restored).toBeGreaterThan(10);
    const out = join(dir, "restored");
    await mkdir(out);
    await writeFile(join(out, "openapi.json"), JSON.stringify(doc));
    await generate(join(out, "openapi.json"), join(out, "loopsmith.ts"));
    await writeFile(join(out, "examples.ts"), program);
    const r = await typecheck(out, ["examples.ts"]);
    expect(r.code).not.toBe(0);
    // tsc names the first missing properties of each literal: the defaulted fields, demanded.
    expect(r.out).toMatch(/error TS27(39|40): Type '\{ objective: string; \}' is missing the following properties from type [^\n]*: checks, inputs, checker_files, language\b/);
    expect(r.out).toMatch(/error TS2739: [^\n]*is missing the following properties from type [^\n]*: kind, description\n/);
    expect(r.out).toMatch(/error TS2741: Property 'files' is missing/);
  }, 120_000);
});
