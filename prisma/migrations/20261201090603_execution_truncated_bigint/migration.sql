-- AlterTable
ALTER TABLE "executions" ALTER COLUMN "stdout_truncated" SET DATA TYPE BIGINT,
ALTER COLUMN "stderr_truncated" SET DATA TYPE BIGINT;
