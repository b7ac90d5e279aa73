import type { Db } from "@edgefleet/db";
import { type ArtifactBuckets, SHA256_HEX } from "./bucket.js";
import { fetchArtifactUrl } from "./fetch-url.js";
import { ArtifactTooLargeError, artifactInfo, type StoredArtifact, storeArtifact } from "./store-artifact.js";

export interface ArtifactLimits {
  /** Largest artifact accepted (GATEWAY_ARTIFACT_MAX_BYTES). */
  maxBytes: number;
  /** Imports may reach loopback/private addresses (GATEWAY_ARTIFACT_IMPORT_ALLOW_PRIVATE). */
  allowPrivateAddresses: boolean;
}

export class OrganizationNotFoundError extends Error {
  override name = "OrganizationNotFoundError";
}

/**
 * What the gateway does with artifacts, per organization: store an uploaded body, import an
 * HTTPS URL, look one up. Each organization only ever reaches its own bucket: the bucket is
 * chosen from the organization id the caller is acting for, never from the content or a name.
 */
export class ArtifactService {
  constructor(
    private readonly db: Db,
    private readonly buckets: ArtifactBuckets,
    readonly limits: ArtifactLimits,
  ) {}

  private async bucketOf(organizationId: string) {
    const organization = await this.db.organization.findUnique({
      where: { id: organizationId },
      select: { wireId: true },
    });
    if (!organization) throw new OrganizationNotFoundError(`organization ${organizationId} not found`);
    return this.buckets.forOrganization(organization.wireId);
  }

  async upload(
    organizationId: string,
    body: AsyncIterable<Uint8Array>,
    declared: { sha256?: string | undefined; size?: number | undefined },
  ): Promise<StoredArtifact> {
    if (declared.size !== undefined && declared.size > this.limits.maxBytes) {
      throw new ArtifactTooLargeError(this.limits.maxBytes);
    }
    const bucket = await this.bucketOf(organizationId);
    return storeArtifact(bucket, body, {
      maxBytes: this.limits.maxBytes,
      expectedSha256: declared.sha256,
      expectedSize: declared.size,
    });
  }

  async importUrl(organizationId: string, url: string, sha256?: string): Promise<StoredArtifact> {
    const bucket = await this.bucketOf(organizationId);
    const { body, contentLength } = await fetchArtifactUrl(url, {
      maxBytes: this.limits.maxBytes,
      allowPrivateAddresses: this.limits.allowPrivateAddresses,
    });
    try {
      return await storeArtifact(bucket, body, {
        maxBytes: this.limits.maxBytes,
        expectedSha256: sha256,
        expectedSize: contentLength,
      });
    } finally {
      body.destroy();
    }
  }

  async info(organizationId: string, sha256: string): Promise<{ sha256: string; size: number } | null> {
    if (!SHA256_HEX.test(sha256)) return null;
    const found = await artifactInfo(await this.bucketOf(organizationId), sha256);
    return found && { sha256, size: found.size };
  }
}
