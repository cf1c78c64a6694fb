// Issue 13.3: a goal's artifacts, programs and checker files are downloadable through the public API, for
// verified and failed goals alike, tenant-scoped, with names validated (real Postgres, Redis and Docker,
// the scripted model).
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "@loopsmith/db";
import type { ArtifactList, GoalView } from "@loopsmith/schemas";
import { checkedGoal } from "../support/checked-goal";
import { startLoop, type Loop } from "../support/loop";

const sha = (b: Buffer | string) => createHash("sha256").update(b).digest("hex");

// Verified: clean.csv is the deliverable; a nested file and a binary one ride along.
const VERIFIED = `import os
out = os.environ["OUTPUT_DIR"]
open(os.path.join(out, "clean.csv"), "w").write("id,name\\n1,Ada\\n")
os.makedirs(os.path.join(out, "reports"), exist_ok=True)
open(os.path.join(out, "reports", "summary.json"), "w").write('{"rows": 1}')
open(os.path.join(out, "blob.bin"), "wb").write(bytes(range(256)))
`;
// Failed after two attempts, each writing its own out.csv.
const attemptProgram = (n: number) => `import os
open(os.path.join(os.environ["OUTPUT_DIR"], "out.csv"), "w").write("n\\n${n}\\n")
`;
const failing = () => {
  const g = checkedGoal({ checks: [{ id: "row_count", params: { artifact: "out.csv", equals: 5 } }], deliverable: "out.csv", program: attemptProgram(1) });
  const script = g.model.script as Record<string, unknown>;
  script.inspect = [{ verified: false, failing_checks: ["row_count"], diagnosis: "too few rows", fix_hint: "more rows" }];
  script.refine = [{ filename: "solution.py", language: "python", source: attemptProgram(2), notes: "" }];
  return { ...g, max_attempts: 2 };
};

let loop: Loop;
let verified: GoalView;
let failed: GoalView;

beforeAll(async () => {
  loop = await startLoop();
  const [v, f] = await Promise.all([
    loop.run(
      checkedGoal({
        checks: [
          { id: "row_count", params: { artifact: "clean.csv", equals: 1 } },
          { id: "csv_matches", params: { artifact: "clean.csv", expected_file: "expected.csv" } },
        ],
        checker_files: [{ name: "expected.csv", text: "id,name\n1,Ada\n" }],
        deliverable: "clean.csv",
        program: VERIFIED,
      }),
    ),
    loop.run(failing()),
  ]);
  verified = v;
  failed = f;
  expect(verified.state, verified.tape).toBe("verified");
  expect(failed.state, failed.tape).toBe("failed");
  expect(failed.attempts).toBe(2);
});
afterAll(async () => {
  await loop?.close();
});

describe("GET /goals/:id/artifacts", () => {
  it("lists each attempt's files with size, sha256, attempt and content type, the programs and the checker files", async () => {
    const res = await loop.request("GET", `/goals/${verified.id}/artifacts`);
    expect(res.status).toBe(200);
    const list = res.body as unknown as ArtifactList;
    expect(list.artifacts.map((a) => [a.name, a.attempt, a.content_type])).toEqual([
      ["blob.bin", 1, "application/octet-stream"],
      ["clean.csv", 1, "text/csv"],
      ["reports/summary.json", 1, "application/json"],
    ]);
    const clean = list.artifacts.find((a) => a.name === "clean.csv")!;
    expect(clean).toMatchObject({ size: 14, sha256: sha("id,name\n1,Ada\n"), url: `/goals/${verified.id}/artifacts/clean.csv?attempt=1` });
    expect(list.programs).toEqual([{ attempt: 1, size: Buffer.byteLength(VERIFIED), sha256: sha(VERIFIED), url: `/goals/${verified.id}/attempts/1/program` }]);
    expect(list.checker_files).toEqual([{ name: "expected.csv", size: 14, sha256: sha("id,name\n1,Ada\n"), url: `/goals/${verified.id}/checker-files/expected.csv` }]);
  });

  it("lists every attempt of a failed goal, or one with ?attempt=N", async () => {
    const all = (await loop.request("GET", `/goals/${failed.id}/artifacts`)).body as unknown as ArtifactList;
    expect(all.artifacts.map((a) => [a.name, a.attempt, a.sha256])).toEqual([
      ["out.csv", 1, sha("n\n1\n")],
      ["out.csv", 2, sha("n\n2\n")],
    ]);
    expect(all.programs.map((p) => p.attempt)).toEqual([1, 2]);
    const second = (await loop.request("GET", `/goals/${failed.id}/artifacts?attempt=2`)).body as unknown as ArtifactList;
    expect(second.artifacts.map((a) => a.attempt)).toEqual([2]);
    expect(second.programs.map((p) => p.attempt)).toEqual([2]);
    const bad = await loop.request("GET", `/goals/${failed.id}/artifacts?attempt=0`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: "LS_ERR_VALIDATION", details: [{ path: "querystring.attempt" }] });
  });
});

