-- AlterTable
ALTER TABLE "receipt_keys" ADD COLUMN     "not_after" TIMESTAMPTZ(3),
ADD COLUMN     "revoked_at" TIMESTAMPTZ(3);
