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
      "GET /.well-known/loopsmith-receipt-keys",
      "GET /admin/dead-letters",
      "GET /admin/tenants/{tenant_id}/api-keys",
      "GET /admin/tenants/{tenant_id}/webhook-secrets",
      "GET /checks",
      "GET /goals",
      "GET /goals/{id}",
      "GET /goals/{id}/deliveries",
      "GET /goals/{id}/events",
      "GET /goals/{id}/receipt",
      "GET /goals/{id}/script",
      "GET /healthz",
      "GET /readyz",
      "GET /reports/judges",
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
      "POST /webhook-secrets/rotate",
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
});
