-- AlterTable
ALTER TABLE "enrollment_token" ADD COLUMN     "site_id" UUID;

-- CreateIndex
CREATE INDEX "enrollment_token_site_id_idx" ON "enrollment_token"("site_id");

-- AddForeignKey
ALTER TABLE "enrollment_token" ADD CONSTRAINT "enrollment_token_organization_id_site_id_fkey" FOREIGN KEY ("organization_id", "site_id") REFERENCES "site"("organization_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;
