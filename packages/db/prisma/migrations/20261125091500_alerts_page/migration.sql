-- AlterTable: quiet hours of a site (alerts page, issue 12), both set or both null
ALTER TABLE "site" ADD COLUMN     "quiet_hours_end" TEXT,
ADD COLUMN     "quiet_hours_start" TEXT;
ALTER TABLE "site" ADD CONSTRAINT "site_quiet_hours_both" CHECK (("quiet_hours_start" IS NULL) = ("quiet_hours_end" IS NULL));

-- CreateIndex: the gateway's outbox retention cleanup.
CREATE INDEX "alert_notification_state_created_at_idx" ON "alert_notification"("state", "created_at");
