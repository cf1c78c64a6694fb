import { z } from "zod";
import { describeValue } from "./format";

// Dot paths into parsed JSON: "" is the root, "by_region.North" a nested key, "rows.0.total" an array
// index. Keys containing dots cannot be addressed; the checks' outputs are small summaries, so that
// simplicity is worth more than an escaping syntax.

export const dotPath = z
  .string({ error: (iss) => (iss.input === undefined ? "required" : undefined) })
  .refine((p) => p === "" || p.split(".").every((s) => s.length > 0), {
    message: 'must be "" (the root) or dot-separated non-empty keys, e.g. "by_region" or "totals.revenue"',
  });

/** How a path is named in messages. */
export function showPath(path: string): string {
  return path === "" ? "the root" : `"${path}"`;
}

export type Resolved = { ok: true; value: unknown } | { ok: false; message: string };

export function resolvePath(root: unknown, path: string): Resolved {
  if (path === "") return { ok: true, value: root };
  return walk(root, path.split("."), { what: "path", spelled: path, at: (parent) => (parent.length === 0 ? "at the root" : `at "${parent.join(".")}"`) });
}

/**
 * Follows keys and array indexes from the root; own keys only, so "constructor" or "__proto__" never
 * resolve through the prototype. `at` names a place by the tokens that lead to it, for messages.
 */
function walk(root: unknown, tokens: string[], naming: { what: string; spelled: string; at: (parent: string[]) => string }): Resolved {
  let value = root;
  for (const [i, key] of tokens.entries()) {
    const where = naming.at(tokens.slice(0, i));
    const missing = (why: string): Resolved => ({ ok: false, message: `${naming.what} ${JSON.stringify(naming.spelled)} does not resolve: ${why}` });
    if (Array.isArray(value)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return missing(`"${key}" is not an index into the array ${where}`);
      const index = Number(key);
      if (index >= value.length) return missing(`index ${index} is out of range for the array ${where} (length ${value.length})`);
      value = value[index];
    } else if (typeof value === "object" && value !== null) {
      if (!Object.hasOwn(value, key)) return missing(`key ${JSON.stringify(key)} not found in the object ${where}`);
      value = (value as Record<string, unknown>)[key];
    } else {
      return missing(`the value ${where} is ${describeValue(value)}, not an object or array`);
    }
  }
  return { ok: true, value };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// JSON Pointers (RFC 6901), for the newer checks: "" is the whole document, "/by_region/North" a key,
// "/rows/0" an array index, "~1" and "~0" escape "/" and "~" inside a key.

export const jsonPointer = z
  .string()
  .max(1000)
  .refine((p) => p === "" || (p.startsWith("/") && !/~[^01]|~$/.test(p)), {
    message: 'must be a JSON Pointer: "" for the whole document, or "/key/0/..." (escape "/" as ~1 and "~" as ~0)',
  })
  .describe('JSON Pointer (RFC 6901) into the document: "" is the whole document, "/totals/revenue" a nested key.');

export function pointerTokens(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

export function resolvePointer(root: unknown, pointer: string): Resolved {
  const escape = (t: string) => t.replace(/~/g, "~0").replace(/\//g, "~1");
  return walk(root, pointerTokens(pointer), {
    what: "pointer",
    spelled: pointer,
    at: (parent) => (parent.length === 0 ? "at the root" : `at /${parent.map(escape).join("/")}`),
  });
}
