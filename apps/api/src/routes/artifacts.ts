// What a goal's attempts produced, downloadable: the files each attempt wrote under OUTPUT_DIR, the program
// each attempt ran, and the hidden checker files the client itself sent. Verified and failed goals alike;
// another tenant's goal does not exist here. Listing reads names and hashes only, never the bytes.
import { createHash } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { LoopSmithError } from "@loopsmith/core";
import { goalsOf, type PrismaClient } from "@loopsmith/db";
import {
  artifactList,
  artifactListQuery,
  artifactNameProblem,
  artifactParams,
  artifactQuery,
  attemptParams,
  checkerFileParams,
  contentTypeOf,
  errorBody,
  goalIdParams,
  type ArtifactList,
} from "@loopsmith/schemas";
import { tenantOf } from "../auth";
import type { HeaderDoc, ResponseDocs } from "../openapi-docs";

const errors = { 400: errorBody, 401: errorBody, 404: errorBody, 429: errorBody };

const downloadHeaders: Record<string, HeaderDoc> = {
  etag: { description: "The sha256 of the bytes, in quotes: send it back as If-None-Match to get a 304 when unchanged." },
  "content-disposition": { description: "attachment; filename=... (the last segment of the name)." },
};
const ifNoneMatch = z.object({ "if-none-match": z.string().max(4096).optional().describe("An ETag from an earlier download.") });

const bytes = (description: string) => ({
  description,
  content: { "application/octet-stream": { schema: z.string().describe("The file's bytes; Content-Type is guessed from the name's extension.") } },
});
const notModified = z.null().describe("Not modified: If-None-Match matched the ETag. No body.");
const downloadDocs = (extra: Record<string, HeaderDoc> = {}): ResponseDocs => ({
  200: { headers: { ...downloadHeaders, ...extra } },
  304: { headers: { etag: downloadHeaders.etag! } },
});

/** RFC 9110 If-None-Match: "*", or a list of (weak or strong) entity tags compared weakly. */
export function etagMatches(header: string | undefined, sha256: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === `"${sha256}"`);
}

function send(req: FastifyRequest, reply: FastifyReply, file: { name: string; sha256: string; content: Uint8Array }, extra: Record<string, string> = {}) {
  reply.header("etag", `"${file.sha256}"`);
  for (const [k, v] of Object.entries(extra)) reply.header(k, v);
  // Private: the bytes are a tenant's. no-cache: a cache may keep them, but asks (If-None-Match) first.
  reply.header("cache-control", "private, no-cache");
  if (etagMatches(req.headers["if-none-match"], file.sha256)) return reply.status(304).send();
  const base = file.name.slice(file.name.lastIndexOf("/") + 1);
  return reply
    .status(200)
    .type(contentTypeOf(file.name))
    // The program's output is never rendered as a page of the API's origin.
    .header("x-content-type-options", "nosniff")
    .header("content-disposition", `attachment; filename="${base.replace(/[^\x20-\x7e]|["\\]/g, "_")}"; filename*=UTF-8''${encodeURIComponent(base)}`)
    .send(Buffer.from(file.content));
}

function badName(problem: string): LoopSmithError {
  return new LoopSmithError("LS_ERR_VALIDATION", `The artifact name is invalid: ${problem}.`, [{ path: "params.name", message: problem }]);
}

const enc = (name: string) => name.split("/").map(encodeURIComponent).join("%2F");

