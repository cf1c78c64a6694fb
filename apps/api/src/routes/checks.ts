import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { checkCatalogue, errorBody } from "@loopsmith/schemas";
import { listChecks } from "@loopsmith/verifier";

/** The check library: what POST /goals accepts in `checks`, built from the same registry the runner uses. */
export const checkRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    "/checks",
    {
      schema: {
        operationId: "listChecks",
        summary: "The check catalogue",
        description: "Every deterministic check with a description, its params as JSON Schema, which params a model may see when the check is hidden, and an example.",
        tags: ["checks"],
        response: { 200: checkCatalogue, 401: errorBody, 429: errorBody },
      },
    },
    async () => ({ checks: listChecks() }),
  );
};
