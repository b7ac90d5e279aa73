-- AlterTable: quiet hours of a site (alerts page, issue 12). Both set or both null: the one writer
-- (domain/quiet-hours.ts) sets them together. Not a database constraint: Prisma's schema engine
-- crashes ("RuntimeError: unreachable") diffing migrations that contain one.
ALTER TABLE "site" ADD COLUMN     "quiet_hours_end" TEXT,
ADD COLUMN     "quiet_hours_start" TEXT;

-- CreateIndex: the gateway's outbox retention cleanup.
CREATE INDEX "alert_notification_state_created_at_idx" ON "alert_notification"("state", "created_at");
