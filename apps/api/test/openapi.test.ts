import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { generateOpenApi } from "../src/openapi";

describe("openapi/openapi.json", () => {
  it("is exactly what the code generates (run `npm run openapi` after changing a route)", async () => {
    const committed = await readFile(new URL("../../../openapi/openapi.json", import.meta.url), "utf8");
    const generated = await generateOpenApi();
    expect(JSON.parse(committed)).toEqual(JSON.parse(generated));
    expect(committed).toBe(generated);
  });

  it("documents the health routes with their response schemas", async () => {
    const doc = JSON.parse(await generateOpenApi());
    expect(Object.keys(doc.paths).sort()).toEqual(["/healthz", "/readyz"]);
    expect(doc.paths["/readyz"].get.responses["503"]).toBeDefined();
  });
});
