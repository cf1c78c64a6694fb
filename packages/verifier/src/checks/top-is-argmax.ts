import { z } from "zod";
import { artifactParam } from "../artifacts";
import { defineCheck } from "../define";
import { describeValue, fmtNumber, listQuoted } from "../format";
import { dotPath, showPath } from "../json-path";
import { jsonAt, numericEntries, objectAt } from "./support";

export const topIsArgmax = defineCheck({
  description:
    'The string at `key_path` is a key of the object at `object_path` whose number is the maximum (any tied maximum passes). Params: artifact (default "result.json"), key_path (required), object_path (required).',
  params: z.strictObject({ artifact: artifactParam, key_path: dotPath, object_path: dotPath }),
  example: { artifact: "result.json", key_path: "top_region", object_path: "by_region" },
  publicParams: ["artifact", "key_path", "object_path"],
  publicMessages: true,
  run({ artifact, key_path, object_path }, ctx) {
    const key = jsonAt(ctx, artifact, key_path);
    if (!key.ok) return { passed: false, message: key.message };
    if (typeof key.value !== "string") {
      return { passed: false, message: `the value at ${showPath(key_path)} is ${describeValue(key.value)}, expected a string naming a key of ${showPath(object_path)}` };
    }
    const top = key.value;

    const obj = objectAt(ctx, artifact, object_path);
    if (!obj.ok) return { passed: false, message: obj.message };
    const entries = numericEntries(obj.value, object_path);
    if (!entries.ok) return { passed: false, message: entries.message };
    const numbers = entries.value;
    if (numbers.length === 0) return { passed: false, message: `the object at ${showPath(object_path)} is empty, so ${JSON.stringify(top)} cannot be its maximum` };
    // reduce, not Math.max(...spread): a large object would overflow the argument list.
    const max = numbers.reduce((m, [, v]) => Math.max(m, v), -Infinity);
    const maximal = numbers.filter(([, v]) => v === max).map(([k]) => k);
    const maxText = `${maximal.length === 1 ? "the maximum is" : "the maximum is shared by"} ${listQuoted(maximal)} (${fmtNumber(max)})`;
    const entry = numbers.find(([k]) => k === top);
    if (entry === undefined) {
      return { passed: false, message: `${showPath(key_path)} is ${JSON.stringify(top)}, which is not a key of ${showPath(object_path)} (keys: ${listQuoted(numbers.map(([k]) => k))}); ${maxText}` };
    }
    if (entry[1] !== max) return { passed: false, message: `${showPath(key_path)} is ${JSON.stringify(top)} (${fmtNumber(entry[1])}), but ${maxText}` };
    return { passed: true, message: `${showPath(key_path)} is ${JSON.stringify(top)}, the maximum of ${showPath(object_path)} (${fmtNumber(max)})` };
  },
});