describe("GET /goals/:id/artifacts/:name", () => {
  it("sends the bytes with ETag = sha256, and 304 for If-None-Match", async () => {
    const res = await loop.app.inject({ method: "GET", url: `/goals/${verified.id}/artifacts/blob.bin`, headers: { authorization: `Bearer ${loop.tenant.api_key}` } });
    expect(res.statusCode).toBe(200);
    const bytes = res.rawPayload;
    expect(bytes.equals(Buffer.from(Array.from({ length: 256 }, (_, i) => i)))).toBe(true);
    expect(res.headers.etag).toBe(`"${sha(bytes)}"`);
    expect(res.headers["content-type"]).toBe("application/octet-stream");
    expect(res.headers["artifact-attempt"]).toBe("1");
    expect(res.headers["x-content-type-options"]).toBe("nosniff");
    for (const tag of [res.headers.etag as string, `W/${res.headers.etag}`, `"other", ${res.headers.etag}`, "*"]) {
      const again = await loop.request("GET", `/goals/${verified.id}/artifacts/blob.bin`, { headers: { "if-none-match": tag } });
      expect(again.status, tag).toBe(304);
      expect(again.body).toBe("");
    }
    const stale = await loop.request("GET", `/goals/${verified.id}/artifacts/blob.bin`, { headers: { "if-none-match": '"0000"' } });
    expect(stale.status).toBe(200);
  });

  it("serves a nested name URL-encoded or as plain segments", async () => {
    for (const path of ["reports%2Fsummary.json", "reports/summary.json"]) {
      const res = await loop.request("GET", `/goals/${verified.id}/artifacts/${path}`);
      expect(res.status, path).toBe(200);
      expect(res.body).toEqual({ rows: 1 });
      expect(res.headers["content-type"]).toMatch(/^application\/json/);
    }
  });

  it("serves the newest attempt's copy by default and another attempt's with ?attempt=N", async () => {
    const latest = await loop.request("GET", `/goals/${failed.id}/artifacts/out.csv`);
    expect([latest.status, latest.body, latest.headers["artifact-attempt"]]).toEqual([200, "n\n2\n", "2"]);
    const first = await loop.request("GET", `/goals/${failed.id}/artifacts/out.csv?attempt=1`);
    expect([first.status, first.body, first.headers["artifact-attempt"], first.headers.etag]).toEqual([200, "n\n1\n", "1", `"${sha("n\n1\n")}"`]);
    const none = await loop.request("GET", `/goals/${failed.id}/artifacts/out.csv?attempt=3`);
    expect(none.status).toBe(404);
    expect(none.body.error).toMatchObject({ code: "LS_ERR_ARTIFACT_NOT_FOUND", details: [{ path: "querystring.attempt" }] });
  });

  it("answers 404 LS_ERR_ARTIFACT_NOT_FOUND for an unknown name, and 400 with the field path for names that cannot be artifacts", async () => {
    const unknown = await loop.request("GET", `/goals/${verified.id}/artifacts/missing.csv`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: "LS_ERR_ARTIFACT_NOT_FOUND", details: [{ path: "params.name" }] });
    // (A bare ".." or "." segment never arrives: URL parsing, in clients and here, resolves it first.)
    const bad = ["x%2F..", "..%2Fclean.csv", "reports%2F..%2Fclean.csv", ".%2Fclean.csv", "%2Fetc%2Fpasswd", "a%2F%2Fb", "reports/", "a%00b", "a%5Cb", "x".repeat(1025)];
    for (const name of bad) {
      const res = await loop.request("GET", `/goals/${verified.id}/artifacts/${name}`);
      expect(res.status, name).toBe(400);
      expect(res.body.error, name).toMatchObject({ code: "LS_ERR_VALIDATION", details: [{ path: "params.name" }] });
    }
  });
});

describe("programs and checker files", () => {
  it("sends each attempt's program, and 404 for an attempt that never ran", async () => {
    const one = await loop.request("GET", `/goals/${failed.id}/attempts/1/program`);
    const two = await loop.request("GET", `/goals/${failed.id}/attempts/2/program`);
    expect([one.status, one.body, one.headers.etag]).toEqual([200, attemptProgram(1), `"${sha(attemptProgram(1))}"`]);
    expect([two.status, two.body]).toEqual([200, attemptProgram(2)]);
    expect(two.headers["content-type"]).toMatch(/^text\/x-python/);
    const three = await loop.request("GET", `/goals/${failed.id}/attempts/3/program`);
    expect(three.status).toBe(404);
    expect(three.body.error).toMatchObject({ code: "LS_ERR_ARTIFACT_NOT_FOUND", details: [{ path: "params.n" }] });
    expect((await loop.request("GET", `/goals/${failed.id}/attempts/x/program`)).status).toBe(400);
  });

  it("gives the owner its hidden checker files back", async () => {
    const res = await loop.request("GET", `/goals/${verified.id}/checker-files/expected.csv`);
    expect([res.status, res.body]).toEqual([200, "id,name\n1,Ada\n"]);
    expect((await loop.request("GET", `/goals/${verified.id}/checker-files/nope.csv`)).body.error).toMatchObject({ code: "LS_ERR_ARTIFACT_NOT_FOUND" });
  });
});

describe("tenancy", () => {
  it("answers 404 LS_ERR_NOT_FOUND to another tenant for every route, as for any goal that is not its own", async () => {
    const other = await createTenant(loop.prisma, { name: `${loop.prefix}-other`, secretBox: loop.secretBox });
    for (const url of [
      `/goals/${verified.id}/artifacts`,
      `/goals/${verified.id}/artifacts/clean.csv`,
      `/goals/${verified.id}/artifacts/reports/summary.json`,
      `/goals/${verified.id}/attempts/1/program`,
      `/goals/${verified.id}/checker-files/expected.csv`,
    ]) {
      const res = await loop.request("GET", url, { key: other.api_key });
      expect(res.status, url).toBe(404);
      expect((res.body.error as { code: string }).code, url).toBe("LS_ERR_NOT_FOUND");
    }
    expect((await loop.request("GET", `/goals/${verified.id}/artifacts`, { key: null })).status).toBe(401);
  });
});
