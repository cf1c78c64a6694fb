// What the zod schemas alone cannot tell the OpenAPI document: a description for each response (never
// "Default Response"), the response headers the API really sends (Location, Idempotent-Replayed, the
// rate-limit headers, Retry-After, ETag...), an operationId for every route, the servers, and the
// webhook events. Wraps fastify-type-provider-zod's transforms, which drop all of these.
import { jsonSchemaTransform, jsonSchemaTransformObject } from "fastify-type-provider-zod";
import { WEBHOOK_EVENTS } from "@loopsmith/schemas";
import { shapeDocument } from "./openapi-shape";

type Json = Record<string, unknown>;
type Transform = typeof jsonSchemaTransform;
type TransformObject = typeof jsonSchemaTransformObject;

/** A response header as the document shows it: a schema and what it means. */
export interface HeaderDoc {
  description: string;
  schema?: Json;
}

/**
 * Per-route additions, keyed by status, given in a route's schema as `"x-responses"` (removed from the
 * document once applied): `{ 202: { description, headers: { location: {...} } } }`.
 */
export type ResponseDocs = Record<number, { description?: string; headers?: Record<string, HeaderDoc> }>;

const STATUS_DESCRIPTIONS: Record<string, string> = {
  "200": "OK.",
  "202": "Accepted.",
  "204": "No content.",
  "304": "Not modified.",
  "400": "The request is invalid (LS_ERR_VALIDATION and others): `details` lists each field path.",
  "401": "No valid API key (LS_ERR_UNAUTHORIZED).",
  "403": "This key may not do that (LS_ERR_FORBIDDEN).",
  "404": "Not found for this tenant (LS_ERR_NOT_FOUND; LS_ERR_ARTIFACT_NOT_FOUND for a goal's missing file).",
  "408": "The request body did not arrive in time (LS_ERR_BODY_TIMEOUT).",
  "409": "Conflict with the goal's state or an earlier request (see the error code).",
  "413": "The request body is too large (LS_ERR_PAYLOAD_TOO_LARGE).",
  "415": "Send the body as application/json (LS_ERR_UNSUPPORTED_MEDIA_TYPE).",
  "429": "Too many requests, goals or streams (see the error code); wait Retry-After seconds when given.",
  "500": "Internal error (LS_ERR_INTERNAL).",
  "503": "A dependency is not ready or the server is busy (see the error code); retry, after Retry-After when given.",
};

const int = { type: "integer" };
const RATE_LIMIT_HEADERS: Record<string, HeaderDoc> = {
  "x-ratelimit-limit": { description: "Requests per minute this tenant may make (sent when RATE_LIMIT_PER_MINUTE is on).", schema: int },
  "x-ratelimit-remaining": { description: "Requests left in the current minute (sent when RATE_LIMIT_PER_MINUTE is on).", schema: int },
};
const RETRY_AFTER: Record<string, HeaderDoc> = {
  "retry-after": { description: "Seconds to wait before retrying.", schema: int },
};

function operationIdFor(method: string, url: string): string {
  const words = url
    .split("/")
    .filter(Boolean)
    .map((s) => s.replace(/^:/, "by-").replace(/[^A-Za-z0-9]+/g, "-"))
    .join("-")
    .split("-")
    .filter(Boolean);
  return [method.toLowerCase(), ...words].map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1))).join("");
}

/**
 * What a route's own schema leaves out, keyed by "METHOD /openapi/{path}": a readable operationId where
 * the route gives none (the fallback spells out the URL) and a description where it has only a summary.
 * The route's own values win.
 */
