import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { freePort, LinkCutter } from "@edgefleet/agent-sdk/testing";
import { writeLeafBundle } from "../leaf-bundle.js";
import { killProcessGroup, stopProcessGroup } from "../process-group.js";
import { LOG_DIR, VAR_DIR } from "../stack.js";

/**
 * A site's leaf nats-server, made from the bundle the console downloads (the gateway's internal API,
 * POST /internal/sites/{id}/leaf-bundle: leaf.conf, site.creds and the companion credentials), with
 * a monitor port added. With `cuttable`, its links to every hub node run through a TCP relay each
 * (LinkCutter), the site's WAN link that the benchmark cuts and restores.
 */
export class SiteLeaf {
  private constructor(
    readonly site: string,
    readonly url: string,
    readonly monitorUrl: string,
    private readonly child: ChildProcess,
    private readonly links: LinkCutter[],
  ) {}

  static async create(input: {
    site: { id: string; name: string };
    organizationId: string;
    gatewayUrl: string;
    internalToken: string;
    /** Where the site's agents connect (127.0.0.1:<port>). */
    port: number;
    natsServerBin: string;
    /** Every hub node's leafnode URL (nats-leaf://host:port), as the gateway's NATS_LEAF_URL. */
    hubLeafUrls: string[];
    cuttable: boolean;
  }): Promise<SiteLeaf> {
    const dir = join(VAR_DIR, "leaves", input.site.name);
    const bundle = await writeLeafBundle({
      gatewayUrl: input.gatewayUrl,
      internalToken: input.internalToken,
      organizationId: input.organizationId,
      siteId: input.site.id,
      name: input.site.name,
      port: input.port,
      dir: join(VAR_DIR, "leaves"),
    });
    let config = bundle.config;
    const links: LinkCutter[] = [];
    if (input.cuttable) {
      // One relay per hub node; the leaf's remotes name the relays instead of the nodes.
      for (const hubUrl of input.hubLeafUrls) {
        const link = await LinkCutter.start(Number(new URL(hubUrl).port));
        links.push(link);
        config = config.replaceAll(`"${hubUrl}"`, `"nats-leaf://127.0.0.1:${link.port}"`);
      }
      if (input.hubLeafUrls.some((url) => config.includes(`"${url}"`)))
        throw new Error("the leaf bundle still names a hub node directly: the link could not be cut");
    }
    const monitorPort = await freePort();
    writeFileSync(join(dir, "leaf.conf"), `${config}\nhttp: 127.0.0.1:${monitorPort}\n`);
    const log = openSync(join(LOG_DIR, `leaf-${input.site.name}.log`), "w");
    const child = spawn(input.natsServerBin, ["-c", join(dir, "leaf.conf")], {
      stdio: ["ignore", log, log],
      detached: true,
    });
    closeSync(log);
    const leaf = new SiteLeaf(
      input.site.name,
      `nats://127.0.0.1:${input.port}`,
      `http://127.0.0.1:${monitorPort}`,
      child,
      links,
    );
    await leaf.untilLinked(true, 60_000);
    return leaf;
  }

  /** Leaf connections this leaf holds to the hub (the organization's, system and enroll links). */
  async hubLinks(): Promise<number> {
    const leafz = (await (
      await fetch(`${this.monitorUrl}/leafz`, { signal: AbortSignal.timeout(2_000) })
    ).json()) as {
      leafnodes?: number;
    };
    return leafz.leafnodes ?? 0;
  }

  async untilLinked(linked: boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.child.exitCode !== null)
        throw new Error(`the ${this.site} leaf exited (log: leaf-${this.site}.log)`);
      const links = await this.hubLinks().catch(() => -1);
      if (linked ? links > 0 : links === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    throw new Error(
      `the ${this.site} leaf's hub links did not go ${linked ? "up" : "down"} in ${timeoutMs} ms`,
    );
  }

  /** The site's WAN link goes down: every relayed connection dropped, new ones refused. */
  cut(): void {
    for (const link of this.links) link.cut();
  }

  restore(): void {
    for (const link of this.links) link.restore();
  }

  async stop(): Promise<void> {
    await stopProcessGroup(this.child, 5_000).catch(() => killProcessGroup(this.child));
    await Promise.all(this.links.map((link) => link.close()));
  }
}
