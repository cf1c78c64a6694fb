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

  it("documents every route with its request and response schemas", async () => {
    const doc = JSON.parse(await generateOpenApi());
    expect(Object.keys(doc.paths).sort()).toEqual(["/goals", "/goals/{id}", "/healthz", "/readyz"]);
    expect(doc.paths["/readyz"].get.responses["503"]).toBeDefined();
    const post = doc.paths["/goals"].post;
    expect(post.requestBody.content["application/json"].schema).toBeDefined();
    expect(Object.keys(post.responses).sort()).toEqual(["202", "400", "503"]);
    expect(Object.keys(doc.paths["/goals/{id}"].get.responses).sort()).toEqual(["200", "404"]);
    // The shared zod schemas appear as named components.
    for (const name of ["CreateGoal", "Goal", "ModelSpec", "CheckSpec", "Error"]) expect(doc.components.schemas[name]).toBeDefined();
  });
});
