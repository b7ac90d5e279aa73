import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

// docker-compose.yml cannot run on machines without a Docker engine, so this test keeps it
// honest another way: it must parse, and its images, ports, env and server configuration
// must match what `./edgefleet up` runs locally (scripts/stack/).

const repoRoot = join(import.meta.dirname, "../../..");
const read = (path: string) => readFileSync(join(repoRoot, path), "utf8");

interface ComposeService {
  image?: string;
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  network_mode?: string;
}
const compose = parse(read("docker-compose.yml")) as { services: Record<string, ComposeService> };
const service = (name: string): ComposeService => {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};

/** Variables of scripts/stack/versions.env and profile.sh, as bash computes them. */
function localStack(): Record<string, string> {
  const script = `source scripts/stack/lib.sh; EDGEFLEET_PROFILE=dev; source scripts/stack/profile.sh; set | grep -E '^(PORT_|NATS_SERVER_VERSION|MIMIR_VERSION|KEYCLOAK_VERSION|POSTGRES_MAJOR)'`;
  const out = execFileSync("bash", ["-c", script], { cwd: repoRoot, encoding: "utf8" });
  return Object.fromEntries(
    out
      .trim()
      .split("\n")
      .map((line) => line.split("=") as [string, string]),
  );
}
const local = localStack();
const localValue = (name: string): string => {
  const value = local[name];
  if (value === undefined) throw new Error(`the local stack defines no ${name}`);
  return value;
};

/** Host ports a service publishes ("127.0.0.1:4222:4222" → 4222). */
const publishedPorts = (name: string) =>
  (service(name).ports ?? []).map((mapping) => Number(mapping.split(":").at(-2)));

describe("docker-compose.yml", () => {
  it("runs the pinned versions of every server", () => {
    expect(service("postgres").image).toBe(`postgres:${localValue("POSTGRES_MAJOR")}`);
    expect(service("nats").image).toBe(`nats:${localValue("NATS_SERVER_VERSION").replace(/^v/, "")}`);
    expect(service("mimir").image).toBe(`grafana/mimir:${localValue("MIMIR_VERSION")}`);
    expect(service("keycloak").image).toBe(`quay.io/keycloak/keycloak:${localValue("KEYCLOAK_VERSION")}`);
  });

  it("publishes the same ports as the local dev stack", () => {
    expect(publishedPorts("postgres")).toEqual([Number(localValue("PORT_POSTGRES"))]);
    expect(publishedPorts("nats")).toEqual(
      ["PORT_NATS", "PORT_NATS_LEAF", "PORT_NATS_MONITOR"].map((p) => Number(localValue(p))),
    );
    expect(publishedPorts("mimir")).toEqual([Number(localValue("PORT_MIMIR_HTTP"))]);
    // The console shares Keycloak's network namespace, so its port is published there.
    expect(service("web").network_mode).toBe("service:keycloak");
    expect(publishedPorts("keycloak")).toEqual(
      ["PORT_KEYCLOAK", "PORT_KEYCLOAK_MANAGEMENT", "PORT_WEB"].map((p) => Number(localValue(p))),
    );
    expect(publishedPorts("gateway")).toEqual([Number(localValue("PORT_GATEWAY"))]);
  });

  it("gives the apps the variables the local stack writes to stack.env", () => {
    const services = read("scripts/stack/services.sh");
    const heredoc = services.slice(services.indexOf('cat >"$STACK_ENV" <<ENV'), services.indexOf("\nENV\n"));
    const stackEnvKeys = new Set([...heredoc.matchAll(/^([A-Z_]+)=/gm)].map((match) => match[1]));
    for (const name of ["gateway", "web", "migrate"]) {
      const keys = Object.keys(service(name).environment ?? {});
      expect(keys.length).toBeGreaterThan(5);
      for (const key of keys) {
        // GATEWAY_HTTP_HOST is compose-only: containers must listen beyond loopback.
        if (key !== "GATEWAY_HTTP_HOST") expect(stackEnvKeys, `${name}.${key}`).toContain(key);
      }
      for (const required of [
        "DATABASE_URL",
        "NATS_URL",
        "MIMIR_URL",
        "AUTH_KEYCLOAK_ISSUER",
        "AUTH_SECRET",
      ]) {
        expect(keys, `${name} lacks ${required}`).toContain(required);
      }
    }
  });

  it("imports the same Keycloak realm file", () => {
    const mounts = service("keycloak").volumes ?? [];
    expect(mounts).toContain(
      "./scripts/stack/keycloak/edgefleet-realm.json:/opt/keycloak/data/import/edgefleet-realm.json:ro",
    );
  });

  it("configures Mimir as the local stack does, up to addresses and paths", () => {
    const normalize = (text: string) =>
      parse(
        text
          .replace(/@@DATA_DIR@@|\/data/g, "DATA")
          .replace(/@@PORT_MIMIR_HTTP@@/g, "9009")
          .replace(/@@PORT_MIMIR_GRPC@@/g, "9095")
          .replace(/@@PORT_MIMIR_MEMBERLIST@@/g, "7946")
          .replace(/_listen_address: 0\.0\.0\.0/g, "_listen_address: 127.0.0.1"),
      ) as unknown;
    expect(normalize(read("infra/compose/mimir.yaml"))).toEqual(
      normalize(read("scripts/stack/config/mimir.yaml.template")),
    );
  });

  it("configures the NATS hub as the local stack does, up to addresses and paths", () => {
    const settings = (text: string) =>
      text
        .split("\n")
        .map((line) => line.trim())
        .filter((line) => line && !line.startsWith("#"))
        .filter((line) => !/^(server_name|listen|http|store_dir):/.test(line));
    expect(settings(read("infra/compose/nats-hub.conf"))).toEqual(
      settings(read("scripts/stack/config/nats-hub.conf")),
    );
  });
});
