-- AlterTable
ALTER TABLE "app_instance" ADD COLUMN     "pulled_bytes" BIGINT,
ADD COLUMN     "state_changed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "target_version_id" UUID,
ADD COLUMN     "total_bytes" BIGINT;

-- AlterTable
ALTER TABLE "rollout" ADD COLUMN     "app_id" UUID,
ADD COLUMN     "lease_owner" TEXT,
ADD COLUMN     "lease_until" TIMESTAMPTZ(3),
ADD COLUMN     "site_ids" UUID[] DEFAULT ARRAY[]::UUID[],
ADD COLUMN     "state" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "state_version" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "status_reason" TEXT,
ADD COLUMN     "waits" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "wake_at" TIMESTAMPTZ(3);

-- Existing rollouts (seeded) take their app from their version.
UPDATE "rollout" r SET "app_id" = v."app_id" FROM "app_version" v WHERE v."id" = r."app_version_id";
ALTER TABLE "rollout" ALTER COLUMN "app_id" SET NOT NULL;

-- AlterTable
ALTER TABLE "site" ADD COLUMN     "time_zone" TEXT;

-- CreateTable
CREATE TABLE "rollout_node" (
    "rollout_id" UUID NOT NULL,
    "node_id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "plan_batch" INTEGER,
    "plan_position" INTEGER,
    "dispatched_at" TIMESTAMPTZ(3),
    "dispatch_batch" INTEGER,
    "catch_up" BOOLEAN NOT NULL DEFAULT false,
    "dispatch_order" INTEGER,
    "rollback_order" INTEGER,
    "from_version_id" UUID,
    "to_version_id" UUID,
    "rollback_batch" INTEGER,
    "rollback_position" INTEGER,
    "rollback_to_version_id" UUID,
    "rollback_at" TIMESTAMPTZ(3),

    CONSTRAINT "rollout_node_pkey" PRIMARY KEY ("rollout_id","node_id")
);

-- CreateTable
CREATE TABLE "rollout_event" (
    "id" BIGSERIAL NOT NULL,
    "organization_id" UUID NOT NULL,
    "rollout_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "message" TEXT NOT NULL,
    "actor_type" "actor_type" NOT NULL,
    "actor_id" TEXT,
    "data" JSONB,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rollout_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "rollout_node_organization_id_idx" ON "rollout_node"("organization_id");

-- CreateIndex
CREATE INDEX "rollout_node_node_id_idx" ON "rollout_node"("node_id");

-- CreateIndex
CREATE INDEX "rollout_event_rollout_id_id_idx" ON "rollout_event"("rollout_id", "id");

-- CreateIndex
CREATE INDEX "rollout_event_organization_id_idx" ON "rollout_event"("organization_id");

-- CreateIndex
CREATE INDEX "rollout_organization_id_app_id_created_at_idx" ON "rollout"("organization_id", "app_id", "created_at");

-- CreateIndex
CREATE INDEX "rollout_status_idx" ON "rollout"("status");

-- CreateIndex
CREATE UNIQUE INDEX "rollout_organization_id_id_key" ON "rollout"("organization_id", "id");

-- AddForeignKey
ALTER TABLE "rollout" ADD CONSTRAINT "rollout_organization_id_app_id_fkey" FOREIGN KEY ("organization_id", "app_id") REFERENCES "app"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rollout_node" ADD CONSTRAINT "rollout_node_organization_id_rollout_id_fkey" FOREIGN KEY ("organization_id", "rollout_id") REFERENCES "rollout"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rollout_event" ADD CONSTRAINT "rollout_event_organization_id_rollout_id_fkey" FOREIGN KEY ("organization_id", "rollout_id") REFERENCES "rollout"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
