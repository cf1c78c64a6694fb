import { z } from "zod";
import { artifactParam } from "../artifacts";
import { defineCheck } from "../define";
import { fmtNumber, listQuoted } from "../format";
import { dotPath, showPath } from "../json-path";
import { asNumber, jsonAt, numericEntries, objectAt } from "./support";

export const reconcilesTotal = defineCheck({
  description:
    'The values of the object at `values_path` are JSON numbers summing to the number at `total_path` within `tolerance`. Params: artifact (default "result.json"), values_path (required), total_path (required), tolerance (default 0.01).',
  params: z.strictObject({
    artifact: artifactParam,
    values_path: dotPath,
    total_path: dotPath,
    tolerance: z.number().nonnegative().default(0.01),
  }),
  example: { artifact: "result.json", values_path: "by_region", total_path: "total_revenue", tolerance: 0.01 },
  publicParams: ["artifact", "values_path", "total_path", "tolerance"],
  publicMessages: true,
  run({ artifact, values_path, total_path, tolerance }, ctx) {
    const values = objectAt(ctx, artifact, values_path);
    if (!values.ok) return { passed: false, message: values.message };
    const numbers = numericEntries(values.value, values_path);
    if (!numbers.ok) return { passed: false, message: numbers.message };
    const entries = numbers.value;
    // An empty breakdown "reconciles" with a zero total only vacuously; fail closed instead.
    if (entries.length === 0) return { passed: false, message: `the object at ${showPath(values_path)} is empty: nothing to reconcile` };

    const total = jsonAt(ctx, artifact, total_path);
    if (!total.ok) return { passed: false, message: total.message };
    const totalNumber = asNumber(total.value);
    if (!totalNumber.ok) return { passed: false, message: `the total at ${showPath(total_path)} is ${totalNumber.message}` };
    const totalValue = totalNumber.value;

    const sum = entries.reduce((acc, [, v]) => acc + v, 0);
    const diff = Math.abs(sum - totalValue);
    // Summing n floats leaves rounding noise of up to about n ulps of the magnitudes involved; allow that
    // on top of the tolerance so that tolerance 0 means "equal as decimals", not "equal bit for bit".
    const magnitude = entries.reduce((acc, [, v]) => acc + Math.abs(v), Math.abs(totalValue));
    const noise = (entries.length + 1) * Number.EPSILON * Math.max(1, magnitude);
    // Stryker disable next-line StringLiteral: unreachable; a total at the root would be a number, which cannot hold the values' object
    const totalName = total_path || "the root";
    const summary = `sum of ${values_path || "the root"} (${entries.length} value${entries.length === 1 ? "" : "s"}: ${listQuoted(entries.map(([k]) => k), 5)}) is ${fmtNumber(sum)}, ${totalName} is ${fmtNumber(totalValue)}, difference ${fmtNumber(diff)}`;
    if (diff <= tolerance + noise) return { passed: true, message: `${summary} is within tolerance ${fmtNumber(tolerance)}` };
    return { passed: false, message: `${summary} exceeds tolerance ${fmtNumber(tolerance)}` };
  },
});
