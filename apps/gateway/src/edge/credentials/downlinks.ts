import { type NodeAddress, platformDownSubject } from "@edgefleet/agent-sdk/protocol";
import { nodeAddress, type TenancySecrets } from "@edgefleet/nats-tenancy";

/** A node as the gateway addresses it: organization and node wire ids, the site it listens on. */
export interface DownlinkTarget {
  org: string;
  wid: string;
  /** `node.subject_site`: the site token of the subjects the node listens on; null: layout 1. */
  subjectSite: string | null;
}

/**
 * Where the gateway reaches a node: the downlink its credentials name, `ef.t.<org>.down.<site>.<wid>.
 * <token>`, the token derived from the tenancy's secret (issue 8 #12), or layout 1's
 * `ef.t.<org>.down.<wid>` for a node that still holds credentials from before site scoping. Every
 * replica derives the same subjects; nothing is stored.
 */
export class Downlinks {
  constructor(private readonly secrets: Pick<TenancySecrets, "tenantSigningSeed"> | null) {}

  address(node: DownlinkTarget): NodeAddress {
    if (node.subjectSite === null) return { wid: node.wid, site: null, down: null };
    if (!this.secrets)
      throw new Error(
        "a node of subject layout 2 needs the tenancy secrets (NATS_TENANCY_FILE) to be reached",
      );
    return nodeAddress(this.secrets, { org: node.org, site: node.subjectSite, wid: node.wid });
  }

  subject(node: DownlinkTarget): string {
    return platformDownSubject(node.org, this.address(node));
  }
}
