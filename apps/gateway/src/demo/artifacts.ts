import { type Db, DEMO_ORGANIZATIONS, demoArtifact } from "@edgefleet/db";

/** The gateway's internal API, as the console's API calls it (GATEWAY_URL + shared secret). */
export interface InternalApi {
  url: string;
  token: string;
}

export interface DemoArtifactOutcome {
  organization: string;
  app: string;
  version: string;
  /** uploaded: bytes sent now; present: the store already held them and the version was ready. */
  outcome: "uploaded" | "present";
}

/**
 * Puts the demo versions' artifacts (@edgefleet/db's demoArtifact) into each organization's object
 * store through the gateway's internal upload endpoint, the console upload's own path, and marks
 * the versions ready. Idempotent: a ready version whose object is in the store is left alone; one
 * whose object went missing (a wiped NATS folder) gets its bytes again.
 */
export async function uploadDemoArtifacts(db: Db, api: InternalApi): Promise<DemoArtifactOutcome[]> {
  const outcomes: DemoArtifactOutcome[] = [];
  for (const demo of DEMO_ORGANIZATIONS) {
    const organization = await db.organization.findUnique({ where: { slug: demo.slug } });
    if (!organization) throw new Error(`no organization "${demo.slug}" (is the database seeded?)`);
    for (const app of demo.apps) {
      for (const label of app.versions) {
        const artifact = demoArtifact(demo.slug, app.name, label);
        const version = await db.appVersion.findFirst({
          where: {
            organizationId: organization.id,
            app: { name: app.name },
            version: label,
            artifactSource: "upload",
            artifactSha256: artifact.sha256,
          },
        });
        // Not the seed's version (a person replaced it): not ours to fill.
        if (!version || version.artifactState === "failed") continue;
        const base = `${api.url}/internal/orgs/${organization.id}/artifacts`;
        const headers = { authorization: `Bearer ${api.token}` };
        if (version.artifactState === "ready") {
          const found = await fetch(`${base}/${artifact.sha256}`, { headers });
          if (found.ok) {
            outcomes.push({ organization: demo.slug, app: app.name, version: label, outcome: "present" });
            continue;
          }
          if (found.status !== 404)
            throw new Error(`artifact lookup answered ${found.status}: ${await found.text()}`);
        }
        const stored = await fetch(base, {
          method: "PUT",
          headers: {
            ...headers,
            "content-type": "application/octet-stream",
            "x-artifact-sha256": artifact.sha256,
          },
          body: artifact.bytes,
        });
        if (!stored.ok) throw new Error(`artifact upload answered ${stored.status}: ${await stored.text()}`);
        const { sha256, size } = (await stored.json()) as { sha256: string; size: number };
        // Only a pending upload version moves, as for an upload through the console.
        await db.appVersion.updateMany({
          where: { id: version.id, artifactState: "pending", artifactSource: "upload" },
          data: {
            artifactState: "ready",
            artifactSha256: sha256,
            artifactSize: BigInt(size),
            artifactError: null,
          },
        });
        outcomes.push({ organization: demo.slug, app: app.name, version: label, outcome: "uploaded" });
      }
    }
  }
  return outcomes;
}
