#!/usr/bin/env -S node --import tsx
// edgefleet-nats-tenancy bootstrap <dir> [--cluster-node <nodeDir>]...
// Creates or refreshes the hub's operator-mode files in <dir>. Each --cluster-node also gets
// <nodeDir>/auth/auth.conf: the same trust root with that node's own account resolver folder
// (the nodes of a hub cluster never share one).
import { parseArgs } from "node:util";
import { writeClusterNodeAuth, writeTenancyFiles } from "./files";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { "cluster-node": { type: "string", multiple: true, default: [] } },
});
const [command, dir] = positionals;
if (command !== "bootstrap" || !dir) {
  console.error("usage: edgefleet-nats-tenancy bootstrap <dir> [--cluster-node <nodeDir>]...");
  process.exit(2);
}
const secrets = await writeTenancyFiles(dir);
for (const nodeDir of values["cluster-node"] ?? []) writeClusterNodeAuth(secrets, nodeDir);
console.log(`operator ${secrets.operator.publicKey}; files in ${dir}`);
