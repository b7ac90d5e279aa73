-- AlterTable
ALTER TABLE "app_instance" ADD COLUMN     "desired_revision" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "restarts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "status_seq" BIGINT NOT NULL DEFAULT 0;

-- AlterTable
ALTER TABLE "node" ADD COLUMN     "boot_id" TEXT,
ADD COLUMN     "metrics_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "public_key" TEXT,
ADD COLUMN     "revoked_at" TIMESTAMPTZ(3),
ADD COLUMN     "status_seq" BIGINT NOT NULL DEFAULT 0,
ADD COLUMN     "wire_id" BIGSERIAL NOT NULL;

-- AlterTable
ALTER TABLE "organization" ADD COLUMN     "wire_id" BIGSERIAL NOT NULL;

-- CreateTable
CREATE TABLE "desired_app_removal" (
    "organization_id" UUID NOT NULL,
    "node_id" UUID NOT NULL,
    "app_name" TEXT NOT NULL,
    "desired_revision" INTEGER NOT NULL,
    "removed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "desired_app_removal_pkey" PRIMARY KEY ("node_id","app_name")
);

-- CreateIndex
CREATE INDEX "desired_app_removal_node_id_desired_revision_idx" ON "desired_app_removal"("node_id", "desired_revision");

-- CreateIndex
CREATE INDEX "desired_app_removal_organization_id_idx" ON "desired_app_removal"("organization_id");

-- CreateIndex
CREATE INDEX "app_instance_node_id_desired_revision_idx" ON "app_instance"("node_id", "desired_revision");

-- CreateIndex
CREATE UNIQUE INDEX "node_wire_id_key" ON "node"("wire_id");

-- CreateIndex
CREATE UNIQUE INDEX "node_public_key_key" ON "node"("public_key");

-- CreateIndex
CREATE UNIQUE INDEX "organization_wire_id_key" ON "organization"("wire_id");

-- AddForeignKey
ALTER TABLE "desired_app_removal" ADD CONSTRAINT "desired_app_removal_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "desired_app_removal" ADD CONSTRAINT "desired_app_removal_organization_id_node_id_fkey" FOREIGN KEY ("organization_id", "node_id") REFERENCES "node"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written below: data for rows that existed before revisions.
-- (The migrate engine splits scripts at every semicolon, even inside comments or dollar-quoted
-- bodies, so plpgsql functions cannot be created here.)

-- Instances that existed before revisions: stamp them with revision 1 of their node, so a node
-- that reconnects with rev 0 receives them as its first delta.
UPDATE "node" SET "desired_revision" = "desired_revision" + 1
WHERE EXISTS (SELECT 1 FROM "app_instance" WHERE "app_instance"."node_id" = "node"."id");
UPDATE "app_instance" SET "desired_revision" = "node"."desired_revision"
FROM "node" WHERE "node"."id" = "app_instance"."node_id";
