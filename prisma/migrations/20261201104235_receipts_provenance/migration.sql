-- AlterTable
ALTER TABLE "executions" ADD COLUMN     "image_digest" TEXT,
ADD COLUMN     "limits" JSONB,
ADD COLUMN     "script_sha256" TEXT;

-- AlterTable
ALTER TABLE "goals" ADD COLUMN     "loopsmith_version" TEXT,
ADD COLUMN     "receipt" TEXT;

-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "prompt_sha256" TEXT,
ADD COLUMN     "system_sha256" TEXT;

-- AlterTable
ALTER TABLE "transitions" ADD COLUMN     "hash" TEXT;

-- CreateTable
CREATE TABLE "receipt_keys" (
    "key_id" TEXT NOT NULL,
    "alg" TEXT NOT NULL DEFAULT 'Ed25519',
    "public_key_pem" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "receipt_keys_pkey" PRIMARY KEY ("key_id")
);
