-- AlterTable
ALTER TABLE "node" ADD COLUMN     "metrics_seen" BIGINT NOT NULL DEFAULT 0;

-- Nodes that reported before: every sequence below metrics_seq counts as written (what the single
-- high-water mark meant until now), so no old report is written to Mimir a second time.
UPDATE "node" SET "metrics_seen" = 9223372036854775807 WHERE "metrics_seq" > 0;
