-- CreateSchema
CREATE SCHEMA IF NOT EXISTS "public";

-- CreateEnum
CREATE TYPE "role" AS ENUM ('owner', 'admin', 'operator', 'viewer');

-- CreateEnum
CREATE TYPE "node_status" AS ENUM ('pending', 'online', 'offline', 'revoked');

-- CreateEnum
CREATE TYPE "app_instance_state" AS ENUM ('pending', 'pulling', 'starting', 'running', 'failed', 'stopped');

-- CreateEnum
CREATE TYPE "rollout_status" AS ENUM ('pending', 'running', 'paused', 'completed', 'failed', 'rolled_back', 'cancelled');

-- CreateEnum
CREATE TYPE "actor_type" AS ENUM ('user', 'api_key', 'system');

-- CreateTable
CREATE TABLE "organization" (
    "id" UUID NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "organization_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "user" (
    "id" UUID NOT NULL,
    "keycloak_subject" TEXT,
    "email" TEXT NOT NULL,
    "name" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "user_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "membership" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "role" "role" NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "membership_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "site" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "site_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "node" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "site_id" UUID,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "status" "node_status" NOT NULL DEFAULT 'pending',
    "agent_version" TEXT,
    "last_seen_at" TIMESTAMPTZ(3),
    "enrolled_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "desired_revision" INTEGER NOT NULL DEFAULT 0,
    "applied_revision" INTEGER NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "node_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "enrollment_token" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "description" TEXT,
    "token_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "max_uses" INTEGER,
    "uses" INTEGER NOT NULL DEFAULT 0,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "requires_approval" BOOLEAN NOT NULL DEFAULT false,
    "revoked_at" TIMESTAMPTZ(3),
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "enrollment_token_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "app_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app_version" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "app_id" UUID NOT NULL,
    "version" TEXT NOT NULL,
    "artifact_url" TEXT NOT NULL,
    "artifact_sha256" TEXT,
    "run_spec" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "app_version_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "app_instance" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "node_id" UUID NOT NULL,
    "app_id" UUID NOT NULL,
    "desired_version_id" UUID NOT NULL,
    "observed_version_id" UUID,
    "state" "app_instance_state" NOT NULL DEFAULT 'pending',
    "reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "app_instance_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "rollout" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "app_version_id" UUID NOT NULL,
    "selector" TEXT NOT NULL,
    "status" "rollout_status" NOT NULL DEFAULT 'pending',
    "strategy" JSONB NOT NULL DEFAULT '{}',
    "created_by" TEXT,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rollout_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "api_key" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "hash" TEXT NOT NULL,
    "role" "role" NOT NULL,
    "last_used_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "created_by" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "api_key_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "actor_type" "actor_type" NOT NULL,
    "actor_id" TEXT,
    "action" TEXT NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" TEXT,
    "before" JSONB,
    "after" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "organization_slug_key" ON "organization"("slug");

-- CreateIndex
CREATE UNIQUE INDEX "user_keycloak_subject_key" ON "user"("keycloak_subject");

-- CreateIndex
CREATE UNIQUE INDEX "user_email_key" ON "user"("email");

-- CreateIndex
CREATE INDEX "membership_user_id_idx" ON "membership"("user_id");

-- CreateIndex
CREATE UNIQUE INDEX "membership_organization_id_user_id_key" ON "membership"("organization_id", "user_id");

-- CreateIndex
CREATE UNIQUE INDEX "site_organization_id_name_key" ON "site"("organization_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "site_organization_id_id_key" ON "site"("organization_id", "id");

-- CreateIndex
CREATE INDEX "node_organization_id_status_name_idx" ON "node"("organization_id", "status", "name");

-- CreateIndex
CREATE INDEX "node_site_id_name_idx" ON "node"("site_id", "name");

-- CreateIndex
CREATE INDEX "node_labels_idx" ON "node" USING GIN ("labels" jsonb_path_ops);

-- CreateIndex
CREATE UNIQUE INDEX "node_organization_id_name_key" ON "node"("organization_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "node_organization_id_id_key" ON "node"("organization_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "enrollment_token_token_hash_key" ON "enrollment_token"("token_hash");

-- CreateIndex
CREATE INDEX "enrollment_token_organization_id_created_at_id_idx" ON "enrollment_token"("organization_id", "created_at", "id");

-- CreateIndex
CREATE UNIQUE INDEX "app_organization_id_name_key" ON "app"("organization_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "app_organization_id_id_key" ON "app"("organization_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "app_version_organization_id_app_id_version_key" ON "app_version"("organization_id", "app_id", "version");

-- CreateIndex
CREATE UNIQUE INDEX "app_version_organization_id_app_id_id_key" ON "app_version"("organization_id", "app_id", "id");

-- CreateIndex
CREATE UNIQUE INDEX "app_version_organization_id_id_key" ON "app_version"("organization_id", "id");

-- CreateIndex
CREATE INDEX "app_instance_organization_id_id_idx" ON "app_instance"("organization_id", "id");

-- CreateIndex
CREATE INDEX "app_instance_organization_id_app_id_state_idx" ON "app_instance"("organization_id", "app_id", "state");

-- CreateIndex
CREATE INDEX "app_instance_desired_version_id_state_idx" ON "app_instance"("desired_version_id", "state");

-- CreateIndex
CREATE INDEX "app_instance_observed_version_id_idx" ON "app_instance"("observed_version_id");

-- CreateIndex
CREATE UNIQUE INDEX "app_instance_node_id_app_id_key" ON "app_instance"("node_id", "app_id");

-- CreateIndex
CREATE INDEX "rollout_organization_id_created_at_id_idx" ON "rollout"("organization_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "rollout_organization_id_status_idx" ON "rollout"("organization_id", "status");

-- CreateIndex
CREATE INDEX "rollout_app_version_id_idx" ON "rollout"("app_version_id");

-- CreateIndex
CREATE UNIQUE INDEX "api_key_hash_key" ON "api_key"("hash");

-- CreateIndex
CREATE UNIQUE INDEX "api_key_organization_id_name_key" ON "api_key"("organization_id", "name");

-- CreateIndex
CREATE INDEX "audit_log_organization_id_created_at_id_idx" ON "audit_log"("organization_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "audit_log_organization_id_target_type_target_id_idx" ON "audit_log"("organization_id", "target_type", "target_id");

-- AddForeignKey
ALTER TABLE "membership" ADD CONSTRAINT "membership_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "membership" ADD CONSTRAINT "membership_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "user"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "site" ADD CONSTRAINT "site_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "node" ADD CONSTRAINT "node_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "node" ADD CONSTRAINT "node_organization_id_site_id_fkey" FOREIGN KEY ("organization_id", "site_id") REFERENCES "site"("organization_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "enrollment_token" ADD CONSTRAINT "enrollment_token_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app" ADD CONSTRAINT "app_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_version" ADD CONSTRAINT "app_version_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_version" ADD CONSTRAINT "app_version_organization_id_app_id_fkey" FOREIGN KEY ("organization_id", "app_id") REFERENCES "app"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_instance" ADD CONSTRAINT "app_instance_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_instance" ADD CONSTRAINT "app_instance_organization_id_node_id_fkey" FOREIGN KEY ("organization_id", "node_id") REFERENCES "node"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_instance" ADD CONSTRAINT "app_instance_organization_id_app_id_fkey" FOREIGN KEY ("organization_id", "app_id") REFERENCES "app"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_instance" ADD CONSTRAINT "app_instance_organization_id_app_id_desired_version_id_fkey" FOREIGN KEY ("organization_id", "app_id", "desired_version_id") REFERENCES "app_version"("organization_id", "app_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "app_instance" ADD CONSTRAINT "app_instance_organization_id_app_id_observed_version_id_fkey" FOREIGN KEY ("organization_id", "app_id", "observed_version_id") REFERENCES "app_version"("organization_id", "app_id", "id") ON DELETE NO ACTION ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rollout" ADD CONSTRAINT "rollout_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "rollout" ADD CONSTRAINT "rollout_organization_id_app_version_id_fkey" FOREIGN KEY ("organization_id", "app_version_id") REFERENCES "app_version"("organization_id", "id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "api_key" ADD CONSTRAINT "api_key_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "audit_log" ADD CONSTRAINT "audit_log_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organization"("id") ON DELETE CASCADE ON UPDATE CASCADE;

