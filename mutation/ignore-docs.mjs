// A Stryker ignorer (`ignorers: ["docs"]`): the arguments of zod's `.describe(...)` and `.meta(...)` are
// documentation (the OpenAPI document and the check catalogue print them), not behaviour; a mutant that
// empties one changes what a reader sees, never what is accepted. Only the arguments are skipped, so
// `z.string().max(5).describe("x")` still has its `.max(5)` mutated.
import { declareValuePlugin, PluginKind } from "@stryker-mutator/api/plugin";

const DOC_METHODS = new Set(["describe", "meta"]);

export const strykerPlugins = [
  declareValuePlugin(PluginKind.Ignore, "docs", {
    shouldIgnore(path) {
      if (path.listKey !== "arguments") return undefined;
      const call = path.parent;
      if (call?.type !== "CallExpression" || call.callee.type !== "MemberExpression") return undefined;
      const name = call.callee.property;
      return name.type === "Identifier" && DOC_METHODS.has(name.name) ? "documentation: a .describe() or .meta() argument" : undefined;
    },
  }),
];
