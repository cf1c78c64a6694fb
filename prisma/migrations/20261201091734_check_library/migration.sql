-- AlterTable
ALTER TABLE "check_results" ADD COLUMN     "feedback" TEXT NOT NULL DEFAULT '',
ADD COLUMN     "findings" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "hidden" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "deliverable" TEXT DEFAULT 'result.json';

-- CreateTable
CREATE TABLE "goal_checker_files" (
    "id" UUID NOT NULL,
    "goal_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "content" BYTEA NOT NULL,

    CONSTRAINT "goal_checker_files_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "check_runs" (
    "id" UUID NOT NULL,
    "goal_id" UUID NOT NULL,
    "execution_id" UUID,
    "attempt" INTEGER NOT NULL,
    "check_index" INTEGER NOT NULL,
    "check_id" TEXT NOT NULL,
    "evidence" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "check_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "goal_checker_files_goal_id_name_key" ON "goal_checker_files"("goal_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "check_runs_goal_id_attempt_check_index_key" ON "check_runs"("goal_id", "attempt", "check_index");

-- AddForeignKey
ALTER TABLE "goal_checker_files" ADD CONSTRAINT "goal_checker_files_goal_id_fkey" FOREIGN KEY ("goal_id") REFERENCES "goals"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "check_runs" ADD CONSTRAINT "check_runs_goal_id_fkey" FOREIGN KEY ("goal_id") REFERENCES "goals"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "check_runs" ADD CONSTRAINT "check_runs_execution_id_fkey" FOREIGN KEY ("execution_id") REFERENCES "executions"("id") ON DELETE SET NULL ON UPDATE CASCADE;
