import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  createTenancySecrets,
  serverAuthConfig,
  type TenancySecrets,
  tenancySecretsSchema,
  upgradeTenancySecrets,
} from "./bootstrap";

/** Reads the tenancy secrets file, with a clear error when it is missing or malformed. */
export function loadTenancySecrets(path: string): TenancySecrets {
  if (!existsSync(path))
    throw new Error(`NATS tenancy secrets not found at ${path} (run the stack bootstrap)`);
  const parsed = tenancySecretsSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
  if (!parsed.success)
    throw new Error(`NATS tenancy secrets at ${path} are malformed: ${parsed.error.message}`);
  return parsed.data;
}

const writeSecret = (path: string, content: string) => {
  writeFileSync(path, content, { mode: 0o600 });
  chmodSync(path, 0o600);
};

/**
 * Creates the control plane's NATS trust root once (kept on later runs, so credentials stay
 * valid across restarts) and writes what the server and the gateway read:
 *   tenancy.json        all secrets (the gateway's NATS_TENANCY_FILE)
 *   auth.conf           operator-mode block included by the hub's config
 *   gateway.creds       platform account user (the gateway's NATS_CREDS)
 *   gateway-system.creds  system account user (pushes account JWTs)
 *   enroll.creds        the public enrollment credentials shipped to agents
 */
export async function writeTenancyFiles(dir: string): Promise<TenancySecrets> {
  mkdirSync(join(dir, "jwt"), { recursive: true });
  const secretsPath = join(dir, "tenancy.json");
  const secrets = existsSync(secretsPath)
    ? await upgradeTenancySecrets(loadTenancySecrets(secretsPath))
    : await createTenancySecrets();
  writeSecret(secretsPath, `${JSON.stringify(secrets, null, 2)}\n`);
  writeFileSync(join(dir, "auth.conf"), serverAuthConfig(secrets, join(dir, "jwt")));
  writeSecret(join(dir, "gateway.creds"), secrets.platform.userCreds);
  writeSecret(join(dir, "gateway-system.creds"), secrets.system.userCreds);
  writeFileSync(join(dir, "enroll.creds"), secrets.enroll.userCreds);
  return secrets;
}

/**
 * One node of a hub cluster: `<nodeDir>/auth/auth.conf`, the operator-mode block with the node's
 * own resolver folder (`<nodeDir>/auth/jwt`). The full resolvers of the nodes sync accounts among
 * themselves; two servers writing one folder would not.
 */
export function writeClusterNodeAuth(secrets: TenancySecrets, nodeDir: string): void {
  mkdirSync(join(nodeDir, "auth", "jwt"), { recursive: true });
  writeFileSync(join(nodeDir, "auth", "auth.conf"), serverAuthConfig(secrets, join(nodeDir, "auth", "jwt")));
}
