// POST /goals and GET /goals/:id at the edges: what bad input gets back. No runner is needed: every
// request here is refused before a goal exists, or reads a goal as stored.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoGoal } from "../../scripts/demo/scenario";
import { startLoop, type Loop } from "../support/loop";

let loop: Loop;
const auth = () => ({ authorization: `Bearer ${loop.tenant.api_key}` });
let noScripted: Loop;
beforeAll(async () => {
  loop = await startLoop({ runner: false });
  noScripted = await startLoop({ runner: false, env: { LOOPSMITH_SCRIPTED_MODEL: "false" } });
});
afterAll(async () => {
  await loop?.close();
  await noScripted?.close();
});

type ErrorBody = { error: { code: string; message: string; details: { path: string; message: string }[] } };
const paths = (b: unknown) => (b as ErrorBody).error.details.map((d) => d.path);

describe("POST /goals", () => {
  it("accepts a goal: 202 with its id and status URL, stored in plan with tape row 0, nothing lost", async () => {
    const before = await loop.queue.count();
    const res = await loop.post(demoGoal());
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ state: "plan", status_url: `/goals/${res.body.id as string}` });
    const view = await loop.get(res.body.id as string);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({ state: "plan", tape: "plan", attempts: 0, verified: false, report: null });
    expect(await loop.queue.count()).toBe(before + 1);
    const stored = await loop.prisma.goalInput.findMany({ where: { goalId: res.body.id as string } });
    expect(stored.map((f) => f.name)).toEqual(["sales.csv"]);
    expect(Buffer.from(stored[0]!.content).toString("utf8")).toContain("$1,299.00");
  });

  it("takes binary inputs as base64", async () => {
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const res = await loop.post(demoGoal({ inputs: [{ name: "blob.bin", content_base64: bytes.toString("base64") }] }));
    expect(res.status).toBe(202);
    const stored = await loop.prisma.goalInput.findFirstOrThrow({ where: { goalId: res.body.id as string } });
    expect(Buffer.from(stored.content).equals(bytes)).toBe(true);
  });

  it.each([
    ["a missing objective", { objective: undefined }, "body.objective"],
    ["a blank objective", { objective: "   " }, "body.objective"],
    ["max_attempts of the wrong type", { max_attempts: "five" }, "body.max_attempts"],
    ["max_attempts out of range", { max_attempts: 0 }, "body.max_attempts"],
    ["an unknown field", { colour: "red" }, "body"],
    ["an input name with a path", { inputs: [{ name: "../etc/passwd", text: "x" }] }, "body.inputs.0.name"],
    ["invalid base64", { inputs: [{ name: "a.csv", content_base64: "!!not base64!!" }] }, "body.inputs.0.content_base64"],
    ["an input with both text and base64", { inputs: [{ name: "a.csv", text: "x", content_base64: "eA==" }] }, "body.inputs.0"],
    ["duplicate input names", { inputs: [{ name: "a.csv", text: "x" }, { name: "a.csv", text: "y" }] }, "body.inputs.1.name"],
    ["an unknown client check", { checks: [{ id: "is_correct" }] }, "body.checks.0.id"],
    ["bad check params", { checks: [{ id: "reconciles_total", params: { values_path: "by_region" } }] }, "body.checks.0.params.total_path"],
    ["an unknown provider", { model: { provider: "gpt-magic" } }, "body.model.provider"],
    ["a scripted model without a script", { model: { provider: "scripted" } }, "body.model.script"],
  ])("refuses %s with 400 and the field path", async (_label, patch, path) => {
    const res = await loop.post(demoGoal(patch));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect((res.body as ErrorBody).error.code).toBe("LS_ERR_VALIDATION");
    expect(paths(res.body).some((p) => p.startsWith(path)), JSON.stringify(res.body)).toBe(true);
  });

  it("refuses a provider this server has not enabled, saying how to enable it", async () => {
    const res = await noScripted.post(demoGoal());
    expect(res.status).toBe(400);
    expect((res.body as ErrorBody).error.code).toBe("LS_ERR_MODEL_DISABLED");
    expect((res.body as ErrorBody).error.message).toMatch(/LOOPSMITH_SCRIPTED_MODEL/);
    expect(paths(res.body)).toEqual(["body.model.provider"]);
    const noModel = await noScripted.post(demoGoal({ model: undefined }));
    expect(noModel.status).toBe(400);
    expect((noModel.body as ErrorBody).error.code).toBe("LS_ERR_MODEL_DISABLED");
  });

  it("answers malformed JSON and non-JSON bodies with 4xx and the error shape", async () => {
    const bad = await loop.app.inject({ method: "POST", url: "/goals", headers: { "content-type": "application/json", ...auth() }, payload: "{nope" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { code: "LS_ERR_VALIDATION" } });
    const text = await loop.app.inject({ method: "POST", url: "/goals", headers: { "content-type": "text/plain", ...auth() }, payload: "hello" });
    expect(text.statusCode).toBe(400);
    expect(text.json()).toMatchObject({ error: { code: "LS_ERR_VALIDATION" } });
    const xml = await loop.app.inject({ method: "POST", url: "/goals", headers: { "content-type": "application/xml", ...auth() }, payload: "<a/>" });
    expect(xml.statusCode).toBe(415);
    expect(xml.json()).toMatchObject({ error: { code: "LS_ERR_UNSUPPORTED_MEDIA_TYPE" } });
  });
});

describe("GET /goals/:id", () => {
  it("is 404 for an unknown id and for something that is not an id", async () => {
    for (const id of [randomUUID(), "not-a-uuid"]) {
      const res = await loop.app.inject({ method: "GET", url: `/goals/${id}`, headers: auth() });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: { code: "LS_ERR_NOT_FOUND" } });
    }
  });
});
