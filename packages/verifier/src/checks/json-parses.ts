import { z } from "zod";
import { artifactParam, loadJson } from "../artifacts";
import { defineCheck } from "../define";
import { describeValue } from "../format";

export const jsonParses = defineCheck({
  description: 'The artifact exists and is valid UTF-8 JSON. Params: artifact (default "result.json").',
  params: z.strictObject({ artifact: artifactParam }),
  example: { artifact: "report.json" },
  publicParams: ["artifact"],
  run({ artifact }, ctx) {
    const doc = loadJson(ctx, artifact);
    if (!doc.ok) return { passed: false, message: doc.message, publicMessage: doc.message };
    const message = `artifact "${artifact}" is valid JSON (${describeValue(doc.value)})`;
    return { passed: true, message, publicMessage: message };
  },
});
