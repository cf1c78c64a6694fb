// npm run openapi, second half: openapi/openapi.json -> packages/client/src/generated/openapi.ts.
import { mkdir, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { generateTypesFromFile, TYPES_PATH } from "./generate";

await mkdir(dirname(TYPES_PATH), { recursive: true });
await writeFile(TYPES_PATH, await generateTypesFromFile());
console.log(`wrote ${TYPES_PATH}`);
