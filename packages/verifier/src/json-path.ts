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
  let value = root;
  const segments = path.split(".");
  for (const [i, key] of segments.entries()) {
    const parent = segments.slice(0, i).join(".");
    const where = parent === "" ? "at the root" : `at "${parent}"`;
    const missing = (why: string): Resolved => ({ ok: false, message: `path "${path}" does not resolve: ${why}` });
    if (Array.isArray(value)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return missing(`"${key}" is not an index into the array ${where}`);
      const index = Number(key);
      if (index >= value.length) return missing(`index ${index} is out of range for the array ${where} (length ${value.length})`);
      value = value[index];
    } else if (typeof value === "object" && value !== null) {
      // Own keys only: "constructor" or "__proto__" must not resolve through the prototype.
      if (!Object.hasOwn(value, key)) return missing(`key "${key}" not found in the object ${where}`);
      value = (value as Record<string, unknown>)[key];
    } else {
      return missing(`the value ${where} is ${describeValue(value)}, not an object`);
    }
  }
  return { ok: true, value };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
