// Issue 13.2: a usage example that must compile (npm run typecheck covers test/) and that shows what
// the generated types promise: defaulted request fields optional, enums for states and reasons, typed
// paths and operations. The requests go to a recording fetch: this checks the wrapper, not the server
// (tests/e2e/cli.test.ts drives the real API through this client).
import { describe, expect, expectTypeOf, it } from "vitest";
import { createClient, type CreateGoal, type Goal, type paths } from "../src/index";

function recordingFetch(answer: unknown, status = 200) {
  const seen: Request[] = [];
  const fetch = async (input: Request | string | URL, init?: RequestInit) => {
    seen.push(input instanceof Request ? input : new Request(input, init));
    return new Response(JSON.stringify(answer), { status, headers: { "content-type": "application/json" } });
  };
  return { seen, fetch: fetch as typeof globalThis.fetch };
}

describe("@loopsmith/client", () => {
  it("submits a goal with only the required fields, with the API key as a bearer token", async () => {
    const rec = recordingFetch({ id: "00000000-0000-4000-8000-000000000000", status_url: "/goals/x", state: "plan" }, 202);
    const client = createClient({ url: "http://api.example/", apiKey: "lsk_test", fetch: rec.fetch });
    // Only `objective` is required: checks, inputs, max_attempts, deliverable... have server defaults.
    const body: CreateGoal = { objective: "Count the rows of data.csv", max_attempts: 2 };
    const { data, error, response } = await client.POST("/goals", { body, headers: { "idempotency-key": "k-1" } });
    expect(error).toBeUndefined();
    expect(response.status).toBe(202);
    expectTypeOf(data!.state).toEqualTypeOf<"plan">();
    const req = rec.seen[0]!;
    expect(req.url).toBe("http://api.example/goals");
    expect(req.headers.get("authorization")).toBe("Bearer lsk_test");
    expect(req.headers.get("idempotency-key")).toBe("k-1");
    expect(await req.json()).toEqual(body);
  });

  it("types a goal's state and failure reason as the API's enums, and errors by their stable codes", async () => {
    const rec = recordingFetch({ error: { code: "LS_ERR_NOT_FOUND", message: "No goal x.", details: null } }, 404);
    const client = createClient({ url: "http://api.example", fetch: rec.fetch });
    const { data, error } = await client.GET("/goals/{id}", { params: { path: { id: "x" } } });
    expect(data).toBeUndefined();
    expect(error?.error.code).toBe("LS_ERR_NOT_FOUND");
    expect(rec.seen[0]!.headers.get("authorization")).toBeNull();
    expectTypeOf<Goal["state"]>().toEqualTypeOf<"plan" | "generate" | "execute" | "inspect" | "refine" | "awaiting_approval" | "errored" | "verified" | "failed" | "cancelled">();
    expectTypeOf<Goal["failure_reason"]>().toExtend<string | null>();
    expectTypeOf<"budget_attempts">().toExtend<NonNullable<Goal["failure_reason"]>>();
    // A made-up reason is not one.
    expectTypeOf<"no_such_reason">().not.toExtend<NonNullable<Goal["failure_reason"]>>();
  });

  it("encodes a nested artifact name as one path parameter", async () => {
    const rec = recordingFetch({});
    const client = createClient({ url: "http://api.example", fetch: rec.fetch });
    await client.GET("/goals/{id}/artifacts/{name}", { params: { path: { id: "g", name: "reports/a b.csv" }, query: { attempt: 2 } }, parseAs: "arrayBuffer" });
    expect(rec.seen[0]!.url).toBe("http://api.example/goals/g/artifacts/reports%2Fa%20b.csv?attempt=2");
    expectTypeOf<keyof paths>().toExtend<string>();
  });
});
