import type { Prisma, PrismaClient } from "./generated/client";

/** The client inside a transaction: what every write that must land with others takes. */
export type Tx = Prisma.TransactionClient;

/**
 * Reads that must agree with each other in one snapshot. Prisma reads an `include` with a query of its
 * own, so a row and its related rows read outside a transaction can straddle another transaction's
 * commit (a delivery read with 0 attempts, its log read a moment later with attempt 1 in it).
 */
export function readSnapshot<T>(prisma: PrismaClient, read: (tx: Tx) => Promise<T>): Promise<T> {
  return prisma.$transaction(read, { isolationLevel: "RepeatableRead" });
}
