import { z } from "zod";
import { artifactParam, findArtifact } from "../artifacts";
import { defineCheck } from "../define";

export const artifactExists = defineCheck({
  description: 'The script left a regular file with this name, relative to the output directory. Params: name (default "result.json").',
  params: z.strictObject({ name: artifactParam }),
  example: { name: "clean.csv" },
  publicParams: ["name"],
  run({ name }, ctx) {
    const found = findArtifact(ctx, name);
    if (!found.ok) return { passed: false, message: found.message, publicMessage: found.message };
    const message = `artifact "${name}" was returned (${found.value.length} bytes)`;
    return { passed: true, message, publicMessage: message };
  },
});
