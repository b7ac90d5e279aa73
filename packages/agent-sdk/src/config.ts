import { readFile } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname, isAbsolute, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import { z } from "zod";

const natsUrl = z
  .string()
  .regex(/^(nats|tls|ws|wss):\/\/[^\s]+$/, "must be a NATS URL such as nats://host:4222");

export const agentConfigSchema = z
  .object({
    /** Credentials, applied desired state, the outbox and app working dirs live here. */
    stateDir: z.string().min(1),
    /** The site's leaf node (or the hub's leaf port). */
    servers: z.array(natsUrl).min(1),
    enroll: z
      .object({
        /** Where `ef.enroll` is answered; default: `servers`. */
        servers: z.array(natsUrl).min(1).optional(),
        /** Public enrollment credentials (creds file); omit only for a dev server without auth. */
        credsFile: z.string().min(1).optional(),
        token: z.string().min(1).max(256).optional(),
        name: z.string().min(1).max(128).optional(),
        labels: z.record(z.string().min(1).max(63), z.string().max(255)).optional(),
      })
      .strict()
      .default({}),
    intervals: z
      .object({
        /** Until the control plane's HelloReply says otherwise. */
        heartbeatSeconds: z.int().min(1).max(3600).default(30),
        metricsSeconds: z.int().min(1).max(86_400).default(60),
        statusRefreshSeconds: z.int().min(10).max(86_400).default(600),
      })
      .strict()
      .default({ heartbeatSeconds: 30, metricsSeconds: 60, statusRefreshSeconds: 600 }),
    buffer: z
      .object({
        maxBytes: z
          .int()
          .min(1024 * 1024)
          .max(1024 ** 3)
          .default(8 * 1024 * 1024),
      })
      .strict()
      .default({ maxBytes: 8 * 1024 * 1024 }),
    reconnect: z
      .object({
        baseMs: z.int().min(10).max(60_000).default(500),
        maxMs: z.int().min(100).max(600_000).default(30_000),
      })
      .strict()
      .default({ baseMs: 500, maxMs: 30_000 }),
  })
  .strict();

export type AgentConfig = z.output<typeof agentConfigSchema> & { enroll: { name: string } };

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads and validates the YAML config; relative paths are taken relative to the config file. */
export async function loadConfig(path: string): Promise<AgentConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ConfigError(`cannot read config ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    throw new ConfigError(`config ${path} is not valid YAML: ${(error as Error).message}`);
  }
  return parseConfig(raw, dirname(resolve(path)), path);
}

export function parseConfig(raw: unknown, baseDir: string, source = "config"): AgentConfig {
  const parsed = agentConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (issue) => `  ${issue.path.length > 0 ? issue.path.join(".") : "(top level)"}: ${issue.message}`,
    );
    throw new ConfigError(`invalid ${source}:\n${problems.join("\n")}`);
  }
  const config = parsed.data;
  const absolute = (path: string) => (isAbsolute(path) ? path : resolve(baseDir, path));
  return {
    ...config,
    stateDir: absolute(config.stateDir),
    enroll: {
      ...config.enroll,
      name: config.enroll.name ?? hostname(),
      ...(config.enroll.credsFile ? { credsFile: absolute(config.enroll.credsFile) } : {}),
    },
  };
}
