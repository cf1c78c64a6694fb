// The schema package's helpers and refinements at their edges, without services (issue 18): artifact
// names and content types, workspace paths and locked paths, the workspace archive's size, self-test
// fixtures, generated programs, the routes' params and queries, and the runners' Redis keys. Each bound is
// asserted on both sides: the largest value accepted, one more refused with its field path.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  budgetConfigSchema,
  isArtifactPath,
  LANGUAGE_EXTENSIONS,
  MAX_CHECKER_FILES_TOTAL_BYTES,
  MAX_INPUTS_TOTAL_BYTES,
  MAX_WORKSPACE_BYTES,
  MAX_WORKSPACE_ENTRIES,
  MODEL_CALL_RESERVED,
  POSSIBLY_BILLED,
  webhookSpec,
  WORKSPACE_PATCH,
  artifactListQuery,
  artifactNameProblem,
  artifactParams,
  artifactQuery,
  attemptParams,
  checkerFileParams,
  contentTypeOf,
  deliveryIdParams,
  generatedCode,
  goalIdParams,
  judgeReportQuery,
  MAX_ARTIFACT_NAME_BYTES,
  MAX_WORKSPACE_ARCHIVE_BYTES,
  runnerHeartbeatKey,
  runnerHeartbeatPattern,
  runnerReadyKey,
  runnerReadyPattern,
  selfTestFixture,
  workspacePath,
  workspacePathProblem,
  workspaceSpec,
} from "../src/index";

/** The paths of the issues a value raises, or [] when it is accepted. */
const refused = (schema: z.ZodType, value: unknown) => {
  const r = schema.safeParse(value);
  return r.success ? [] : r.error.issues.map((i) => i.path.join(".") || "(root)");
};

describe("artifact names", () => {
  it("a relative path of plain segments, at most 1024 bytes of UTF-8", () => {
    expect(MAX_ARTIFACT_NAME_BYTES).toBe(1024);
    for (const ok of ["clean.csv", "reports/summary.json", "a b/c", ".hidden", "a..b", "x".repeat(1024), "é".repeat(512)]) expect(artifactNameProblem(ok), ok).toBeNull();
    expect(artifactNameProblem("")).toBe("empty: give an artifact name");
    // Bytes, not characters: 513 two-byte characters are 1026 bytes.
    expect(artifactNameProblem("x".repeat(1025))).toBe("longer than 1024 bytes");
    expect(artifactNameProblem("é".repeat(513))).toBe("longer than 1024 bytes");
    for (const c of ["\x00", "\x1f", "\x7f", "\n"]) expect(artifactNameProblem(`a${c}b`), JSON.stringify(c)).toBe("contains a NUL or another control character");
    expect(artifactNameProblem("a\\b")).toBe("contains a backslash: artifact names separate directories with '/'");
    expect(artifactNameProblem("/etc/passwd")).toBe("an absolute path: artifact names are relative to the output directory");
    for (const n of ["a//b", "a/", "/"]) expect(artifactNameProblem(n), n).not.toBeNull();
    for (const n of ["a//b", "a/"]) expect(artifactNameProblem(n), n).toBe("an empty path segment ('//' or a trailing '/')");
    for (const n of [".", "..", "a/./b", "a/../b", "../x"]) expect(artifactNameProblem(n), n).toBe("a '.' or '..' segment: artifact names never leave the output directory");
  });

  it("content types: by the last extension of the base name, case-insensitive, never a page", () => {
    const table: Record<string, string> = {
      csv: "text/csv",
      tsv: "text/tab-separated-values",
      json: "application/json",
      jsonl: "application/x-ndjson",
      ndjson: "application/x-ndjson",
      txt: "text/plain",
      log: "text/plain",
      md: "text/markdown",
      py: "text/x-python",
      xml: "application/xml",
      yaml: "application/yaml",
      yml: "application/yaml",
      parquet: "application/vnd.apache.parquet",
      png: "image/png",
      jpg: "image/jpeg",
      jpeg: "image/jpeg",
      gif: "image/gif",
      pdf: "application/pdf",
      zip: "application/zip",
      gz: "application/gzip",
      xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    };
    for (const [ext, type] of Object.entries(table)) expect(contentTypeOf(`out/a.${ext}`), ext).toBe(type);
    expect(contentTypeOf("A.CSV")).toBe("text/csv");
    expect(contentTypeOf("data.tar.gz")).toBe("application/gzip");
    for (const n of ["page.html", "image.svg", "noext", ".csv", "dir.csv/file", "x.csv/.json", "a.", "constructor.toString"]) expect(contentTypeOf(n), n).toBe("application/octet-stream");
  });
});

