// Issue 17: raw Prisma and Docker error text (source paths, code frames, addresses) must not reach
// tenant-readable tape rows or the public /readyz. The samples are real: captured from Prisma 7.10 with
// @prisma/adapter-pg against Postgres 15, and from dockerode 5 against Docker 20.10, on this machine.
import { describe, expect, it } from "vitest";
import { LoopSmithError, publicError, PUBLIC_MESSAGE_MAX, scrubText } from "../src/index";

function prismaError(sample: { code: string; message: string; meta: unknown }) {
  return Object.assign(new Error(sample.message), { name: "PrismaClientKnownRequestError", code: sample.code, meta: sample.meta, clientVersion: "7.10.1" });
}

const P2025 = { code: "P2025", message: "\nInvalid `prisma.goal.update()` invocation in\n/work/wt-secrets/apps/runner/src/zz-gen.ts:6:25\n\n  3 const prisma = createPrisma(process.env.DATABASE_URL!);\n  4 const out: Record<string, unknown> = {};\n  5 const grab = (e: any) => ({ name: e?.name, code: e?.code, message: e?.message, meta: e?.meta, statusCode: e?.statusCode, reason: e?.reason, json: e?.json, errno: e?.errno, syscall: e?.syscall, address: e?.address, clientVersion: e?.clientVersion, errorCode: e?.errorCode, stackHead: String(e?.stack).split(\"\\n\").slice(0, 3) });\n→ 6 try { await prisma.goal.update(\nAn operation failed because it depends on one or more records that were required but not found. No record was found for an update.", meta: {"modelName": "Goal", "operation": "an update"} };
const P2007 = { code: "P2007", message: "\nInvalid `prisma.tenant.create()` invocation in\n/work/wt-secrets/apps/runner/src/zz-gen.ts:7:27\n\n  4 const out: Record<string, unknown> = {};\n  5 const grab = (e: any) => ({ name: e?.name, code: e?.code, message: e?.message, meta: e?.meta, statusCode: e?.statusCode, reason: e?.reason, json: e?.json, errno: e?.errno, syscall: e?.syscall, address: e?.address, clientVersion: e?.clientVersion, errorCode: e?.errorCode, stackHead: String(e?.stack).split(\"\\n\").slice(0, 3) });\n  6 try { await prisma.goal.update({ where: { id: \"00000000-0000-4000-8000-000000000000\" }, data: { state: \"x\" } }); } catch (e) { out.p2025 = grab(e); }\n→ 7 try { await prisma.tenant.create(\nInvalid input value: invalid input syntax for type uuid: \"not-a-uuid\"", meta: {"modelName": "Tenant", "driverAdapterError": {"name": "DriverAdapterError", "cause": {"originalCode": "22P02", "originalMessage": "invalid input syntax for type uuid: \"not-a-uuid\"", "kind": "InvalidInputValue", "message": "invalid input syntax for type uuid: \"not-a-uuid\""}}} };
const P1001 = { code: "P1001", message: "\nInvalid `bad.goal.findMany()` invocation in\n/work/wt-secrets/apps/runner/src/zz-gen.ts:10:22\n\n   7 try { await prisma.tenant.create({ data: { id: \"not-a-uuid\", name: \"x\" } }); } catch (e) { out.baduuid = grab(e); }\n   8 const bad = createPrisma(\"postgresql://postgres:hunter2@127.0.0.1:1/nope\");\n   9 try { await bad.$queryRaw`SELECT 1`; } catch (e) { out.down = grab(e); }\n→ 10 try { await bad.goal.findMany(\nCan't reach database server at 127.0.0.1:1", meta: {"modelName": "Goal", "driverAdapterError": {"name": "DriverAdapterError", "cause": {"kind": "DatabaseNotReachable", "host": "127.0.0.1", "port": 1}}} };
const DOCKER_404 = { message: "(HTTP code 404) no such container - No such container: deadbeefdeadbeef ", statusCode: 404, reason: "no such container", json: {"message": "No such container: deadbeefdeadbeef"} };
const DOCKER_SOCKET = { message: "connect ENOENT /nonexistent/docker.sock", code: "ENOENT", errno: -2, syscall: "connect", address: "/nonexistent/docker.sock" };

/** Nothing an outsider should see: paths, code frames, source text, addresses, credentials. */
function expectClean(message: string) {
  expect(message).not.toMatch(/\/work\/|\/app\/|\.ts:\d|node_modules|invocation|→|createPrisma|const |hunter2|postgresql:\/\/|127\.0\.0\.1|docker\.sock|\n/);
  expect(message.length).toBeLessThanOrEqual(PUBLIC_MESSAGE_MAX);
}

