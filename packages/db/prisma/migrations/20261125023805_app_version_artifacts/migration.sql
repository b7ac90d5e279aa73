-- CreateEnum
CREATE TYPE "artifact_source" AS ENUM ('upload', 'url');

-- CreateEnum
CREATE TYPE "artifact_state" AS ENUM ('pending', 'ready', 'failed');

-- AlterTable
ALTER TABLE "app_version" ADD COLUMN     "artifact_error" TEXT,
ADD COLUMN     "artifact_size" BIGINT,
ADD COLUMN     "artifact_source" "artifact_source" NOT NULL DEFAULT 'url',
ADD COLUMN     "artifact_state" "artifact_state" NOT NULL DEFAULT 'pending',
ADD COLUMN     "created_by" TEXT,
ADD COLUMN     "import_attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "import_lease_until" TIMESTAMPTZ(3),
ADD COLUMN     "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ALTER COLUMN "artifact_url" DROP NOT NULL;

-- CreateIndex
CREATE INDEX "app_version_artifact_state_artifact_source_idx" ON "app_version"("artifact_state", "artifact_source");

