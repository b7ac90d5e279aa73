-- CreateEnum
CREATE TYPE "alert_severity" AS ENUM ('critical', 'warning', 'info');

-- CreateTable
CREATE TABLE "alert_policy" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "spec" JSONB NOT NULL,
    "selector" TEXT NOT NULL DEFAULT '',
    "site_id" UUID,
    "severity" "alert_severity" NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alert_policy_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_channel" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "min_severity" "alert_severity" NOT NULL DEFAULT 'info',
    "secret" TEXT,
    "previous_secret" TEXT,
    "previous_secret_until" TIMESTAMPTZ(3),
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "disabled_reason" TEXT,
    "consecutive_failures" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alert_channel_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_notification" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "alert_status" TEXT NOT NULL,
    "alert" JSONB NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'pending',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lease_until" TIMESTAMPTZ(3),
    "last_error" TEXT,
    "delivered_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_notification_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alert_delivery" (
    "id" BIGSERIAL NOT NULL,
    "organization_id" UUID NOT NULL,
    "notification_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "attempt" INTEGER NOT NULL,
    "ok" BOOLEAN NOT NULL,
    "status_code" INTEGER,
    "error" TEXT,
    "duration_ms" INTEGER NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "alert_delivery_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "alerting_state" (
    "organization_id" UUID NOT NULL,
    "applied_hash" TEXT,
    "applied_at" TIMESTAMPTZ(3),
    "revision" INTEGER NOT NULL DEFAULT 0,
    "applied_revision" INTEGER NOT NULL DEFAULT -1,
    "last_error" TEXT,
    "last_error_at" TIMESTAMPTZ(3),
    "checked_at" TIMESTAMPTZ(3),
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "alerting_state_pkey" PRIMARY KEY ("organization_id")
);

-- CreateIndex
CREATE INDEX "alert_policy_organization_id_site_id_idx" ON "alert_policy"("organization_id", "site_id");

-- CreateIndex
CREATE UNIQUE INDEX "alert_policy_organization_id_name_key" ON "alert_policy"("organization_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "alert_policy_organization_id_id_key" ON "alert_policy"("organization_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "alert_channel_organization_id_name_key" ON "alert_channel"("organization_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "alert_channel_organization_id_id_key" ON "alert_channel"("organization_id", "id");

-- CreateIndex
CREATE INDEX "alert_notification_state_next_attempt_at_idx" ON "alert_notification"("state", "next_attempt_at");

-- CreateIndex
CREATE UNIQUE INDEX "alert_notification_organization_id_channel_id_idempotency_k_key" ON "alert_notification"("organization_id", "channel_id", "idempotency_key");

-- CreateIndex
CREATE UNIQUE INDEX "alert_notification_organization_id_id_key" ON "alert_notification"("organization_id", "id");

-- CreateIndex
CREATE INDEX "alert_delivery_organization_id_at_idx" ON "alert_delivery"("organization_id", "at");

-- CreateIndex
CREATE INDEX "alert_delivery_notification_id_idx" ON "alert_delivery"("notification_id");

-- CreateIndex
CREATE INDEX "alert_delivery_channel_id_at_idx" ON "alert_delivery"("channel_id", "at");

-- AddForeignKey
ALTER TABLE "alert_policy" ADD CONSTRAINT "alert_policy_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_policy" ADD CONSTRAINT "alert_policy_organization_id_site_id_fkey" FOREIGN KEY ("organization_id", "site_id") REFERENCES "site"("organization_id", "id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_channel" ADD CONSTRAINT "alert_channel_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_notification" ADD CONSTRAINT "alert_notification_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_notification" ADD CONSTRAINT "alert_notification_organization_id_channel_id_fkey" FOREIGN KEY ("organization_id", "channel_id") REFERENCES "alert_channel"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_delivery" ADD CONSTRAINT "alert_delivery_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alert_delivery" ADD CONSTRAINT "alert_delivery_organization_id_notification_id_fkey" FOREIGN KEY ("organization_id", "notification_id") REFERENCES "alert_notification"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "alerting_state" ADD CONSTRAINT "alerting_state_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
