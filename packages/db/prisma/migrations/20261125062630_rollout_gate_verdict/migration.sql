-- CreateTable
CREATE TABLE "rollout_gate_verdict" (
    "id" BIGSERIAL NOT NULL,
    "organization_id" UUID NOT NULL,
    "rollout_id" UUID NOT NULL,
    "batch" INTEGER NOT NULL,
    "outcome" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "window_end" TIMESTAMPTZ(3) NOT NULL,
    "gates" JSONB NOT NULL,
    "baseline" JSONB NOT NULL,
    "evaluated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "rollout_gate_verdict_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "rollout_gate_verdict_organization_id_idx" ON "rollout_gate_verdict"("organization_id");

-- CreateIndex
CREATE UNIQUE INDEX "rollout_gate_verdict_rollout_id_batch_key" ON "rollout_gate_verdict"("rollout_id", "batch");

-- AddForeignKey
ALTER TABLE "rollout_gate_verdict" ADD CONSTRAINT "rollout_gate_verdict_organization_id_rollout_id_fkey" FOREIGN KEY ("organization_id", "rollout_id") REFERENCES "rollout"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;
