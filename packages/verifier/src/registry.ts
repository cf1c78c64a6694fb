import { noNullRegion, schemaOk } from "./checks/aliases";
import { artifactExists } from "./checks/artifact-exists";
import { exitsClean } from "./checks/exits-clean";
import { jsonParses } from "./checks/json-parses";
import { jsonSchema } from "./checks/json-schema";
import { noBlankKeys } from "./checks/no-blank-keys";
import { reconcilesTotal } from "./checks/reconciles-total";
import { topIsArgmax } from "./checks/top-is-argmax";
import type { CheckDef } from "./types";

/**
 * Every deterministic check by id. A Map rather than an object literal so that ids such as
 * "constructor" or "__proto__" are simply unknown instead of resolving through the prototype.
 */
export const checkRegistry: ReadonlyMap<string, CheckDef> = new Map<string, CheckDef>([
  ["exits_clean", exitsClean],
  ["artifact_exists", artifactExists],
  ["json_parses", jsonParses],
  ["json_schema", jsonSchema],
  ["no_blank_keys", noBlankKeys],
  ["reconciles_total", reconcilesTotal],
  ["top_is_argmax", topIsArgmax],
  ["schema_ok", schemaOk],
  ["no_null_region", noNullRegion],
]);

export function knownCheckIds(): string[] {
  return [...checkRegistry.keys()];
}

/** The check library, for docs and for prompts that tell the planner which checks exist. */
export function listChecks(): { id: string; description: string; aliasOf?: string }[] {
  return [...checkRegistry].map(([id, def]) =>
    def.aliasOf === undefined ? { id, description: def.description } : { id, description: def.description, aliasOf: def.aliasOf },
  );
}
