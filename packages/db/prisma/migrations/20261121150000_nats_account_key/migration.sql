-- AlterTable
ALTER TABLE "organization" ADD COLUMN     "nats_account_key" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "organization_nats_account_key_key" ON "organization"("nats_account_key");
