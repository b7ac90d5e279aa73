-- CreateEnum
CREATE TYPE "probe_target" AS ENUM ('leaf', 'hub');

-- CreateTable
CREATE TABLE "network_probe" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "node_id" UUID NOT NULL,
    "target" "probe_target" NOT NULL,
    "ok" BOOLEAN NOT NULL,
    "bytes" INTEGER NOT NULL DEFAULT 0,
    "duration_ms" INTEGER NOT NULL DEFAULT 0,
    "code" TEXT,
    "error" TEXT,
    "via" TEXT,
    "requested_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "network_probe_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "network_probe_organization_id_node_id_created_at_idx" ON "network_probe"("organization_id", "node_id", "created_at");

-- AddForeignKey
ALTER TABLE "network_probe" ADD CONSTRAINT "network_probe_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "network_probe" ADD CONSTRAINT "network_probe_organization_id_node_id_fkey" FOREIGN KEY ("organization_id", "node_id") REFERENCES "node"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
