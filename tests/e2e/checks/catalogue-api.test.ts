// The check library over the API: GET /checks is the catalogue the planner's prompt is built from, and
// POST /goals refuses bad definitions of done with a 400, a stable code and the field's path.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkedGoal } from "../../support/checked-goal";
import { startLoop, type Loop } from "../../support/loop";

let loop: Loop;
beforeAll(async () => {
  loop = await startLoop({ runner: false });
});
afterAll(async () => {
  await loop?.close();
});

type Catalogue = { checks: { id: string; description: string; params: Record<string, unknown>; example: Record<string, unknown>; publicParams: string[]; runsCode: boolean }[] };

describe("GET /checks", () => {
  it("lists every check with a description, its params as JSON Schema and an example the API accepts", async () => {
    const res = await loop.request("GET", "/checks");
    expect(res.status).toBe(200);
    const { checks } = res.body as unknown as Catalogue;
    const ids = checks.map((c) => c.id);
    for (const id of ["csv_matches", "csv_schema", "row_count", "json_matches", "json_assert", "text_matches", "cases", "test_suite", "json_schema", "exits_clean"]) expect(ids).toContain(id);
    expect(checks.filter((c) => c.runsCode).map((c) => c.id).sort()).toEqual(["cases", "command", "test_suite"]);
    for (const c of checks) {
      expect(c.description.length, c.id).toBeGreaterThan(20);
      expect(c.params, c.id).toMatchObject({ type: "object" });
      // Each example is a goal the API accepts (with the checker files it names).
      const names = JSON.stringify(c.example).match(/"[\w.-]+\.(csv|json|txt|py)"/g)?.map((n) => JSON.parse(n) as string) ?? [];
      const body = checkedGoal({ checks: [{ id: c.id, params: c.example }], checker_files: names.map((name) => ({ name, text: "x" })), deliverable: c.runsCode ? null : undefined, program: "pass" });
      const posted = await loop.post(body);
      expect(posted.status, `${c.id}: ${JSON.stringify(posted.body)}`).toBe(202);
    }
  });

  it("needs an API key", async () => {
    expect((await loop.request("GET", "/checks", { key: null })).status).toBe(401);
  });
});

describe("POST /goals refuses a bad definition of done", () => {
  const refused = async (body: unknown, path: string, message: RegExp) => {
    const res = await loop.post(body);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    const error = res.body.error as { code: string; details: { path: string; message: string }[] };
    expect(error.code).toBe("LS_ERR_VALIDATION");
    const detail = error.details.find((d) => d.path === path);
    expect(detail, JSON.stringify(error.details)).toBeDefined();
    expect(detail!.message).toMatch(message);
  };
  const base = { checks: [] as unknown[], program: "pass" };

  it("a misspelled param, however deep", async () => {
    await refused(
      checkedGoal({ ...base, checks: [{ id: "csv_schema", params: { artifact: "a.csv", rules: { revenue: { type: "number", betwen: [0, 1] } } } }] }),
      "body.checks.0.params.rules.revenue",
      /betwen/,
    );
  });

  it("a misspelled field of the check itself", async () => {
    await refused(checkedGoal({ ...base, checks: [{ id: "exits_clean", hiden: true }] }), "body.checks.0", /hiden/);
  });

  it("a checker file the goal does not carry", async () => {
    await refused(checkedGoal({ ...base, checks: [{ id: "csv_matches", params: { artifact: "a.csv", expected_file: "expected.csv" } }] }), "body.checks.0.params", /expected\.csv/);
  });

  it("a program deliverable without a check that runs the program", async () => {
    await refused(checkedGoal({ ...base, deliverable: null, checks: [{ id: "exits_clean" }] }), "body.deliverable", /cases, test_suite/);
  });

  it("a hidden judgement check (the inspector model reads it)", async () => {
    await refused(checkedGoal({ ...base, checks: [{ id: "looks_right", kind: "judgement", hidden: true }] }), "body.checks.0.hidden", /judgement/);
  });

  it("a deliverable outside the output directory", async () => {
    await refused(checkedGoal({ ...base, deliverable: "../etc/passwd" }), "body.deliverable", /relative path/);
  });

  it("two checker files with one name", async () => {
    await refused(checkedGoal({ ...base, checker_files: [{ name: "a.csv", text: "x" }, { name: "a.csv", text: "y" }] }), "body.checker_files.1.name", /duplicate/);
  });

  it("an integer JSON would round (9007199254740993), with its path", async () => {
    const body = JSON.stringify(checkedGoal({ ...base, checks: [{ id: "json_assert", params: { pointer: "/n", op: "eq", value: 1 } }] })).replace('"value":1', '"value":9007199254740993');
    const res = await loop.app.inject({ method: "POST", url: "/goals", payload: body, headers: { "content-type": "application/json", authorization: `Bearer ${loop.tenant.api_key}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: "LS_ERR_VALIDATION", details: [{ path: "body.checks.0.params.value", message: expect.stringMatching(/9007199254740993 \(16 digits\) is beyond 2\^53/) }] } });
  });

  it("a JSON Schema larger than the cap", async () => {
    const schema = { type: "object", properties: Object.fromEntries(Array.from({ length: 3000 }, (_, i) => [`k${i}`, { const: i }])) };
    await refused(checkedGoal({ ...base, checks: [{ id: "json_schema", params: { schema } }] }), "body.checks.0.params.schema", /too large/);
  });

  it("stores the visibility it resolved: a check reading a checker file is hidden, shown so before PLAN", async () => {
    const res = await loop.post(
      checkedGoal({ ...base, checker_files: [{ name: "e.csv", text: "a\n1\n" }], checks: [{ id: "csv_matches", params: { artifact: "a.csv", expected_file: "e.csv" } }, { id: "exits_clean" }] }),
    );
    expect(res.status).toBe(202);
    const { body } = await loop.get(res.body.id as string);
    expect(body.checks.map((c) => [c.id, c.hidden, c.reveal])).toEqual([
      ["csv_matches", true, "input"],
      ["exits_clean", false, "input"],
    ]);
    expect(body.checker_files).toEqual([{ name: "e.csv", size: 4, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }]);
  });
});
