import { randomBytes } from "node:crypto";
import { chmod, copyFile, mkdir, open, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ArtifactError } from "./chunk-source.js";

export type ArtifactKind = "tar.gz" | "tar" | "binary";

/** A single-binary artifact is installed under this name, executable (command `["./artifact", …]`). */
export const BINARY_ARTIFACT_NAME = "artifact";

/** Unpacked size cap of an archive (a small .tar.gz may expand a lot): 1 GiB. */
export const MAX_UNPACKED_BYTES = 1024 * 1024 * 1024;

/** Tells the kind by the first bytes: gzip magic, the tar `ustar` magic at 257, else a binary. */
export async function detectArtifactKind(path: string): Promise<ArtifactKind> {
  const file = await open(path, "r");
  try {
    const head = Buffer.alloc(512);
    const { bytesRead } = await file.read(head, 0, 512, 0);
    if (bytesRead >= 2 && head[0] === 0x1f && head[1] === 0x8b) return "tar.gz";
    if (bytesRead >= 262 && head.toString("latin1", 257, 262) === "ustar") return "tar";
    return "binary";
  } finally {
    await file.close();
  }
}

/**
 * Installs a verified artifact file as `destDir`: a .tar.gz or .tar is unpacked (paths are kept
 * inside: node-tar strips absolute paths and `..`, and refuses to write through symlinks), a
 * single binary becomes `destDir/artifact` with mode 0755. Built in a temporary sibling and
 * renamed into place, so `destDir` is either complete or absent. Throws ArtifactError.
 */
export async function installArtifact(
  file: string,
  destDir: string,
  maxUnpackedBytes = MAX_UNPACKED_BYTES,
): Promise<ArtifactKind> {
  const kind = await detectArtifactKind(file);
  const building = `${destDir}.tmp-${randomBytes(4).toString("hex")}`;
  await mkdir(dirname(destDir), { recursive: true });
  await mkdir(building, { recursive: true });
  try {
    if (kind === "binary") {
      await copyFile(file, join(building, BINARY_ARTIFACT_NAME));
      await chmod(join(building, BINARY_ARTIFACT_NAME), 0o755);
    } else {
      // Loaded when first needed: an idle agent does not carry node-tar in its heap.
      const tar = await import("tar");
      let unpacked = 0;
      await tar.list({
        file,
        strict: true,
        onReadEntry: (entry) => {
          unpacked += entry.size ?? 0;
        },
      });
      if (unpacked > maxUnpackedBytes) {
        throw new ArtifactError(
          "install_failed",
          `archive unpacks to ${unpacked} bytes, over the ${maxUnpackedBytes}-byte limit`,
        );
      }
      await tar.extract({ file, cwd: building, strict: true, preserveOwner: false });
    }
    await rm(destDir, { recursive: true, force: true });
    await rename(building, destDir);
    return kind;
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    if (error instanceof ArtifactError) throw error;
    throw new ArtifactError(
      "install_failed",
      `cannot unpack the ${kind} artifact: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

export async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
