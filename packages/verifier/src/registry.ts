import { z } from "zod";
import { noNullRegion, schemaOk } from "./checks/aliases";
import { artifactExists } from "./checks/artifact-exists";
import { cases } from "./checks/cases";
import { command } from "./checks/command";
import { csvMatches } from "./checks/csv-matches";
import { csvRepair } from "./checks/csv-repair";
import { csvSchema } from "./checks/csv-schema";
import { exitsClean } from "./checks/exits-clean";
import { jsonAssert } from "./checks/json-assert";
import { jsonMatches } from "./checks/json-matches";
import { jsonParses } from "./checks/json-parses";
import { jsonSchema } from "./checks/json-schema";
import { noBlankKeys } from "./checks/no-blank-keys";
import { reconcilesTotal } from "./checks/reconciles-total";
import { rowCount } from "./checks/row-count";
import { testSuite } from "./checks/test-suite";
import { textMatches } from "./checks/text-matches";
import { topIsArgmax } from "./checks/top-is-argmax";
import type { CheckDef } from "./types";

/**
 * Every deterministic check by id. A Map rather than an object literal so that ids such as
 * "constructor" or "__proto__" are simply unknown instead of resolving through the prototype.
 */
export const checkRegistry: ReadonlyMap<string, CheckDef> = new Map<string, CheckDef>([
  // The run itself
  ["exits_clean", exitsClean],
  ["artifact_exists", artifactExists],
  // Tables
  ["csv_matches", csvMatches],
  ["csv_repair", csvRepair],
  ["csv_schema", csvSchema],
  ["row_count", rowCount],
  // JSON deliverables
  ["json_parses", jsonParses],
  ["json_schema", jsonSchema],
  ["json_matches", jsonMatches],
  ["json_assert", jsonAssert],
  // Text
  ["text_matches", textMatches],
  // The program's code
  ["cases", cases],
  ["test_suite", testSuite],
  // A workspace's own commands (issue 14)
  ["command", command],
  // The demo's report
  ["no_blank_keys", noBlankKeys],
  ["reconciles_total", reconcilesTotal],
  ["top_is_argmax", topIsArgmax],
  ["schema_ok", schemaOk],
  ["no_null_region", noNullRegion],
]);

export function knownCheckIds(): string[] {
  return [...checkRegistry.keys()];
}

export interface CatalogueEntry {
  id: string;
  description: string;
  aliasOf?: string;
  /** Whether the check runs the program's code in sandbox containers of its own. */
  runsCode: boolean;
  /** Params a model may see when the check is hidden. */
  publicParams: string[];
  /** The params, as a JSON Schema (what the API accepts). */
  params: Record<string, unknown>;
  example: Record<string, unknown>;
}

let catalogue: CatalogueEntry[] | undefined;

/** The check library: GET /checks, the README and the planner's prompt are built from it. */
export function listChecks(): CatalogueEntry[] {
  catalogue ??= [...checkRegistry].map(([id, def]) => ({
    id,
    description: def.description,
    ...(def.aliasOf === undefined ? {} : { aliasOf: def.aliasOf }),
    runsCode: def.sandbox !== undefined,
    publicParams: [...def.publicParams],
    params: z.toJSONSchema(def.params, { io: "input", unrepresentable: "any" }) as Record<string, unknown>,
    example: def.example,
  }));
  return catalogue;
}
