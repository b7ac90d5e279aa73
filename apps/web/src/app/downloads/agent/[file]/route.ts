import { createReadStream } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { Readable } from "node:stream";
import { env } from "~/env";

// The native agent's release binaries and systemd unit, for the install command a node runs
// (packages/api domain/enrollment.ts `installCommand`). Public on purpose: a node has no session,
// and the agent is the same open binary for everyone; what makes a node ours is its token.
export const dynamic = "force-dynamic";

/** apps/agent/build.sh --release writes `edgefleet-agent-<version>-linux-<arch>` and the unit here. */
function distDir(): string {
  return env.AGENT_DIST_DIR ?? resolve(process.cwd(), "../agent/dist");
}

const ARCHITECTURES = ["amd64", "arm64", "armv7"] as const;
const UNIT = "edgefleet-agent.service";

/** The file in the dist directory that serves `requested`, or null (with the reason). */
async function pick(
  requested: string,
): Promise<{ path: string; version: string | null } | { missing: string }> {
  const dir = distDir();
  if (requested === UNIT) return { path: join(dir, UNIT), version: null };
  const arch = ARCHITECTURES.find((a) => requested === `edgefleet-agent-linux-${a}`);
  if (!arch) {
    return {
      missing: `no such download: ${requested} (edgefleet-agent-linux-{${ARCHITECTURES.join(",")}}, ${UNIT})`,
    };
  }
  const pattern = new RegExp(`^edgefleet-agent-(.+)-linux-${arch}$`);
  const builds = await readdir(dir).catch(() => [] as string[]);
  const candidates = await Promise.all(
    builds
      .filter((name) => pattern.test(name))
      .map(async (name) => ({ name, mtime: (await stat(join(dir, name))).mtimeMs })),
  );
  // Several versions side by side: the newest build is the one this console ships.
  const newest = candidates.sort((a, b) => b.mtime - a.mtime)[0];
  if (!newest)
    return {
      missing: `the agent for linux-${arch} is not built on this server (apps/agent/build.sh --release)`,
    };
  return { path: join(dir, newest.name), version: pattern.exec(newest.name)?.[1] ?? null };
}

export async function GET(_req: Request, { params }: { params: Promise<{ file: string }> }) {
  const { file } = await params;
  const found = await pick(file);
  if ("missing" in found)
    return Response.json({ code: "NOT_FOUND", message: found.missing }, { status: 404 });
  const size = await stat(found.path).then(
    (s) => s.size,
    () => null,
  );
  if (size === null) {
    return Response.json(
      { code: "NOT_FOUND", message: `${file} is not built on this server` },
      { status: 404 },
    );
  }
  const body = Readable.toWeb(createReadStream(found.path)) as ReadableStream<Uint8Array>;
  return new Response(body, {
    headers: {
      "content-type": file === UNIT ? "text/plain; charset=utf-8" : "application/octet-stream",
      "content-length": String(size),
      "content-disposition": `attachment; filename="${file}"`,
      "cache-control": "no-cache",
      ...(found.version ? { "x-edgefleet-agent-version": found.version } : {}),
    },
  });
}
