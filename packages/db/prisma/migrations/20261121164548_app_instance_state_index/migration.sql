-- CreateIndex
CREATE INDEX "app_instance_organization_id_state_node_id_idx" ON "app_instance"("organization_id", "state", "node_id");
