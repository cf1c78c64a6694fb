import { RESULT_FILE } from "@loopsmith/schemas";
import { z } from "zod";
import { listQuoted } from "./format";
import type { VerifyContext } from "./types";

/** The `artifact` param shared by the JSON checks. */
export const artifactParam = z.string().min(1).default(RESULT_FILE);

type Found<T> = { ok: true; value: T } | { ok: false; message: string };

/** Why an artifact is absent: the sandbox's reason if it gave one, else what was returned instead. */
function missingMessage(ctx: VerifyContext, name: string): string {
  const reasons = ctx.artifactErrors.filter((e) => e.startsWith(`${name}:`));
  if (reasons.length > 0) return `artifact "${name}" was not returned: ${reasons.join("; ")}`;
  const returned = ctx.artifacts.length === 0 ? "no artifacts were returned" : `returned artifacts: ${listQuoted(ctx.artifacts.map((a) => a.name))}`;
  // Errors not tied to a file (a timeout, a malformed stream) may still explain the absence.
  const general = ctx.artifactErrors.length > 0 ? `; collection errors: ${ctx.artifactErrors.slice(0, 3).join("; ")}` : "";
  return `artifact "${name}" was not returned (${returned}${general})`;
}

export function findArtifact(ctx: VerifyContext, name: string): Found<Buffer> {
  const artifact = ctx.artifacts.find((a) => a.name === name);
  if (artifact === undefined) return { ok: false, message: missingMessage(ctx, name) };
  return { ok: true, value: artifact.content };
}

/** Parses an artifact as UTF-8 JSON; every way that can go wrong becomes a message. */
export function loadJson(ctx: VerifyContext, name: string): Found<unknown> {
  const found = findArtifact(ctx, name);
  if (!found.ok) return found;
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(found.value);
  } catch {
    return { ok: false, message: `artifact "${name}" is not valid UTF-8 (${found.value.length} bytes)` };
  }
  if (text.trim() === "") return { ok: false, message: `artifact "${name}" is empty (${found.value.length} bytes), expected JSON` };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    // Python's json.dump writes NaN/Infinity for non-finite floats by default, which is not JSON.
    const hint = /\b(NaN|-?Infinity)\b/.test(text) ? " (it contains NaN or Infinity, which JSON does not allow)" : "";
    return { ok: false, message: `artifact "${name}" is not valid JSON: ${(e as Error).message}${hint}` };
  }
}
