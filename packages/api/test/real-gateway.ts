/**
 * The real gateway (apps/gateway, `tsx src/main.ts`) as a child process, for the tests of what
 * the console's API sends it (artifact uploads). The gateway's own tests have a fuller harness.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { freePort, waitFor } from "@edgefleet/nats-tenancy/testing";

const gatewayDir = fileURLToPath(new URL("../../../apps/gateway/", import.meta.url));
const tsxCli = createRequire(`${gatewayDir}package.json`).resolve("tsx/cli");

export interface RealGateway {
  baseUrl: string;
  output: string[];
  kill(): Promise<void>;
}

/** Starts the gateway and waits until its edge services (NATS) run. */
export async function startRealGateway(env: Record<string, string>): Promise<RealGateway> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [tsxCli, "src/main.ts"], {
    cwd: gatewayDir,
    env: {
      PATH: process.env.PATH ?? "",
      LOG_LEVEL: "info",
      GATEWAY_HTTP_HOST: "127.0.0.1",
      GATEWAY_HTTP_PORT: String(port),
      ...env,
    } as unknown as NodeJS.ProcessEnv,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) {
    stream?.setEncoding("utf8").on("data", (chunk: string) => output.push(chunk));
  }
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const kill = async () => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid, "SIGKILL");
    await exited;
  };
  try {
    await waitFor(
      "the gateway's edge services",
      () => {
        if (output.join("").includes('"service":"artifact-importer"')) return true;
        if (child.exitCode !== null) throw new Error(`the gateway exited:\n${output.join("")}`);
        return undefined;
      },
      60_000,
    );
  } catch (error) {
    await kill();
    throw error;
  }
  return { baseUrl: `http://127.0.0.1:${port}`, output, kill };
}
