import { EF_ARTIFACT_SCHEME } from "@edgefleet/agent-sdk/protocol";
import { type Db, Prisma } from "@edgefleet/db";
import type { EdgeNode } from "../node-directory.js";

export interface ArtifactAccessOptions {
  /** How long a yes is reused (a node pulls one artifact in many chunks). */
  allowedTtlMs?: number;
  /** How long a no is reused (short: the desired state may have just changed). */
  deniedTtlMs?: number;
  maxEntries?: number;
}

/**
 * May this node fetch this object? Only if a version it is desired to run, or reported running
 * (observed), has it as its artifact — an `ef-artifact:<sha256>` URL, or the SHA-256 of an HTTPS
 * URL imported into the store (artifactObjectName in the protocol). The node comes from the
 * subject, and the versions from its own organization's instances: a node of another
 * organization, or one not meant to run the version, is refused whatever it asks for.
 */
export class ArtifactAccess {
  private readonly cache = new Map<string, { allowed: boolean; expiresAt: number }>();
  private readonly allowedTtlMs: number;
  private readonly deniedTtlMs: number;
  private readonly maxEntries: number;

  constructor(
    private readonly db: Db,
    options: ArtifactAccessOptions = {},
  ) {
    this.allowedTtlMs = options.allowedTtlMs ?? 60_000;
    this.deniedTtlMs = options.deniedTtlMs ?? 2_000;
    this.maxEntries = options.maxEntries ?? 100_000;
  }

  async allowed(node: EdgeNode, obj: string): Promise<boolean> {
    const key = `${node.id}/${obj}`;
    const cached = this.cache.get(key);
    if (cached && cached.expiresAt > Date.now()) return cached.allowed;
    const [row] = await this.db.$queryRaw<Array<{ allowed: boolean }>>(Prisma.sql`
      SELECT EXISTS (
        SELECT 1
        FROM app_instance i
        JOIN app_version v
          ON v.organization_id = i.organization_id
         AND v.id IN (i.desired_version_id, i.observed_version_id)
        WHERE i.node_id = ${node.id}::uuid
          AND i.organization_id = ${node.organizationId}::uuid
          AND (v.artifact_url = ${EF_ARTIFACT_SCHEME + obj}
               -- uploaded (no URL) or imported from HTTPS: named by its SHA-256
               OR ((v.artifact_url IS NULL OR v.artifact_url NOT LIKE ${`${EF_ARTIFACT_SCHEME}%`})
                   AND lower(v.artifact_sha256) = ${obj}))
      ) AS allowed`);
    const allowed = row?.allowed === true;
    if (this.cache.size >= this.maxEntries) {
      const oldest = this.cache.keys().next();
      if (!oldest.done) this.cache.delete(oldest.value);
    }
    this.cache.set(key, {
      allowed,
      expiresAt: Date.now() + (allowed ? this.allowedTtlMs : this.deniedTtlMs),
    });
    return allowed;
  }
}