export const artifactRoutes: FastifyPluginAsyncZod<{ deps: () => { prisma: PrismaClient } }> = async (app, opts) => {
  const goalOf = async (req: FastifyRequest, id: string) => {
    const goal = await goalsOf(opts.deps().prisma, tenantOf(req).id).find(id);
    if (!goal) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${id}.`);
    return goal;
  };

  app.get(
    "/goals/:id/artifacts",
    {
      schema: {
        operationId: "listArtifacts",
        summary: "The files each attempt wrote, the program each attempt ran, and the goal's checker files",
        description:
          "Names, sizes and hashes only. Every attempt's files unless `?attempt=N`. Verified and failed goals alike (and goals still running: what the attempts so far wrote).",
        tags: ["artifacts"],
        params: goalIdParams,
        querystring: artifactListQuery,
        response: { 200: artifactList.describe("The goal's files."), ...errors },
      },
    },
    async (req): Promise<ArtifactList> => {
      const goal = await goalOf(req, req.params.id);
      const { prisma } = opts.deps();
      const attempt = req.query.attempt;
      const [rows, execs, checkerFiles] = await Promise.all([
        prisma.artifact.findMany({
          where: { goalId: goal.id, execution: attempt === undefined ? { isNot: null } : { is: { attempt } } },
          select: { name: true, size: true, sha256: true, execution: { select: { attempt: true } } },
        }),
        prisma.execution.findMany({
          where: { goalId: goal.id, ...(attempt === undefined ? {} : { attempt }) },
          orderBy: { attempt: "asc" },
          select: { attempt: true, script: true, scriptSha256: true },
        }),
        prisma.goalCheckerFile.findMany({ where: { goalId: goal.id }, orderBy: { name: "asc" }, select: { name: true, size: true, sha256: true } }),
      ]);
      const base = `/goals/${goal.id}`;
      const artifacts = rows
        .filter((r) => r.execution !== null)
        .map((r) => ({ name: r.name, attempt: r.execution!.attempt, size: r.size, sha256: r.sha256 }))
        .sort((a, b) => a.attempt - b.attempt || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map((a) => ({ ...a, content_type: contentTypeOf(a.name), url: `${base}/artifacts/${enc(a.name)}?attempt=${a.attempt}` }));
      const programs = execs.map((e) => {
        const b = Buffer.from(e.script, "utf8");
        return { attempt: e.attempt, size: b.length, sha256: e.scriptSha256 ?? createHash("sha256").update(b).digest("hex"), url: `${base}/attempts/${e.attempt}/program` };
      });
      return {
        artifacts,
        programs,
        checker_files: checkerFiles.map((f) => ({ ...f, url: `${base}/checker-files/${enc(f.name)}` })),
      };
    },
  );

  const download = async (req: FastifyRequest, reply: FastifyReply, id: string, name: string, attempt: number | undefined) => {
    const problem = artifactNameProblem(name);
    if (problem) throw badName(problem);
    const goal = await goalOf(req, id);
    const row = await opts.deps().prisma.artifact.findFirst({
      where: { goalId: goal.id, name, execution: attempt === undefined ? { isNot: null } : { is: { attempt } } },
      orderBy: { execution: { attempt: "desc" } },
      select: { name: true, sha256: true, content: true, execution: { select: { attempt: true } } },
    });
    if (!row || !row.execution)
      throw new LoopSmithError(
        "LS_ERR_ARTIFACT_NOT_FOUND",
        attempt === undefined ? `Goal ${goal.id} has no artifact ${JSON.stringify(name)}.` : `Attempt ${attempt} of goal ${goal.id} wrote no artifact ${JSON.stringify(name)}.`,
        [{ path: attempt === undefined ? "params.name" : "querystring.attempt", message: "no such artifact" }],
      );
    return send(req, reply, row, { "artifact-attempt": String(row.execution.attempt) });
  };

  app.get(
    "/goals/:id/artifacts/:name",
    {
      schema: {
        operationId: "getArtifact",
        summary: "Download an artifact",
        description:
          "The newest attempt's copy unless `?attempt=N`; the `Artifact-Attempt` header says which attempt it came from. ETag is the sha256 in quotes; " +
          "If-None-Match answers 304. A nested name is sent URL-encoded (reports%2Fa.csv) or as plain segments (reports/a.csv). " +
          "Names that cannot be artifacts (empty, absolute, '.' or '..' segments, empty segments, backslashes, control characters, over 1024 bytes) are a 400.",
        tags: ["artifacts"],
        params: artifactParams,
        querystring: artifactQuery,
        headers: ifNoneMatch,
        response: {
          200: bytes("The artifact's bytes."),
          304: notModified,
          ...errors,
        },
        "x-responses": downloadDocs({ "artifact-attempt": { description: "The attempt whose copy this is.", schema: { type: "integer" } } }),
      },
    },
    async (req, reply) => download(req, reply, req.params.id, req.params.name, req.query.attempt),
  );

  // The same download for a nested name sent as plain path segments (curl .../artifacts/reports/a.csv).
  app.get(
    "/goals/:id/artifacts/*",
    {
      schema: {
        hide: true,
        params: z.object({ id: z.string(), "*": z.string() }),
        querystring: artifactQuery,
      },
    },
    async (req, reply) => download(req, reply, req.params.id, req.params["*"], req.query.attempt),
  );

  app.get(
    "/goals/:id/attempts/:n/program",
    {
      schema: {
        operationId: "getProgram",
        summary: "Download the program an attempt ran",
        description: "Exactly the script the sandbox ran for attempt n (text/x-python). ETag is its sha256; If-None-Match answers 304.",
        tags: ["artifacts"],
        params: attemptParams,
        headers: ifNoneMatch,
        response: { 200: bytes("The program's source."), 304: notModified, ...errors },
        "x-responses": downloadDocs(),
      },
    },
    async (req, reply) => {
      const goal = await goalOf(req, req.params.id);
      const exec = await opts.deps().prisma.execution.findUnique({
        where: { goalId_attempt: { goalId: goal.id, attempt: req.params.n } },
        select: { script: true },
      });
      if (!exec)
        throw new LoopSmithError("LS_ERR_ARTIFACT_NOT_FOUND", `Goal ${goal.id} has no attempt ${req.params.n} (it ran ${goal.attempts}).`, [
          { path: "params.n", message: "no such attempt" },
        ]);
      const content = Buffer.from(exec.script, "utf8");
      const sha256 = createHash("sha256").update(content).digest("hex");
      return send(req, reply, { name: "program.py", sha256, content });
    },
  );

  app.get(
    "/goals/:id/checker-files/:name",
    {
      schema: {
        operationId: "getCheckerFile",
        summary: "Download a hidden checker file this tenant sent with the goal",
        description: "The client's own material, back to its owner: never shown to the models or the program. ETag is its sha256; If-None-Match answers 304.",
        tags: ["artifacts"],
        params: checkerFileParams,
        headers: ifNoneMatch,
        response: { 200: bytes("The checker file's bytes."), 304: notModified, ...errors },
        "x-responses": downloadDocs(),
      },
    },
    async (req, reply) => {
      const name = req.params.name;
      const problem = artifactNameProblem(name);
      if (problem) throw badName(problem);
      const goal = await goalOf(req, req.params.id);
      const file = await opts.deps().prisma.goalCheckerFile.findUnique({
        where: { goalId_name: { goalId: goal.id, name } },
        select: { name: true, sha256: true, content: true },
      });
      if (!file) throw new LoopSmithError("LS_ERR_ARTIFACT_NOT_FOUND", `Goal ${goal.id} has no checker file ${JSON.stringify(name)}.`, [{ path: "params.name", message: "no such checker file" }]);
      return send(req, reply, file);
    },
  );
};
