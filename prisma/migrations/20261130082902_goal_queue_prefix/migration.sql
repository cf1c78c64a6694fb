-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "queue_prefix" TEXT NOT NULL DEFAULT 'loopsmith';
