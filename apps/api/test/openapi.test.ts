import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { generateOpenApi } from "../src/openapi";

describe("openapi/openapi.json", () => {
  it("is exactly what the code generates (run `npm run openapi` after changing a route)", async () => {
    const committed = await readFile(new URL("../../../openapi/openapi.json", import.meta.url), "utf8");
    const generated = await generateOpenApi();
    expect(JSON.parse(committed)).toEqual(JSON.parse(generated));
    expect(committed).toBe(generated);
  });

  it("documents every route with its request and response schemas", async () => {
    const doc = JSON.parse(await generateOpenApi());
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(routes).toEqual([
      "DELETE /schedules/{id}",
      "GET /.well-known/loopsmith-receipt-keys",
      "GET /admin/dead-letters",
      "GET /admin/tenants/{tenant_id}/api-keys",
      "GET /admin/tenants/{tenant_id}/webhook-secrets",
      "GET /checks",
      "GET /goals",
      "GET /goals/{id}",
      "GET /goals/{id}/artifacts",
      "GET /goals/{id}/artifacts/{name}",
      "GET /goals/{id}/attempts/{n}/program",
      "GET /goals/{id}/checker-files/{name}",
      "GET /goals/{id}/deliveries",
      "GET /goals/{id}/events",
      "GET /goals/{id}/receipt",
      "GET /goals/{id}/script",
      "GET /healthz",
      "GET /readyz",
      "GET /reports/judges",
      "GET /schedules",
      "GET /schedules/{id}",
      "GET /schedules/{id}/goals",
      "POST /admin/dead-letters/{id}/retry",
      "POST /admin/tenants/{tenant_id}/api-keys",
      "POST /admin/tenants/{tenant_id}/api-keys/{key_id}/revoke",
      "POST /admin/tenants/{tenant_id}/api-keys/{key_id}/rotate",
      "POST /admin/tenants/{tenant_id}/webhook-secrets/{secret_id}/expire",
      "POST /deliveries/{id}/redeliver",
      "POST /goals",
      "POST /goals/{id}/approve",
      "POST /goals/{id}/cancel",
      "POST /goals/{id}/reject",
      "POST /schedules",
      "POST /schedules/{id}/pause",
      "POST /schedules/{id}/resume",
      "POST /webhook-secrets/rotate",
      "PUT /schedules/{id}/inputs",
    ]);
    expect(doc.paths["/readyz"].get.responses["503"]).toBeDefined();
    const post = doc.paths["/goals"].post;
    expect(post.requestBody.content["application/json"].schema).toBeDefined();
    expect(Object.keys(post.responses).sort()).toEqual(["202", "400", "401", "408", "409", "413", "415", "429", "503"]);
    expect(Object.keys(doc.paths["/goals/{id}"].get.responses).sort()).toEqual(["200", "401", "404", "429"]);
    // The shared zod schemas appear as named components.
    for (const name of ["CreateGoal", "Goal", "ModelSpec", "CheckSpec", "Error", "Receipt", "ReceiptKeys"]) expect(doc.components.schemas[name]).toBeDefined();
    // Issue 11.4: the receipt keys need no API key; a receipt of a goal not verified is a 409.
    expect(doc.paths["/.well-known/loopsmith-receipt-keys"].get.security).toEqual([]);
    expect(Object.keys(doc.paths["/goals/{id}/receipt"].get.responses).sort()).toEqual(["200", "401", "404", "409", "429"]);
  });

  it("documents the event stream as text/event-stream, its errors as JSON, and how to resume", async () => {
    const doc = JSON.parse(await generateOpenApi());
    const op = doc.paths["/goals/{id}/events"].get;
    expect(op.summary).toMatch(/Server-Sent Events/);
    expect(op.description).toMatch(/Last-Event-ID/);
    expect(Object.keys(op.responses["200"].content)).toEqual(["text/event-stream"]);
    expect(op.responses["200"].content["text/event-stream"].schema.type).toBe("string");
    expect(op.responses["404"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    const params = (op.parameters as { in: string; name: string }[]).map((p) => `${p.in}:${p.name}`).sort();
    expect(params).toEqual(["header:last-event-id", "path:id", "query:last_event_id"]);
  });

  // Issue 13.2: what a generated client needs from the document.
  it("names every operation, describes every response and documents the headers the API sends", async () => {
    const doc = JSON.parse(await generateOpenApi());
    const ops = Object.entries(doc.paths as Record<string, Record<string, { operationId?: string; responses: Record<string, { description: string; headers?: Record<string, unknown> }> }>>).flatMap(
      ([path, methods]) => Object.entries(methods).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
    );
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.filter((id) => !id), "every route has an operationId").toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ops.find((o) => o.route === "POST /goals")?.op.operationId).toBe("createGoal");
    expect(ops.find((o) => o.route === "GET /goals/{id}/artifacts/{name}")?.op.operationId).toBe("getArtifact");
    const vague = ops.flatMap(({ route, op }) => Object.entries(op.responses).filter(([, r]) => !r.description || r.description === "Default Response").map(([s]) => `${route} ${s}`));
    expect(vague).toEqual([]);
    const accepted = doc.paths["/goals"].post.responses["202"].headers;
    expect(Object.keys(accepted)).toEqual(expect.arrayContaining(["location", "idempotent-replayed", "x-ratelimit-limit", "x-ratelimit-remaining"]));
    expect(Object.keys(doc.paths["/goals"].post.responses["429"].headers)).toContain("retry-after");
    expect(Object.keys(doc.paths["/goals"].post.responses["503"].headers)).toContain("retry-after");
    const download = doc.paths["/goals/{id}/artifacts/{name}"].get.responses;
    expect(Object.keys(download["200"].headers)).toEqual(expect.arrayContaining(["etag", "artifact-attempt", "content-disposition"]));
    expect(download["304"].content).toBeUndefined();
    expect(doc.servers.length).toBeGreaterThan(0);
  });

  it("gives states and failure reasons as enums, timestamps as date-time, and request defaults as optional", async () => {
    const { STATES, FAILURE_REASONS } = await import("@loopsmith/machine");
    const s = JSON.parse(await generateOpenApi()).components.schemas;
    expect(s.Goal.properties.state.enum).toEqual([...STATES]);
    const reason = s.Goal.properties.failure_reason;
    expect(JSON.stringify(reason)).toContain(JSON.stringify([...FAILURE_REASONS]));
    expect(JSON.stringify(s.Goal.properties.transitions)).toContain(JSON.stringify([...STATES]));
    expect(s.FailureReport.properties.reason.enum).toEqual([...FAILURE_REASONS]);
    for (const field of ["created_at", "updated_at"]) expect(s.Goal.properties[field].format).toBe("date-time");
    expect(s.WebhookDelivery.properties.created_at.format).toBe("date-time");
    // The request body is the input variant: only objective is required; the rest has server defaults,
    // given in words (issue 28: a `default` keyword makes openapi-typescript's defaults require the field).
    expect(s.CreateGoalInput.required).toEqual(["objective"]);
    expect(s.CreateGoalInput.properties.max_attempts.default).toBeUndefined();
    expect(s.CreateGoalInput.properties.max_attempts.description).toMatch(/Default: 5\.$/);
    // Responses keep `default` and list the field as required: the server always sends it.
    expect(s.CreateGoal.properties.max_attempts.default).toBe(5);
    expect(s.CreateGoal.required).toContain("max_attempts");
  });

  // Issue 28 (3): what the linters' default rulesets ask for, checked here too so a failure names the route.
  it("tags every operation with a described tag, describes every operation and publishes no unused component", async () => {
    const doc = JSON.parse(await generateOpenApi());
    const tags = new Set((doc.tags as { name: string; description: string }[]).filter((t) => t.description).map((t) => t.name));
    const ops = [...Object.entries(doc.paths), ...Object.entries(doc.webhooks)].flatMap(([path, methods]) =>
      Object.entries(methods as Record<string, { tags?: string[]; description?: string; summary?: string; operationId: string }>).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(ops.filter(({ op }) => !op.tags?.length || op.tags.some((t) => !tags.has(t))).map((o) => o.route)).toEqual([]);
    expect(ops.filter(({ op }) => !op.description || !op.summary).map((o) => o.route)).toEqual([]);
    expect(ops.filter(({ op }) => /By[A-Z]/.test(op.operationId)).map((o) => `${o.route} ${o.op.operationId}`), "a readable operationId (OPERATIONS in openapi-docs.ts)").toEqual([]);
    expect(ops.find((o) => o.route === "POST /admin/tenants/{tenant_id}/api-keys/{key_id}/rotate")?.op.operationId).toBe("rotateApiKey");
    const text = JSON.stringify({ paths: doc.paths, webhooks: doc.webhooks, schemas: doc.components.schemas });
    const unused = Object.keys(doc.components.schemas).filter((name) => !text.includes(`"#/components/schemas/${name}"`));
    expect(unused).toEqual([]);
    // Response-only schemas have no request variant, and request-only ones no response variant.
    for (const name of ["GoalInput", "ErrorInput", "ReceiptInput", "NewApiKey", "RotateApiKey"]) expect(doc.components.schemas[name]).toBeUndefined();
  });

  it("describes the webhook events under `webhooks`", async () => {
    const { WEBHOOK_EVENTS } = await import("@loopsmith/schemas");
    const doc = JSON.parse(await generateOpenApi());
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENTS].sort());
    const post = doc.webhooks["goal.verified"].post;
    expect(post.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/WebhookEvent" });
    expect(post.parameters.map((p: { name: string }) => p.name)).toEqual(["webhook-id", "webhook-timestamp", "webhook-signature"]);
    expect(doc.components.schemas.WebhookEvent.properties.type.enum).toEqual([...WEBHOOK_EVENTS]);
  });
});
