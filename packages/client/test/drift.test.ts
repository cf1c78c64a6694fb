// Issue 13.2: the committed client types are exactly what openapi-typescript makes of the committed
// document. No services: the types are regenerated in memory and compared.
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { generateTypesFromFile, TYPES_PATH } from "../src/generate";

describe("packages/client/src/generated/openapi.ts", () => {
  it("is what openapi/openapi.json generates (run `npm run openapi` after changing a route)", async () => {
    const committed = await readFile(TYPES_PATH, "utf8");
    expect(committed === (await generateTypesFromFile()), "the client types drifted from openapi/openapi.json: run `npm run openapi`").toBe(true);
  });
});
