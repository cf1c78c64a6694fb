-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "sandbox_runtime" TEXT;
