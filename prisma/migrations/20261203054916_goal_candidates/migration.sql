-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "candidates" INTEGER NOT NULL DEFAULT 1;