const OPERATIONS: Record<string, { operationId?: string; description?: string }> = {
  "GET /healthz": { description: "Answers 200 while the process is up, without asking any dependency: a liveness probe. Needs no API key, and is neither rate limited nor shed under load." },
  "GET /readyz": {
    description:
      "Probes each dependency with a timeout: 200 when all are reachable, 503 with `missing` naming those that are not. A failed check shows an error code and a short message, never the raw error. Needs no API key, and is neither rate limited nor shed under load.",
  },
  "GET /goals": {
    description: "Summaries of this tenant's goals, newest first, a page at a time: `limit` per page (1 to 100), `state` to keep one state, and `cursor` set to the previous page's `next_cursor` for the next, older page.",
  },
  "GET /goals/{id}": {
    description:
      "The whole goal: its state and version, the tape of transitions with their evidence, the frozen plan and checks with their latest results, each execution, the report (verified) or failure report (failed), budgets and cost. Another tenant's goal is a 404.",
  },
  "GET /goals/{id}/deliveries": { description: "Each webhook delivery of the goal (one per event), newest first, with its status and one log row per HTTP attempt." },
  "POST /deliveries/{id}/redeliver": {
    description: "Queues the delivery again with the same payload bytes and the same webhook-id, so a receiver that deduplicates on webhook-id sees it once. A delivery still being attempted is a 409 (LS_ERR_DELIVERY_IN_PROGRESS).",
  },
  "GET /admin/dead-letters": { description: "Goals parked in errored after an infrastructure failure outlasted its retries, oldest first (at most 500): the state each errored in, the error, its code and the tries." },
  "POST /admin/dead-letters/{id}/retry": { description: "Moves an errored goal back to the state it errored in and queues it again. A goal that is not in errored is a 409 (LS_ERR_GOAL_STATE)." },
  "POST /admin/tenants/{tenant_id}/api-keys": { operationId: "issueApiKey", description: "Issues another API key for the tenant, optionally named and expiring. The key is in this answer only: the server keeps its sha256." },
  "GET /admin/tenants/{tenant_id}/api-keys": { operationId: "listApiKeys", description: "Every API key of the tenant: id, prefix, name, when it was made, expires or was revoked, and its status. Never the key itself." },
  "POST /admin/tenants/{tenant_id}/api-keys/{key_id}/revoke": { operationId: "revokeApiKey", description: "Revokes the key now: its next request is a 401." },
  "POST /admin/tenants/{tenant_id}/api-keys/{key_id}/rotate": {
    operationId: "rotateApiKey",
    description: "Issues a new key (in this answer only) and lets the old one work for `overlap_seconds` more (0: it stops now). A revoked or expired key is a 409 (LS_ERR_KEY_INACTIVE): issue a new key instead.",
  },
  "GET /admin/tenants/{tenant_id}/webhook-secrets": { operationId: "listWebhookSecrets", description: "The tenant's webhook signing secrets: id, when each was made and expires, and whether it signs deliveries now. Never the secret itself." },
  "POST /admin/tenants/{tenant_id}/webhook-secrets/{secret_id}/expire": { operationId: "expireWebhookSecret" },
  "GET /goals/{id}/script": { operationId: "getGoalScript" },
  "GET /reports/judges": { operationId: "getJudgeReport" },
};

export const openApiTransform: Transform = (input) => {
  const out = jsonSchemaTransform(input);
  const schema = out.schema as Json & { response?: Record<string, Json>; hide?: boolean; "x-responses"?: ResponseDocs; security?: unknown[] };
  if (!schema || schema.hide) return out;
  const extra = schema["x-responses"] ?? {};
  delete schema["x-responses"];
  const method = String((input.route as { method?: string | string[] }).method ?? "get");
  const verb = Array.isArray(method) ? method[0]! : method;
  const added = OPERATIONS[`${verb.toUpperCase()} ${out.url.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`] ?? {};
  if (!schema.operationId) schema.operationId = added.operationId ?? operationIdFor(verb, out.url);
  if (!schema.description && added.description) schema.description = added.description;
  // Routes with `security: []` (health, the receipt keys) are not counted by the tenant's rate limit.
  const limited = !(Array.isArray(schema.security) && schema.security.length === 0);
  for (const [status, res] of Object.entries(schema.response ?? {})) {
    const docs = extra[Number(status)] ?? {};
    // A described zod schema keeps its own description; a shared component ($ref) gets the status's.
    const own = typeof res.description === "string" && res.description !== "" ? res.description : undefined;
    const success = status.startsWith("2") && typeof schema.summary === "string" ? `${schema.summary}.` : undefined;
    res.description = docs.description ?? own ?? success ?? STATUS_DESCRIPTIONS[status] ?? `HTTP ${status}.`;
    const headers: Record<string, HeaderDoc> = {
      ...(limited && status !== "401" ? RATE_LIMIT_HEADERS : {}),
      ...(status === "429" || status === "503" ? RETRY_AFTER : {}),
      ...docs.headers,
    };
    // @fastify/swagger reads header schemas with the description beside them.
    if (Object.keys(headers).length > 0)
      res.headers = Object.fromEntries(Object.entries(headers).map(([k, h]) => [k, { ...(h.schema ?? { type: "string" }), description: h.description }]));
  }
  return out;
};

/**
 * Answers the HTTP server gives before any route is matched (client-errors.ts), so no route can list them:
 * the document's description does. Each closes the connection.
 */
export const BEFORE_ROUTING: Record<string, string> = {
  LS_ERR_MALFORMED_REQUEST: "400: the request is not valid HTTP/1.1 (a malformed request line or header, a NUL in a header, both Content-Length and Transfer-Encoding)",
  LS_ERR_HEADERS_TIMEOUT: "408: the headers did not arrive within HEADERS_TIMEOUT_MS",
  LS_ERR_HEADERS_TOO_LARGE: "431: the headers are larger than 16 KiB",
};

