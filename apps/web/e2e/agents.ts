import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, type Page, test } from "@playwright/test";
import { mutate, query } from "./console";
import { visit } from "./keycloak";

// Real agents for the specs that need nodes: the agent SDK's hollow runtime speaks the real
// protocol (enrollment, Hello, status, commands, artifact download) without running programs.

const AGENT_CLI = fileURLToPath(
  new URL("../../../packages/agent-sdk/bin/edgefleet-agent.mjs", import.meta.url),
);

/** The stack's NATS addresses from stack.env; a spec cannot enroll agents without them. */
export function natsOfStack(): { url: string; enrollCreds: string } {
  const url = process.env.NATS_URL;
  const enrollCreds = process.env.NATS_ENROLL_CREDS;
  if (!url || !enrollCreds)
    throw new Error("NATS_URL / NATS_ENROLL_CREDS unset: export the stack's stack.env");
  return { url, enrollCreds };
}

/**
 * Registers the spec's agents: `start` enrolls `count` hollow agents with a fresh token, named
 * `<prefix>-0`, `<prefix>-1`, … and labelled `label` (so a rollout can target only them); every
 * agent started is stopped after each test.
 */
export function hollowAgents() {
  let running: ChildProcess[] = [];
  test.afterEach(() => {
    for (const agent of running) agent.kill("SIGTERM");
    running = [];
  });
  return {
    async start(
      page: Page,
      options: {
        prefix: string;
        count?: number;
        label?: string;
        fetchArtifacts?: boolean;
        /** Enrolled at this site, connected to its leaf node at `leafUrl` (enrolling through the hub). */
        site?: { id: string; leafUrl: string };
      },
    ): Promise<void> {
      const nats = natsOfStack();
      const count = options.count ?? 1;
      const token = await mutate<{ token: string }>(page, "enrollment.createToken", {
        description: options.prefix,
        ...(options.site ? { siteId: options.site.id } : {}),
        maxUses: count,
        expiresInHours: 1,
      });
      const connect = options.site
        ? ["--url", options.site.leafUrl, "--enroll-url", nats.url]
        : ["--url", nats.url];
      const args = [
        ...["hollow", "--count", String(count), "--token", token.token, ...connect],
        ...["--enroll-creds", nats.enrollCreds, "--name-prefix", options.prefix],
        ...(options.label ? ["--label", options.label] : []),
        ...(options.fetchArtifacts ? ["--fetch-artifacts"] : []),
      ];
      running.push(spawn(process.execPath, [AGENT_CLI, ...args], { stdio: "ignore" }));
    },
  };
}

/** The id of the first node `selector` matches, once it is online. */
export async function onlineNode(page: Page, selector: string): Promise<string> {
  const onlineNodeId = async () => {
    const list = await query<{ items: Array<{ id: string; status: string }> }>(page, "node.list", {
      selector,
      limit: 5,
    });
    return list.items[0]?.status === "online" ? list.items[0].id : "";
  };
  await expect.poll(onlineNodeId, { timeout: 60_000 }).not.toBe("");
  return onlineNodeId();
}

/** Rolls the seed's telemetry-collector 1.5.0 out to the nodes `selector` matches, in one batch. */
export async function rollOutSeededCollector(page: Page, selector: string): Promise<void> {
  const apps = await query<Array<{ id: string; name: string }>>(page, "app.list", {});
  const app = apps.find((entry) => entry.name === "telemetry-collector");
  if (!app) throw new Error("the seed's telemetry-collector app is missing");
  const versions = await query<{ items: Array<{ id: string; version: string }> }>(page, "appVersion.list", {
    appId: app.id,
  });
  const version = versions.items.find((entry) => entry.version === "1.5.0");
  if (!version) throw new Error("telemetry-collector 1.5.0 is missing");
  const rollout = await mutate<{ id: string }>(page, "rollout.create", {
    appVersionId: version.id,
    target: { selector },
    strategy: { batches: [{ percent: 100 }] },
  });
  await mutate(page, "rollout.start", { id: rollout.id });
}

/** Waits until the node's page lists its app as running (the rollout reached it). */
export async function appRunningOn(page: Page, nodeId: string): Promise<void> {
  await expect(async () => {
    await visit(page, `/nodes/${nodeId}`);
    await expect(page.getByTestId("apps-table")).toContainText("running", { timeout: 2_000 });
  }).toPass({ timeout: 60_000 });
}

/** Waits until `count` nodes whose names start with `prefix` are online (the palette's search). */
export async function expectNodesOnline(page: Page, prefix: string, count: number, timeout = 60_000) {
  await expect
    .poll(
      async () => {
        const { hits } = await query<{ hits: Array<{ kind: string; detail: string | null }> }>(
          page,
          "search.byName",
          { query: prefix },
        );
        return hits.filter((hit) => hit.kind === "node" && hit.detail?.endsWith("online")).length;
      },
      { timeout },
    )
    .toBe(count);
}
