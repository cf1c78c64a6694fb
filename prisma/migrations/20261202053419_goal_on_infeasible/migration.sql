-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "on_infeasible" TEXT NOT NULL DEFAULT 'fail';
