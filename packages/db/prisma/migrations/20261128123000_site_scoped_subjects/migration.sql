-- AlterTable
ALTER TABLE "node" ADD COLUMN     "former_sites" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "subject_site" TEXT;

-- AlterTable
ALTER TABLE "site" ADD COLUMN     "wire_id" BIGSERIAL NOT NULL;

-- CreateIndex
CREATE UNIQUE INDEX "site_wire_id_key" ON "site"("wire_id");
