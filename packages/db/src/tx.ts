import type { Prisma } from "./generated/client";

/** The client inside a transaction: what every write that must land with others takes. */
export type Tx = Prisma.TransactionClient;
