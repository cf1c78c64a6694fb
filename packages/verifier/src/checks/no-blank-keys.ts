import { z } from "zod";
import { artifactParam } from "../artifacts";
import { defineCheck } from "../define";
import { listQuoted } from "../format";
import { dotPath, showPath } from "../json-path";
import { objectAt } from "./support";

// How a missing value looks once pandas/Python has turned it into a dict key.
const NULL_LIKE = new Set(["none", "null", "nan", "nat", "undefined", "<na>"]);

export function isBlankKey(key: string): boolean {
  const k = key.trim().toLowerCase();
  return k === "" || NULL_LIKE.has(k);
}

export const noBlankKeys = defineCheck({
  description:
    'The object at `path` has no blank or null-like keys ("", "nan", "None", "null", "NaT", "<NA>", "undefined"; case-insensitive, trimmed). Params: artifact (default "result.json"), path (required dot path, "" = root).',
  params: z.strictObject({ artifact: artifactParam, path: dotPath }),
  example: { artifact: "result.json", path: "by_region" },
  publicParams: ["artifact", "path"],
  publicMessages: true,
  run({ artifact, path }, ctx) {
    const obj = objectAt(ctx, artifact, path);
    if (!obj.ok) return { passed: false, message: obj.message };
    const keys = Object.keys(obj.value);
    const bad = keys.filter(isBlankKey);
    if (bad.length > 0) {
      return {
        passed: false,
        message: `the object at ${showPath(path)} has ${bad.length} blank or null-like key${bad.length === 1 ? "" : "s"}: ${listQuoted(bad)} (missing values became keys; drop or fill them before grouping)`,
      };
    }
    return { passed: true, message: `all ${keys.length} keys of the object at ${showPath(path)} are non-blank` };
  },
});
