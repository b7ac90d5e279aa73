-- Trigram operators for the name search indexes below (a trusted extension: the database owner may create it).
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- DropIndex
DROP INDEX "node_labels_idx";

-- CreateIndex
CREATE INDEX "node_labels_idx" ON "node" USING GIN ("labels" jsonb_ops);

-- CreateIndex
CREATE INDEX "node_name_trgm_idx" ON "node" USING GIN ("name" gin_trgm_ops);

-- CreateIndex
CREATE INDEX "site_name_trgm_idx" ON "site" USING GIN ("name" gin_trgm_ops);
