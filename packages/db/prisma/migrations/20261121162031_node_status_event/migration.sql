-- CreateTable
CREATE TABLE "node_status_event" (
    "id" BIGSERIAL NOT NULL,
    "organization_id" UUID NOT NULL,
    "node_id" UUID NOT NULL,
    "from_status" "node_status",
    "to_status" "node_status" NOT NULL,
    "reason" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "node_status_event_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "node_status_event_node_id_id_idx" ON "node_status_event"("node_id", "id");

-- CreateIndex
CREATE INDEX "node_status_event_organization_id_id_idx" ON "node_status_event"("organization_id", "id");

-- CreateIndex
CREATE INDEX "node_status_event_at_idx" ON "node_status_event"("at");

-- AddForeignKey
ALTER TABLE "node_status_event" ADD CONSTRAINT "node_status_event_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "node_status_event" ADD CONSTRAINT "node_status_event_organization_id_node_id_fkey" FOREIGN KEY ("organization_id", "node_id") REFERENCES "node"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
