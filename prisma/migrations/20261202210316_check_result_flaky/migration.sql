-- AlterTable
ALTER TABLE "check_results" ADD COLUMN     "flaky" JSONB;
