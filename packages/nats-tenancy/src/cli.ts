#!/usr/bin/env -S node --import tsx
// edgefleet-nats-tenancy bootstrap <dir>: creates or refreshes the hub's operator-mode files.
import { writeTenancyFiles } from "./files";

const [command, dir] = process.argv.slice(2);
if (command !== "bootstrap" || !dir) {
  console.error("usage: edgefleet-nats-tenancy bootstrap <dir>");
  process.exit(2);
}
const secrets = await writeTenancyFiles(dir);
console.log(`operator ${secrets.operator.publicKey}; files in ${dir}`);
