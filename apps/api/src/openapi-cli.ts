// Regenerates openapi/openapi.json from the routes' zod schemas. A test fails when the committed file drifts.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { generateOpenApi } from "./openapi";

const target = fileURLToPath(new URL("../../../openapi/openapi.json", import.meta.url));
await writeFile(target, await generateOpenApi());
console.log(`wrote ${target}`);
