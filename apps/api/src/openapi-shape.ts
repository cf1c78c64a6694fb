// The document as generators and linters read it, applied last (openApiTransformObject):
// - request schemas say their defaults in words, not with the `default` keyword, because
//   openapi-typescript's default options (defaultNonNullable) make every property with a `default`
//   required, and a client's body would then have to spell out each field the server fills in itself;
// - components that nothing references are dropped (fastify-type-provider-zod publishes both the input
//   and the output variant of every named schema, though a response-only schema is never sent);
// - every operation's tag is in the top-level tag list, which describes it.

type Json = Record<string, unknown>;

/** Each tag an operation may carry, with what it groups. Order is the order Swagger UI shows. */
export const TAGS: { name: string; description: string }[] = [
  { name: "goals", description: "Submit a goal and follow it: its state, tape and events, cancel, approve or reject it, its receipt and its replay script." },
  { name: "artifacts", description: "The files a goal's attempts wrote, the program each attempt ran, and the checker files the tenant sent." },
  { name: "schedules", description: "Pipelines: a goal run on a cron expression or an interval with fresh inputs; once a tick is verified, later ticks run its program first with no model call." },
  { name: "checks", description: "The check catalogue: what a goal's definition of done can contain." },
  { name: "webhooks", description: "A goal's webhook deliveries, redelivery, and the tenant's signing secrets. The events themselves are under `webhooks`." },
  { name: "reports", description: "Reports across a tenant's goals." },
  { name: "admin", description: "Operator routes, with ADMIN_API_KEY: dead-lettered goals, tenants' API keys and webhook signing secrets." },
  { name: "health", description: "Liveness and readiness probes: no API key, never rate limited." },
];

/** The words a request schema carries in place of `default`; the contract test expects exactly these. */
export function defaultInWords(description: unknown, value: unknown): string {
  const words = `Default: ${JSON.stringify(value)}.`;
  return typeof description === "string" && description !== "" ? `${description} ${words}` : words;
}

const SUBSCHEMA = ["items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties"];
const SUBSCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SUBSCHEMA_MAPS = ["properties", "patternProperties", "$defs", "dependentSchemas"];

/**
 * Moves every `default` keyword of a request schema into its description, in place. Walks schema
 * positions only, so a property named "default" or an enum value stays as it is.
 */
export function defaultsToWords(schema: unknown): void {
  if (!schema || typeof schema !== "object" || Array.isArray(schema)) return;
  const s = schema as Json;
  if ("default" in s) {
    s.description = defaultInWords(s.description, s.default);
    delete s.default;
  }
  for (const k of SUBSCHEMA) defaultsToWords(s[k]);
  for (const k of SUBSCHEMA_LISTS) if (Array.isArray(s[k])) for (const sub of s[k] as unknown[]) defaultsToWords(sub);
  for (const k of SUBSCHEMA_MAPS) if (s[k] && typeof s[k] === "object") for (const sub of Object.values(s[k] as Json)) defaultsToWords(sub);
}

const REF = /"#\/components\/schemas\/([^"]+)"/g;
const refsIn = (value: unknown): string[] => [...JSON.stringify(value ?? null).matchAll(REF)].map((m) => decodeURIComponent(m[1]!));

type Operation = Json & { tags?: string[]; requestBody?: { content?: Record<string, { schema?: unknown }> } };
type Doc = Json & { paths?: Record<string, Record<string, Operation>>; webhooks?: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, unknown> } };

function operations(doc: Doc): Operation[] {
  return [...Object.values(doc.paths ?? {}), ...Object.values(doc.webhooks ?? {})].flatMap((item) => Object.values(item).filter((op): op is Operation => !!op && typeof op === "object" && "responses" in op));
}

/** The request-side schemas (fastify-type-provider-zod names them `<id>Input`) and inline request bodies. */
function requestSchemas(doc: Doc): unknown[] {
  const named = Object.entries(doc.components?.schemas ?? {})
    .filter(([name]) => name.endsWith("Input"))
    .map(([, s]) => s);
  const inline = Object.values(doc.paths ?? {})
    .flatMap((item) => Object.values(item))
    .flatMap((op) => Object.values(op.requestBody?.content ?? {}).map((c) => c.schema));
  return [...named, ...inline];
}

/** The components reachable from the operations (paths and webhooks), following refs between components. */
export function referencedComponents(doc: Doc): Set<string> {
  const schemas = doc.components?.schemas ?? {};
  const seen = new Set<string>();
  const todo = refsIn([doc.paths, doc.webhooks]);
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name)) continue;
    if (!(name in schemas)) throw new Error(`OpenAPI: #/components/schemas/${name} is referenced but not defined`);
    seen.add(name);
    todo.push(...refsIn(schemas[name]));
  }
  return seen;
}

export function shapeDocument<T extends object>(input: T): T & { tags: typeof TAGS } {
  const doc = input as Doc;
  const known = new Set(TAGS.map((t) => t.name));
  for (const op of operations(doc))
    for (const tag of op.tags ?? []) if (!known.has(tag)) throw new Error(`OpenAPI: tag "${tag}" of ${String(op.operationId)} is not in TAGS (openapi-shape.ts): describe it there`);
  for (const s of requestSchemas(doc)) defaultsToWords(s);
  const schemas = doc.components?.schemas;
  if (schemas) {
    const used = referencedComponents(doc);
    for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
  }
  return { ...input, tags: TAGS };
}
