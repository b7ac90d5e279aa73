-- CreateTable
CREATE TABLE "rollout_site_uplink" (
    "organization_id" UUID NOT NULL,
    "rollout_id" UUID NOT NULL,
    "site_id" UUID NOT NULL,
    "leaf_name" TEXT NOT NULL,
    "linked" BOOLEAN NOT NULL,
    "bytes" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "rate_bps" DOUBLE PRECISION,
    "peak_bps" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "readings" INTEGER NOT NULL DEFAULT 0,
    "counters" JSONB NOT NULL DEFAULT '{}',
    "read_at" TIMESTAMPTZ(3),
    "history" JSONB NOT NULL DEFAULT '[]',
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rollout_site_uplink_pkey" PRIMARY KEY ("rollout_id","site_id")
);

-- CreateIndex
CREATE INDEX "rollout_site_uplink_organization_id_idx" ON "rollout_site_uplink"("organization_id");

-- AddForeignKey
ALTER TABLE "rollout_site_uplink" ADD CONSTRAINT "rollout_site_uplink_organization_id_rollout_id_fkey" FOREIGN KEY ("organization_id", "rollout_id") REFERENCES "rollout"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rollout_site_uplink" ADD CONSTRAINT "rollout_site_uplink_organization_id_site_id_fkey" FOREIGN KEY ("organization_id", "site_id") REFERENCES "site"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