describe("publicError", () => {
  it("a Prisma error: LS_ERR_DATABASE, its Prisma code and the sentence after the code frame", () => {
    const shown = publicError(prismaError(P2025));
    expect(shown).toEqual({
      code: "LS_ERR_DATABASE",
      message: "Prisma P2025: An operation failed because it depends on one or more records that were required but not found. No record was found for an update.",
    });
    expectClean(shown.message);
    const uuid = publicError(prismaError(P2007));
    expect(uuid).toEqual({ code: "LS_ERR_DATABASE", message: 'Prisma P2007: Invalid input value: invalid input syntax for type uuid: "not-a-uuid"' });
  });

  it("a Prisma connection error names the kind, not the host, port or connection string in its frame", () => {
    const shown = publicError(prismaError(P1001));
    expect(shown).toEqual({ code: "LS_ERR_DATABASE", message: "Prisma P1001: database not reachable" });
    expectClean(shown.message);
  });

  it("a Postgres error through node-postgres: LS_ERR_DATABASE and its SQLSTATE", () => {
    // pg's DatabaseError as it arrives (name "error", the server's fields beside the message).
    const raised = Object.assign(new Error("disk full at /var/lib/postgresql/15/main (test)"), { name: "error", severity: "ERROR", code: "P0001", where: "PL/pgSQL function f() line 1 at RAISE" });
    const shown = publicError(raised);
    expect(shown).toEqual({ code: "LS_ERR_DATABASE", message: "Postgres P0001: disk full at <path> (test)" });
    expectClean(shown.message);
    // A system error's code is not a SQLSTATE, and an error without the server's severity is not Postgres's.
    expect(publicError(Object.assign(new Error("x"), { code: "ECONNREFUSED", syscall: "connect" })).code).toBe("LS_ERR_INTERNAL");
    expect(publicError(Object.assign(new Error("x"), { code: "23505" })).code).toBe("LS_ERR_INTERNAL");
    // packages/db's wrapper of a connection that failed under a statement sent past Prisma.
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { name: "DatabaseConnectionError", code: "ECONNREFUSED" });
    expect(publicError(refused)).toEqual({ code: "LS_ERR_DATABASE", message: "database connection: connection refused (ECONNREFUSED)" });
    const pool = Object.assign(new Error("timeout exceeded when trying to connect"), { name: "DatabaseConnectionError" });
    expect(publicError(pool)).toEqual({ code: "LS_ERR_DATABASE", message: "database connection: timeout exceeded when trying to connect" });
  });

  it("a dockerode error: LS_ERR_SANDBOX_UNAVAILABLE with the engine's status and message", () => {
    const shown = publicError(Object.assign(new Error(DOCKER_404.message), DOCKER_404));
    expect(shown).toEqual({ code: "LS_ERR_SANDBOX_UNAVAILABLE", message: "Docker engine HTTP 404: No such container: deadbeefdeadbeef" });
  });

  it("a socket that is not there: the call and the errno, not the path", () => {
    const shown = publicError(Object.assign(new Error(DOCKER_SOCKET.message), DOCKER_SOCKET));
    expect(shown).toEqual({ code: "LS_ERR_INTERNAL", message: "connect: no such file or socket (ENOENT)" });
    expectClean(shown.message);
  });

  it("our own errors keep their code; a raw message wrapped in one is scrubbed all the same", () => {
    expect(publicError(new LoopSmithError("LS_ERR_STALE_VERSION", "moved on"))).toEqual({ code: "LS_ERR_STALE_VERSION", message: "moved on" });
    const wrapped = publicError(new LoopSmithError("LS_ERR_SANDBOX_UNAVAILABLE", `sandbox: ${DOCKER_SOCKET.message}`));
    expect(wrapped).toEqual({ code: "LS_ERR_SANDBOX_UNAVAILABLE", message: "sandbox: connect ENOENT <path>" });
    // A Prisma error that crossed a process boundary as text (a BullMQ failedReason) loses its frame too.
    const asText = publicError(new Error(P2025.message));
    expect(asText.code).toBe("LS_ERR_INTERNAL");
    expect(asText.message).toBe("An operation failed because it depends on one or more records that were required but not found. No record was found for an update.");
  });

  it("drops stack lines, clips long messages, and handles non-errors", () => {
    const e = new Error("boom at /srv/app/x.ts:1:2\n    at fn (/srv/app/x.ts:1:2)\n    at node:internal/process");
    expect(publicError(e)).toEqual({ code: "LS_ERR_INTERNAL", message: "boom at <path>" });
    expect(publicError(new Error("x".repeat(5000))).message).toHaveLength(PUBLIC_MESSAGE_MAX);
    expect(publicError("plain string")).toEqual({ code: "LS_ERR_INTERNAL", message: "plain string" });
    expect(publicError(undefined)).toEqual({ code: "LS_ERR_INTERNAL", message: "undefined" });
  });
});

describe("scrubText", () => {
  it("removes paths, credentials in URLs and host:port pairs", () => {
    expect(scrubText("failed at file:///app/apps/api/src/x.ts:12:5")).toBe("failed at <path>");
    expect(scrubText("bad url postgresql://postgres:hunter2@db.internal:5432/loopsmith here")).toBe("bad url <url> here");
    expect(scrubText("connect ECONNREFUSED 172.18.0.2:5432")).toBe("connect ECONNREFUSED <host>");
    expect(scrubText("C:\\Users\\me\\app\\x.ts failed")).toBe("<path> failed");
    expect(scrubText("image loopsmith/sandbox-python:abc is missing")).toBe("image loopsmith/sandbox-python:abc is missing");
  });
});