describe("workspace paths", () => {
  it("relative, 1 to 255 characters, plain segments, not under inputs/ or out/", () => {
    for (const ok of ["src/sum.ts", "a", "x".repeat(128), `${"d/".repeat(63)}abc`, "a@b+c~d._-e/f", "output/x", "src/inputs", "src/out/x", "..a", "a.."]) expect(workspacePathProblem(ok), ok).toBeNull();
    expect(workspacePathProblem(`${"d/".repeat(126)}abc`)).toBeNull();
    expect(workspacePathProblem("")).toBe("must be 1-255 characters");
    expect(workspacePathProblem(`${"d/".repeat(126)}abcd`)).toBe("must be 1-255 characters");
    expect(workspacePathProblem("/etc/passwd")).toBe("is absolute");
    for (const p of ["..", "a/../b", "a/.."]) expect(workspacePathProblem(p), p).toBe("leaves the workspace (..)");
    for (const p of [".", "a/./b", "a//b", "a/", "a b", "x".repeat(129), "a\\b", "é", "éa", "aé"]) expect(workspacePathProblem(p), p).toBe("must be '/'-separated plain names (letters, digits, . _ - @ + ~), no empty or . segments");
    expect(workspacePathProblem("inputs/x.csv")).toBe("is under inputs/, which the sandbox keeps for itself");
    expect(workspacePathProblem("out/x")).toBe("is under out/, which the sandbox keeps for itself");
    expect(workspacePathProblem("inputs")).toBe("is under inputs/, which the sandbox keeps for itself");
    expect(refused(workspacePath, "src/a.ts")).toEqual([]);
    expect(refused(workspacePath, "../a.ts")).toEqual(["(root)"]);
    expect(workspacePath.safeParse("../a.ts").error?.issues[0]?.message).toBe("a path inside the workspace: this one leaves the workspace (..)");
  });

  it("a workspace: a base64 archive, and at most 200 locked paths (directories end in /)", () => {
    // The archive's bound (11,184,812 base64 characters, 8 MiB decoded) is asserted through the published
    // contract (contract.test.ts): a base64 check over 11 MB here would cost a second per mutant run.
    expect(MAX_WORKSPACE_ARCHIVE_BYTES).toBe(8 * 1024 * 1024);
    // Its message, cheaply: a string one past the bound that is not base64 fails at its first character.
    const tooLong = workspaceSpec.safeParse({ archive_base64: "!".repeat(Math.ceil(MAX_WORKSPACE_ARCHIVE_BYTES / 3) * 4 + 1) });
    expect(tooLong.error?.issues.find((i) => i.code === "too_big")?.message).toBe("at most 8388608 bytes before base64");
    expect(refused(workspaceSpec, { archive_base64: "not base64!" })).toEqual(["archive_base64"]);
    expect(workspaceSpec.parse({ archive_base64: "" })).toEqual({ archive_base64: "", locked: [] });
    expect(refused(workspaceSpec, { archive_base64: "", locked: ["test/", "tsconfig.json", "a/b/"] })).toEqual([]);
    for (const bad of ["/test/", "../x", "inputs/", "out", "a//", "", "/"]) expect(refused(workspaceSpec, { archive_base64: "", locked: ["ok", bad] }), bad).toEqual(["locked.1"]);
    expect(workspaceSpec.safeParse({ archive_base64: "", locked: ["/test/"] }).error?.issues[0]?.message).toBe('a path inside the workspace (a directory may end in "/"): this one is absolute');
    expect(refused(workspaceSpec, { archive_base64: "", locked: Array.from({ length: 200 }, (_, i) => `f${i}`) })).toEqual([]);
    expect(refused(workspaceSpec, { archive_base64: "", locked: Array.from({ length: 201 }, (_, i) => `f${i}`) })).toEqual(["locked"]);
    expect(refused(workspaceSpec, { archive_base64: "", extra: 1 })).toEqual(["(root)"]);
  });
});

