-- CreateTable
CREATE TABLE "site_leaf_credential" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "site_id" UUID NOT NULL,
    "public_key" TEXT NOT NULL,
    "issued_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "revoked_at" TIMESTAMPTZ(3),

    CONSTRAINT "site_leaf_credential_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "site_leaf_credential_public_key_key" ON "site_leaf_credential"("public_key");

-- CreateIndex
CREATE INDEX "site_leaf_credential_organization_id_revoked_at_expires_at_idx" ON "site_leaf_credential"("organization_id", "revoked_at", "expires_at");

-- CreateIndex
CREATE INDEX "site_leaf_credential_site_id_idx" ON "site_leaf_credential"("site_id");

-- AddForeignKey
ALTER TABLE "site_leaf_credential" ADD CONSTRAINT "site_leaf_credential_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
