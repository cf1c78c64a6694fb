-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "checks" JSONB NOT NULL DEFAULT '[]';