describe("self-test fixtures and generated programs", () => {
  it("a fixture: a name of 1 to 100, a program up to 200,000 characters, up to 20 artifacts, stdout up to 1 MiB", () => {
    expect(refused(selfTestFixture, { name: "n".repeat(100), stdout: "" })).toEqual([]);
    expect(refused(selfTestFixture, { name: "n".repeat(101), stdout: "" })).toEqual(["name"]);
    expect(refused(selfTestFixture, { name: "", stdout: "" })).toEqual(["name"]);
    expect(refused(selfTestFixture, { name: "p", program: "p".repeat(200_000) })).toEqual([]);
    expect(refused(selfTestFixture, { name: "p", program: "p".repeat(200_001) })).toEqual(["program"]);
    const artifacts = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `a${i}.txt`, text: "" }));
    expect(refused(selfTestFixture, { name: "a", artifacts: artifacts(20) })).toEqual([]);
    expect(refused(selfTestFixture, { name: "a", artifacts: artifacts(21) })).toEqual(["artifacts"]);
    expect(refused(selfTestFixture, { name: "a", artifacts: [{ name: "a.bin", content_base64: "YQ==" }] })).toEqual([]);
    expect(refused(selfTestFixture, { name: "a", artifacts: [{ name: "a.bin", content_base64: "!" }] })).toEqual(["artifacts.0.content_base64"]);
    expect(refused(selfTestFixture, { name: "a", artifacts: [{ name: "a.bin", text: "", mode: 1 }] })).toEqual(["artifacts.0"]);
    expect(refused(selfTestFixture, { name: "s", stdout: "s".repeat(1024 * 1024) })).toEqual([]);
    expect(refused(selfTestFixture, { name: "s", stdout: "s".repeat(1024 * 1024 + 1) })).toEqual(["stdout"]);
  });

  it("a generated program: its file name, language, size, and the workspace files it changes", () => {
    const code = { filename: "analysis.py", language: "python", source: "print(1)", notes: "" };
    expect(generatedCode.parse(code)).toEqual({ ...code, files: [] });
    for (const f of ["analysis.py", "src/sum.ts", "a.js", "a.mjs", "a.cjs", "a.mts", "a.cts", "_x/y.ts", `${"d/".repeat(7)}a.py`, `${"a".repeat(64)}.py`, "a.b.py", "inputs.py", "output/a.py"]) {
      expect(refused(generatedCode, { ...code, filename: f }), f).toEqual([]);
    }
    for (const f of ["a.sh", "../a.py", "/a.py", "inputs/a.py", "out/a.py", ".a.py", "-a.py", `${"d/".repeat(8)}a.py`, `${"a".repeat(65)}.py`, "a.pyc", "a py.py", "a/.b/c.py", "a//b.py", ".py", "a.PY"]) {
      expect(refused(generatedCode, { ...code, filename: f }), f).toEqual(["filename"]);
    }
    expect(generatedCode.safeParse({ ...code, filename: "a.sh" }).error?.issues[0]?.message).toBe("a file name (a relative path in a workspace, not under inputs/ or out/) ending in .py, .js, .mjs, .cjs, .ts, .mts or .cts");
    expect(refused(generatedCode, { ...code, language: "ruby" })).toEqual(["language"]);
    expect(refused(generatedCode, { ...code, source: "s".repeat(200_000) })).toEqual([]);
    expect(refused(generatedCode, { ...code, source: "s".repeat(200_001) })).toEqual(["source"]);
    expect(refused(generatedCode, { ...code, source: "" })).toEqual(["source"]);
    const files = (n: number, content = "") => Array.from({ length: n }, (_, i) => ({ path: `src/f${i}.ts`, content }));
    expect(refused(generatedCode, { ...code, files: files(100) })).toEqual([]);
    expect(refused(generatedCode, { ...code, files: files(101) })).toEqual(["files"]);
    expect(refused(generatedCode, { ...code, files: files(1, "c".repeat(1_000_000)) })).toEqual([]);
    expect(refused(generatedCode, { ...code, files: files(1, "c".repeat(1_000_001)) })).toEqual(["files.0.content"]);
    expect(refused(generatedCode, { ...code, files: [{ path: "inputs/x.csv", content: "" }] })).toEqual(["files.0.path"]);
  });
});