/** The document-wide parts: servers, the webhook events (OpenAPI 3.1 `webhooks`), and the answers given before routing. */
export const openApiTransformObject: TransformObject = (input) => {
  const doc = jsonSchemaTransformObject(input) as Json & { components?: { schemas?: Json }; paths?: Json; info: { title: string; version: string; description?: string } };
  const beforeRouting = Object.entries(BEFORE_ROUTING)
    .map(([code, what]) => `${what} (${code})`)
    .join("; ");
  const info = { ...doc.info, description: `${doc.info.description ?? ""} Any request may be refused before routing, with the Error body and Connection: close: ${beforeRouting}.`.trim() };
  const schemas = (doc.components?.schemas ?? {}) as Json;
  schemas.WebhookEvent = {
    type: "object",
    description:
      "The body of every webhook POST, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature headers). The same bytes on every retry and redelivery.",
    properties: {
      type: { type: "string", enum: [...WEBHOOK_EVENTS] },
      timestamp: { type: "string", format: "date-time", description: "When the payload was built." },
      data: {
        description: 'The goal as GET /goals/{id} returned it when the event happened, or, for a goal whose webhook says payload "thin", only its id, state and links.',
        oneOf: [{ $ref: "#/components/schemas/Goal" }, { $ref: "#/components/schemas/ThinGoal" }],
      },
    },
    required: ["type", "timestamp", "data"],
  };
  const link = { type: "string", description: "Absolute under PUBLIC_BASE_URL when it is set, else a path." };
  schemas.ThinGoal = {
    type: "object",
    description: 'A webhook\'s goal when the goal\'s webhook has payload "thin": fetch the rest from the links.',
    properties: {
      id: { type: "string", format: "uuid" },
      state: { type: "string", description: "The goal's state when the payload was built." },
      verified: { type: "boolean" },
      failure_reason: { type: ["string", "null"] },
      version: { type: "integer" },
      links: {
        type: "object",
        properties: { goal: link, deliveries: link, events: link, artifacts: link, receipt: { ...link, type: ["string", "null"] } },
        required: ["goal", "deliveries", "events", "artifacts", "receipt"],
      },
    },
    required: ["id", "state", "verified", "failure_reason", "version", "links"],
  };
  const webhookHeaders = {
    "webhook-id": { description: "msg_..., the same on every attempt of a delivery: deduplicate on it.", required: true, schema: { type: "string" } },
    "webhook-timestamp": { description: "Unix seconds of this attempt.", required: true, schema: { type: "string" } },
    "webhook-signature": { description: "v1,<base64 HMAC-SHA256 of \"<id>.<timestamp>.<body>\">, space-separated, one per valid secret.", required: true, schema: { type: "string" } },
  };
  const summaries: Record<string, string> = {
    "goal.verified": "The goal ended verified: every check passed",
    "goal.failed": "The goal ended failed (see failure_reason and failure_report)",
    "goal.cancelled": "The goal was cancelled",
    "goal.awaiting_approval": "The goal paused for a spending approval (POST /goals/{id}/approve or /reject)",
    "schedule.tick.verified": "A schedule's tick ended verified (held: the pinned program passed; or healed, or the first verified program): replaces goal.verified for a tick's goal",
    "schedule.tick.failed": "A schedule's tick ended failed (the pipeline broke): replaces goal.failed for a tick's goal",
  };
  const webhooks = Object.fromEntries(
    WEBHOOK_EVENTS.map((event) => [
      event,
      {
        post: {
          operationId: `webhook${event.split(/[._]/).map((w) => w[0]!.toUpperCase() + w.slice(1)).join("")}`,
          summary: summaries[event] ?? event,
          description: `Sent to the goal's webhook.url with type "${event}". Answer 2xx to acknowledge; anything else is retried.`,
          tags: ["webhooks"],
          security: [],
          parameters: Object.entries(webhookHeaders).map(([name, h]) => ({ in: "header", name, ...h })),
          requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/WebhookEvent" } } } },
          responses: { "2XX": { description: "Received: no further attempts." } },
        },
      },
    ]),
  );
  // An entry whose route moved or went would silently document nothing.
  const paths = (doc.paths ?? {}) as Record<string, Record<string, unknown>>;
  for (const key of Object.keys(OPERATIONS)) {
    const [verb, path] = key.split(" ") as [string, string];
    if (!paths[path]?.[verb.toLowerCase()]) throw new Error(`OpenAPI: OPERATIONS names ${key}, which is not a route`);
  }
  return shapeDocument({
    ...doc,
    info,
    servers: [{ url: "/", description: "The server this document was fetched from (set your client's base URL, e.g. http://127.0.0.1:3000)." }],
    webhooks,
  }) as ReturnType<TransformObject>;
};
