import { z } from "zod";

// The files a goal's attempts wrote, the programs that wrote them, and the client's own checker files.

/** Longest artifact name the download route accepts (bytes of UTF-8): longer cannot have been stored. */
export const MAX_ARTIFACT_NAME_BYTES = 1024;

/**
 * Why `name` cannot name a stored artifact, or null when it can. Artifacts are files under the program's
 * output directory, so a name is a relative path of plain segments: nested names ("reports/a.csv") are
 * real, but an absolute path, an empty segment ("a//b", a trailing "/"), "." or "..", a backslash, a NUL or
 * another control character never are.
 */
export function artifactNameProblem(name: string): string | null {
  if (name.length === 0) return "empty: give an artifact name";
  if (Buffer.byteLength(name) > MAX_ARTIFACT_NAME_BYTES) return `longer than ${MAX_ARTIFACT_NAME_BYTES} bytes`;
  if (/[\x00-\x1f\x7f]/.test(name)) return "contains a NUL or another control character";
  if (name.includes("\\")) return "contains a backslash: artifact names separate directories with '/'";
  if (name.startsWith("/")) return "an absolute path: artifact names are relative to the output directory";
  const segments = name.split("/");
  if (segments.some((s) => s === "")) return "an empty path segment ('//' or a trailing '/')";
  if (segments.some((s) => s === "." || s === "..")) return "a '.' or '..' segment: artifact names never leave the output directory";
  return null;
}

export const attemptNumber = z.coerce.number().int().min(1).max(1000);

export const artifactListQuery = z
  .object({
    attempt: attemptNumber.optional().describe("Only this attempt's files. Omitted: every attempt's, oldest attempt first."),
  })
  .strict();

export const artifactQuery = z
  .object({
    attempt: attemptNumber.optional().describe("This attempt's file. Omitted: the newest attempt that wrote a file of this name."),
  })
  .strict();

export const artifactParams = z.object({
  id: z.string(),
  name: z.string().describe("The artifact's name, URL-encoded: clean.csv, or reports%2Fsummary.json for a nested file (a plain '/' in the path works too)."),
});

export const attemptParams = z.object({ id: z.string(), n: attemptNumber.describe("The attempt (1-based).") });

export const checkerFileParams = z.object({ id: z.string(), name: z.string() });

export const artifactEntry = z
  .object({
    name: z.string().describe("Relative to the output directory; may contain '/'."),
    attempt: z.int(),
    size: z.int(),
    sha256: z.string(),
    content_type: z.string().describe("Guessed from the name's extension; application/octet-stream when unknown."),
    url: z.string().describe("Where to download it (this attempt's copy)."),
  })
  .meta({ id: "Artifact" });
export type ArtifactEntry = z.infer<typeof artifactEntry>;

export const programEntry = z
  .object({
    attempt: z.int(),
    size: z.int(),
    sha256: z.string().describe("sha256 of the program's UTF-8 bytes (the execution's script_sha256)."),
    url: z.string(),
  })
  .meta({ id: "Program" });

export const checkerFileEntry = z
  .object({ name: z.string(), size: z.int(), sha256: z.string(), url: z.string() })
  .meta({ id: "CheckerFile" });

export const artifactList = z
  .object({
    artifacts: z.array(artifactEntry).describe("Oldest attempt first, then by name."),
    programs: z.array(programEntry).describe("The program each attempt ran, oldest first (filtered by ?attempt= too)."),
    checker_files: z.array(checkerFileEntry).describe("The hidden checker material this tenant sent with the goal: never shown to the models or the program."),
  })
  .meta({ id: "ArtifactList" });
export type ArtifactList = z.infer<typeof artifactList>;

const CONTENT_TYPES: Record<string, string> = {
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

/**
 * A content type for a file name. Only types a browser will not run as a page: an artifact is the
 * program's output, and HTML or SVG served from the API's origin could script it.
 */
export function contentTypeOf(name: string): string {
  const base = name.slice(name.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  if (dot <= 0) return "application/octet-stream";
  return CONTENT_TYPES[base.slice(dot + 1).toLowerCase()] ?? "application/octet-stream";
}