describe("route params and queries", () => {
  it("attempt numbers: whole numbers 1 to 1000, from the query string", () => {
    for (const q of [artifactListQuery, artifactQuery]) {
      expect(q.parse({ attempt: "1" })).toEqual({ attempt: 1 });
      expect(q.parse({ attempt: "1000" })).toEqual({ attempt: 1000 });
      expect(q.parse({})).toEqual({});
      for (const bad of ["0", "1001", "1.5", "x"]) expect(refused(q, { attempt: bad }), bad).toEqual(["attempt"]);
      expect(refused(q, { attempt: "1", name: "x" })).toEqual(["(root)"]);
    }
    expect(attemptParams.parse({ id: "g", n: "3" })).toEqual({ id: "g", n: 3 });
    expect(refused(attemptParams, { id: "g", n: "0" })).toEqual(["n"]);
  });

  it("path params: the route's names, as strings", () => {
    expect(goalIdParams.parse({ id: "g1" })).toEqual({ id: "g1" });
    expect(deliveryIdParams.parse({ id: "d1" })).toEqual({ id: "d1" });
    expect(artifactParams.parse({ id: "g1", name: "reports/a.csv" })).toEqual({ id: "g1", name: "reports/a.csv" });
    expect(checkerFileParams.parse({ id: "g1", name: "expected.csv" })).toEqual({ id: "g1", name: "expected.csv" });
    for (const s of [goalIdParams, deliveryIdParams]) expect(refused(s, {})).toEqual(["id"]);
    for (const s of [artifactParams, checkerFileParams]) expect(refused(s, { id: "g1" })).toEqual(["name"]);
  });

  it("the judge report's window: ISO 8601 instants with an offset, nothing else", () => {
    expect(judgeReportQuery.parse({})).toEqual({});
    expect(refused(judgeReportQuery, { since: "2026-01-01T00:00:00+02:00", until: "2026-02-01T00:00:00-05:00" })).toEqual([]);
    expect(refused(judgeReportQuery, { since: "2026-01-01T00:00:00Z", until: "2026-02-01T00:00:00+02:00" })).toEqual([]);
    expect(refused(judgeReportQuery, { since: "yesterday" })).toEqual(["since"]);
    expect(refused(judgeReportQuery, { until: "2026-01-01" })).toEqual(["until"]);
    expect(refused(judgeReportQuery, { tenant: "t" })).toEqual(["(root)"]);
  });
});

describe("limits and names other packages enforce or match", () => {
  it("the totals the API enforces, as the README documents them", () => {
    expect(MAX_INPUTS_TOTAL_BYTES).toBe(10_485_760);
    expect(MAX_CHECKER_FILES_TOTAL_BYTES).toBe(10_485_760);
    expect(MAX_WORKSPACE_BYTES).toBe(16_777_216);
    expect(MAX_WORKSPACE_ENTRIES).toBe(5000);
    expect(WORKSPACE_PATCH).toBe("workspace.patch");
    expect(LANGUAGE_EXTENSIONS).toEqual({ python: [".py"], javascript: [".js", ".mjs", ".cjs"], typescript: [".ts", ".mts", ".cts"] });
    // The runner writes these error texts and the goal view matches on them.
    expect(POSSIBLY_BILLED).toBe("possibly billed");
    expect(MODEL_CALL_RESERVED).toBe("reserved: the call has not settled");
  });

  it("an artifact path is at most 512 characters", () => {
    const path = (total: number) => ["x".repeat(128), "x".repeat(128), "x".repeat(128), "x".repeat(100), "x".repeat(total - 4 - 484)].join("/");
    expect(path(512)).toHaveLength(512);
    expect(isArtifactPath(path(512))).toBe(true);
    expect(isArtifactPath(path(513))).toBe(false);
  });

  it("a webhook URL's scheme is exactly http or https", () => {
    for (const url of ["xhttp://example.com/hook", "httpx://example.com/hook", "httpss://example.com/hook"]) expect(refused(webhookSpec, { url }), url).toEqual(["url"]);
    expect(refused(webhookSpec, { url: "https://example.com/hook", payload: "thin" })).toEqual([]);
    expect(refused(webhookSpec, { url: "https://example.com/hook", payload: "none" })).toEqual(["payload"]);
  });

  it("the server's wall-clock defaults and maximums are at least one second", () => {
    expect(refused(budgetConfigSchema, { DEFAULT_MAX_WALL_SECONDS: "1", LIMIT_MAX_WALL_SECONDS: "1" })).toEqual([]);
    expect(refused(budgetConfigSchema, { DEFAULT_MAX_WALL_SECONDS: "0" })).toEqual(["DEFAULT_MAX_WALL_SECONDS"]);
    expect(refused(budgetConfigSchema, { LIMIT_MAX_WALL_SECONDS: "0" })).toEqual(["LIMIT_MAX_WALL_SECONDS"]);
    expect(refused(budgetConfigSchema, { LIMIT_MAX_TOKENS: "0" })).toEqual(["LIMIT_MAX_TOKENS"]);
    expect(refused(budgetConfigSchema, { LIMIT_MAX_COST_USD: "0" })).toEqual(["LIMIT_MAX_COST_USD"]);
  });
});

describe("runner keys", () => {
  it("heartbeat and readiness keys under the queue prefix, and the patterns that find them", () => {
    expect(runnerHeartbeatKey("ls", "r1")).toBe("ls:runner:r1");
    expect(runnerReadyKey("ls", "r1")).toBe("ls:runner-ready:r1");
    expect(runnerHeartbeatPattern("ls")).toBe("ls:runner:*");
    expect(runnerReadyPattern("ls")).toBe("ls:runner-ready:*");
  });
});
