-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "feedback" TEXT NOT NULL DEFAULT 'full',
ADD COLUMN     "self_test" JSONB;
