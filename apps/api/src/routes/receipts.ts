// Receipts of verified goals and the public keys that verify them. The API only reads both: runners sign
// receipts and publish their public keys, so no private key is ever within the API's reach.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { LoopSmithError } from "@loopsmith/core";
import { goalsOf, type PrismaClient } from "@loopsmith/db";
import type { Receipt } from "@loopsmith/receipts";
import { errorBody, goalIdParams, receiptKeysView, receiptView } from "@loopsmith/schemas";
import { tenantOf } from "../auth";

export const RECEIPT_KEYS_PATH = "/.well-known/loopsmith-receipt-keys";

export const receiptRoutes: FastifyPluginAsyncZod<{ deps: () => { prisma: PrismaClient } }> = async (app, opts) => {
  app.get(
    "/goals/:id/receipt",
    {
      schema: {
        operationId: "getReceipt",
        summary: "The signed receipt of a verified goal",
        description:
          "Ed25519 over the canonical JSON (sorted keys, no whitespace) of every field but `signature`; the key is `key_id` in " +
          `${RECEIPT_KEYS_PATH}. Check it offline with \`npm run receipt:verify\`. 409 LS_ERR_GOAL_STATE until the goal is verified.`,
        tags: ["goals"],
        params: goalIdParams,
        response: { 200: receiptView, 401: errorBody, 404: errorBody, 409: errorBody, 429: errorBody },
      },
    },
    async (req) => {
      const goal = await goalsOf(opts.deps().prisma, tenantOf(req).id).find(req.params.id);
      if (!goal) throw new LoopSmithError("LS_ERR_NOT_FOUND", `No goal ${req.params.id}.`);
      if (goal.state !== "verified")
        throw new LoopSmithError("LS_ERR_GOAL_STATE", `Goal ${goal.id} is ${goal.state}: only a verified goal has a receipt.`, { state: goal.state });
      // Verified by a runner from before receipts: there is none, and none can be made afterwards honestly.
      if (goal.receipt === null) throw new LoopSmithError("LS_ERR_NOT_FOUND", `Goal ${goal.id} was verified without a receipt.`);
      return JSON.parse(goal.receipt) as Receipt;
    },
  );

  app.get(
    RECEIPT_KEYS_PATH,
    {
      config: { access: "public" },
      schema: {
        operationId: "getReceiptKeys",
        summary: "The public keys that sign receipts",
        description:
          "No authentication. Keys are never removed when a new one is introduced, so receipts signed before a rotation still verify. " +
          "Each key signs validly from `not_before` (its creation) to `not_after` (null: no expiry), and never at or after `revoked_at` (null: not revoked); " +
          "a verifier refuses a receipt whose `issued_at` falls outside.",
        tags: ["goals"],
        security: [],
        response: { 200: receiptKeysView },
      },
    },
    async () => {
      const rows = await opts.deps().prisma.receiptKey.findMany({ orderBy: [{ createdAt: "asc" }, { keyId: "asc" }] });
      return {
        keys: rows.map((k) => ({
          key_id: k.keyId,
          alg: "Ed25519" as const,
          public_key_pem: k.publicKeyPem,
          created_at: k.createdAt.toISOString(),
          not_before: k.createdAt.toISOString(),
          not_after: k.notAfter?.toISOString() ?? null,
          revoked_at: k.revokedAt?.toISOString() ?? null,
        })),
      };
    },
  );
};
