-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "language" TEXT NOT NULL DEFAULT 'python';

-- CreateTable
CREATE TABLE "goal_workspaces" (
    "goal_id" UUID NOT NULL,
    "archive" BYTEA NOT NULL,
    "files" JSONB NOT NULL,
    "locked" JSONB NOT NULL DEFAULT '[]',
    "sha256" TEXT NOT NULL,

    CONSTRAINT "goal_workspaces_pkey" PRIMARY KEY ("goal_id")
);

-- AddForeignKey
ALTER TABLE "goal_workspaces" ADD CONSTRAINT "goal_workspaces_goal_id_fkey" FOREIGN KEY ("goal_id") REFERENCES "goals"("id") ON DELETE CASCADE ON UPDATE CASCADE;
