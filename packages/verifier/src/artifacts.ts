import { RESULT_FILE } from "@loopsmith/schemas";
import { z } from "zod";
import { listQuoted } from "./format";
import { parseJsonExact, type Json } from "./lib/json";
import type { NamedFile, VerifyContext } from "./types";

/** A path under the output directory: relative, '/'-separated, at most 8 plain segments, no "." or "..". */
export function isArtifactPath(path: string): boolean {
  const segments = path.split("/");
  return path.length <= 512 && segments.length <= 8 && segments.every((s) => /^[A-Za-z0-9._-]{1,128}$/.test(s) && s !== "." && s !== "..");
}

export const artifactName = z
  .string({ error: (iss) => (iss.input === undefined ? "required" : undefined) })
  .refine(isArtifactPath, 'a relative path under the output directory, e.g. "clean.csv" or "reports/summary.json"')
  .describe("The artifact to read: a path relative to the output directory.");

/** The `artifact` param shared by the JSON checks. */
export const artifactParam = artifactName.default(RESULT_FILE);

/** A checker file's name, as given in the goal's `checker_files`. */
export const checkerFileName = z
  .string({ error: (iss) => (iss.input === undefined ? "required" : undefined) })
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, "the name of one of the goal's checker_files")
  .describe("The name of one of the goal's checker_files (hidden material).");

export type Found<T> = { ok: true; value: T } | { ok: false; message: string };

/** Why an artifact is absent: the sandbox's reason if it gave one, else what was returned instead. */
function missingMessage(ctx: Pick<VerifyContext, "artifacts" | "artifactErrors">, name: string): string {
  const reasons = ctx.artifactErrors.filter((e) => e.startsWith(`${name}:`));
  if (reasons.length > 0) return `artifact "${name}" was not returned: ${reasons.join("; ")}`;
  const returned = ctx.artifacts.length === 0 ? "no artifacts were returned" : `returned artifacts: ${listQuoted(ctx.artifacts.map((a) => a.name))}`;
  // Errors not tied to a file (a timeout, a malformed stream) may still explain the absence.
  const general = ctx.artifactErrors.length > 0 ? `; collection errors: ${ctx.artifactErrors.slice(0, 3).join("; ")}` : "";
  return `artifact "${name}" was not returned (${returned}${general})`;
}

export function findArtifact(ctx: Pick<VerifyContext, "artifacts" | "artifactErrors">, name: string): Found<Buffer> {
  const artifact = ctx.artifacts.find((a) => a.name === name);
  if (artifact === undefined) return { ok: false, message: missingMessage(ctx, name) };
  return { ok: true, value: artifact.content };
}

/** A checker file by name. Its absence is the check's own fault (the API refuses such goals), so it fails closed. */
export function findCheckerFile(ctx: Pick<VerifyContext, "checkerFiles">, name: string): Found<Buffer> {
  const file = ctx.checkerFiles.find((f) => f.name === name);
  if (file === undefined) return { ok: false, message: `checker file "${name}" is not among the goal's checker_files` };
  return { ok: true, value: file.content };
}

/** An input file by name (what the program was given). */
export function findInput(ctx: Pick<VerifyContext, "inputs">, name: string): Found<Buffer> {
  const file = ctx.inputs.find((f) => f.name === name);
  if (file === undefined) {
    const names = ctx.inputs.map((f) => f.name);
    return { ok: false, message: `input "${name}" is not among the goal's inputs (${names.length ? listQuoted(names) : "none"})` };
  }
  return { ok: true, value: file.content };
}

export function decodeUtf8(what: string, content: Buffer): Found<string> {
  try {
    return { ok: true, value: new TextDecoder("utf-8", { fatal: true }).decode(content) };
  } catch {
    return { ok: false, message: `${what} is not valid UTF-8 (${content.length} bytes)` };
  }
}

/** Parses UTF-8 JSON text exactly (big integers, duplicate keys, depth; see lib/json.ts). */
export function parseJsonFile(what: string, content: Buffer): Found<Json> {
  const text = decodeUtf8(what, content);
  if (!text.ok) return text;
  if (text.value.trim() === "") return { ok: false, message: `${what} is empty (${content.length} bytes), expected JSON` };
  const parsed = parseJsonExact(text.value);
  if (!parsed.ok) return { ok: false, message: `${what} is not valid JSON: ${parsed.message}` };
  return parsed;
}

/**
 * An artifact as JSON. `exact` (the default) keeps integers beyond 2^53 as bigints; JSON Schema
 * validation needs plain numbers, so it reads with `exact: false` (same errors, same depth limit).
 */
export function loadJson(ctx: Pick<VerifyContext, "artifacts" | "artifactErrors">, name: string, opts: { exact?: boolean } = {}): Found<unknown> {
  const found = findArtifact(ctx, name);
  if (!found.ok) return found;
  const parsed = parseJsonFile(`artifact "${name}"`, found.value);
  if (!parsed.ok || opts.exact !== false) return parsed;
  // Same document, as JSON.parse sees it: duplicates and depth were refused above (the exact reader counts
  // depth as jsonDepth does, so the plain value is never deeper than MAX_JSON_DEPTH).
  const plain = JSON.parse(new TextDecoder().decode(found.value).replace(/^\uFEFF/, "")) as unknown;
  return { ok: true, value: plain };
}

export type { NamedFile };
