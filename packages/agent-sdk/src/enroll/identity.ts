import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { z } from "zod";
import { WIRE_ID_PATTERN } from "../protocol/index.js";

/** What enrollment gives a node: its ids and the credentials it connects with. */
export interface NodeIdentity {
  /** Node id in the control plane (Postgres). */
  nid: string;
  /** Node wire id: the token in every subject of the node. */
  wid: string;
  /** Organization wire id. */
  org: string;
  /** User JWT signed for the node's public key. */
  jwt: string;
  /** The node's nkey seed ("SU…"); never leaves the node. */
  seed: string;
}

const CREDS_FILE = "node.creds";
const IDS_FILE = "node.json";
const PENDING_SEED_FILE = "enroll.seed";

const idsSchema = z.object({
  nid: z.string(),
  wid: z.string().regex(WIRE_ID_PATTERN),
  org: z.string().regex(WIRE_ID_PATTERN),
});

/** The standard NATS creds file (JWT + seed), readable by credsAuthenticator and the NATS tools. */
export function formatCreds(jwt: string, seed: string): string {
  return `-----BEGIN NATS USER JWT-----
${jwt}
------END NATS USER JWT------

************************* IMPORTANT *************************
NKEY Seed printed below can be used to sign and prove identity.
NKEYs are sensitive and should be treated as secrets.

-----BEGIN USER NKEY SEED-----
${seed}
------END USER NKEY SEED------

*************************************************************
`;
}

export function parseCreds(text: string): { jwt: string; seed: string } {
  const jwt = /-----BEGIN NATS USER JWT-----\s*\n\s*(\S+)\s*\n/.exec(text)?.[1];
  const seed = /-----BEGIN USER NKEY SEED-----\s*\n\s*(\S+)\s*\n/.exec(text)?.[1];
  if (!jwt || !seed) throw new Error("not a NATS creds file (no user JWT or no nkey seed block)");
  return { jwt, seed };
}

/** Writes a secret file with mode 0600 from the start (never briefly world-readable). */
async function writeSecret(path: string, content: string): Promise<void> {
  const temporary = `${path}.tmp`;
  await writeFile(temporary, content, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

export function credsPath(stateDir: string): string {
  return join(stateDir, CREDS_FILE);
}

export async function saveIdentity(stateDir: string, identity: NodeIdentity): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeSecret(credsPath(stateDir), formatCreds(identity.jwt, identity.seed));
  await writeFile(
    join(stateDir, IDS_FILE),
    `${JSON.stringify({ nid: identity.nid, wid: identity.wid, org: identity.org })}\n`,
  );
  await rm(join(stateDir, PENDING_SEED_FILE), { force: true });
}

/** The stored identity, or null when the node has not enrolled yet. */
export async function loadIdentity(stateDir: string): Promise<NodeIdentity | null> {
  let credsText: string;
  try {
    credsText = await readFile(credsPath(stateDir), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  const ids = idsSchema.safeParse(JSON.parse(await readFile(join(stateDir, IDS_FILE), "utf8")));
  if (!ids.success) throw new Error(`${join(stateDir, IDS_FILE)} is corrupt: ${ids.error.message}`);
  return { ...ids.data, ...parseCreds(credsText) };
}

/** The seed of an enrollment still pending approval, so that asking again uses the same key. */
export async function loadPendingSeed(stateDir: string): Promise<string | null> {
  return readFile(join(stateDir, PENDING_SEED_FILE), "utf8").then(
    (text) => text.trim(),
    () => null,
  );
}

export async function savePendingSeed(stateDir: string, seed: string): Promise<void> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  await writeSecret(join(stateDir, PENDING_SEED_FILE), `${seed}\n`);
}
