-- AlterTable
ALTER TABLE "alert_channel" ADD COLUMN     "user_id" UUID;

-- AlterTable
ALTER TABLE "membership" ADD COLUMN     "email_severities" "alert_severity"[] DEFAULT ARRAY[]::"alert_severity"[],
ADD COLUMN     "push_severities" "alert_severity"[] DEFAULT ARRAY['critical', 'warning']::"alert_severity"[];

-- CreateTable
CREATE TABLE "push_subscription" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "channel_id" UUID NOT NULL,
    "endpoint" TEXT NOT NULL,
    "p256dh" TEXT NOT NULL,
    "auth" TEXT NOT NULL,
    "user_agent" TEXT,
    "last_success_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "push_subscription_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "push_action_use" (
    "token_id" TEXT NOT NULL,
    "organization_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "action" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "push_action_use_pkey" PRIMARY KEY ("token_id")
);

-- CreateIndex
CREATE INDEX "push_subscription_user_id_idx" ON "push_subscription"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "push_subscription_organization_id_endpoint_key" ON "push_subscription"("organization_id", "endpoint");

-- CreateIndex
CREATE UNIQUE INDEX "push_subscription_organization_id_id_key" ON "push_subscription"("organization_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "push_subscription_organization_id_channel_id_key" ON "push_subscription"("organization_id", "channel_id");

-- CreateIndex
CREATE INDEX "push_action_use_organization_id_used_at_idx" ON "push_action_use"("organization_id", "used_at");

-- CreateIndex
CREATE INDEX "push_action_use_expires_at_idx" ON "push_action_use"("expires_at");

-- CreateIndex
CREATE INDEX "alert_channel_organization_id_user_id_idx" ON "alert_channel"("organization_id", "user_id");

-- AddForeignKey
ALTER TABLE "alert_channel" ADD CONSTRAINT "alert_channel_organization_id_user_id_fkey" FOREIGN KEY ("organization_id", "user_id") REFERENCES "membership"("organization_id", "user_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "push_subscription" ADD CONSTRAINT "push_subscription_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "push_subscription" ADD CONSTRAINT "push_subscription_organization_id_user_id_fkey" FOREIGN KEY ("organization_id", "user_id") REFERENCES "membership"("organization_id", "user_id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "push_subscription" ADD CONSTRAINT "push_subscription_organization_id_channel_id_fkey" FOREIGN KEY ("organization_id", "channel_id") REFERENCES "alert_channel"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "push_action_use" ADD CONSTRAINT "push_action_use_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;
