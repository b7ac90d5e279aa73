import type { TenancySecrets } from "@edgefleet/nats-tenancy";

/**
 * Leaf links bound to organization accounts on the hub. A site leaf also links the system account
 * (its account updates) and the enroll account (issue 8 #13): a test that waits for "the site's
 * link" must not be satisfied by those coming up first.
 */
export async function organizationLeafLinks(hubMonitorUrl: string, secrets: TenancySecrets): Promise<number> {
  const leafz = (await (await fetch(`${hubMonitorUrl}/leafz`)).json()) as {
    leafs?: Array<{ account: string }>;
  };
  return (leafz.leafs ?? []).filter(
    (link) => link.account !== secrets.system.publicKey && link.account !== secrets.enroll.publicKey,
  ).length;
}
