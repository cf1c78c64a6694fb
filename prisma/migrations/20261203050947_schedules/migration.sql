-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "pinned" JSONB,
ADD COLUMN     "schedule_id" UUID;

-- CreateTable
CREATE TABLE "schedules" (
    "id" UUID NOT NULL,
    "tenant_id" UUID NOT NULL,
    "name" TEXT,
    "template" JSONB NOT NULL,
    "cron" TEXT,
    "timezone" TEXT,
    "every_ms" INTEGER,
    "overlap" TEXT NOT NULL DEFAULT 'skip',
    "skip_unchanged" BOOLEAN NOT NULL DEFAULT false,
    "paused" BOOLEAN NOT NULL DEFAULT false,
    "queue_prefix" TEXT NOT NULL DEFAULT 'loopsmith',
    "inputs_version" INTEGER NOT NULL DEFAULT 1,
    "ticked_inputs_version" INTEGER,
    "pin" JSONB,
    "last_tick" JSONB,
    "ticks" INTEGER NOT NULL DEFAULT 0,
    "skipped_ticks" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "schedules_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "schedule_files" (
    "id" UUID NOT NULL,
    "schedule_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "content" BYTEA NOT NULL,

    CONSTRAINT "schedule_files_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "schedules_tenant_id_created_at_idx" ON "schedules"("tenant_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "schedule_files_schedule_id_kind_name_key" ON "schedule_files"("schedule_id", "kind", "name");

-- CreateIndex
CREATE INDEX "goals_schedule_id_created_at_idx" ON "goals"("schedule_id", "created_at");

-- AddForeignKey
ALTER TABLE "goals" ADD CONSTRAINT "goals_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "schedules"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "schedules" ADD CONSTRAINT "schedules_tenant_id_fkey" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "schedule_files" ADD CONSTRAINT "schedule_files_schedule_id_fkey" FOREIGN KEY ("schedule_id") REFERENCES "schedules"("id") ON DELETE CASCADE ON UPDATE CASCADE;
