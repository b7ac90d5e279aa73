import { artifactBucket, formatWireId } from "@edgefleet/agent-sdk/protocol";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Base64UrlPaddedCodec, type ObjectStore, Objm, StorageType } from "@nats-io/obj";
import type { NatsConnection } from "@nats-io/transport-node";
import { untilStreamLeads } from "../hub-replicas.js";

/**
 * Artifacts live in one JetStream object store bucket per organization, in the platform account
 * (the gateway's own connection, JetStream domain `hub`), named `ART_<organization wire id>`
 * (base-36, as in the organization's subjects). Object name = lowercase hex SHA-256 of the
 * content, so two versions with the same bytes share one object. Nodes have no JetStream access
 * to it: the gateway serves their chunk requests (contract shared with the node-side fetch).
 */
export function artifactBucketName(organizationWireId: bigint): string {
  // One definition of the name, shared with the chunk service (protocol/artifacts.ts).
  return artifactBucket(formatWireId(organizationWireId));
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** One organization's bucket. */
export interface OrganizationBucket {
  name: string;
  store: ObjectStore;
  /**
   * Purges an object's meta entry (its deletion marker included), which the object store API
   * never does: a discarded upload then leaves no trace at all.
   */
  purgeMeta(objectName: string): Promise<void>;
}

/**
 * Opens (creating on first use) organizations' buckets; one handle per bucket per connection.
 * Each bucket keeps as many copies as the hub's streams should (HubReplicas): a bucket made
 * before the hub became a cluster is scaled up when it is next opened.
 */
export class ArtifactBuckets {
  private readonly open = new Map<string, Promise<OrganizationBucket>>();
  private connection: NatsConnection | null = null;

  constructor(
    private readonly platform: () => NatsConnection | null,
    private readonly replicas: () => Promise<number>,
  ) {}

  /** The organization's bucket; throws when NATS is not connected. */
  async forOrganization(organizationWireId: bigint): Promise<OrganizationBucket> {
    const nc = this.platform();
    if (!nc) throw new ArtifactStoreUnavailableError("NATS is not connected");
    if (nc !== this.connection) {
      this.open.clear();
      this.connection = nc;
    }
    const name = artifactBucketName(organizationWireId);
    let store = this.open.get(name);
    if (!store) {
      store = (async () => {
        const replicas = await this.replicas();
        const objectStore = await new Objm(jetstream(nc, { domain: "hub" })).create(name, {
          description: "Edgefleet app artifacts of one organization, by SHA-256",
          storage: StorageType.File,
          replicas,
        });
        const jsm = await jetstreamManager(nc, { domain: "hub" });
        // create() opens an existing bucket as it is.
        if ((await objectStore.status()).replicas !== replicas) {
          await jsm.streams.update(`OBJ_${name}`, { num_replicas: replicas });
          await untilStreamLeads(jsm, `OBJ_${name}`, replicas);
        }
        return {
          name,
          store: objectStore,
          // The object store's own layout: stream OBJ_<bucket>, meta subjects $O.<bucket>.M.<base64url(name)>.
          async purgeMeta(objectName: string) {
            await jsm.streams.purge(`OBJ_${name}`, {
              filter: `$O.${name}.M.${Base64UrlPaddedCodec.encode(objectName)}`,
            });
          },
        };
      })();
      store.catch(() => this.open.delete(name));
      this.open.set(name, store);
    }
    return store;
  }
}

export class ArtifactStoreUnavailableError extends Error {
  override name = "ArtifactStoreUnavailableError";
}
