/**
 * Artifacts on the wire (docs/protocol.md "Artifacts"). A version's artifact lives in its
 * organization's JetStream object store bucket `ART_<org wire id>` (platform account, domain
 * `hub`), named by the lowercase hex SHA-256 of its content. Nodes never get JetStream access to
 * it: they ask the gateway for chunks on their own `ef.up.<site>.<wid>.art` subject.
 */

/** Lowercase hex SHA-256: an object name, and the hash an agent verifies. */
export const SHA256_HEX_PATTERN = /^[0-9a-f]{64}$/;

/** Largest artifact the control plane stores and an agent fetches (256 MiB). */
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;

/** Largest chunk in one reply (128 KiB: well under the 1 MiB NATS max payload, the object store's own chunk size). */
export const MAX_ARTIFACT_CHUNK_BYTES = 128 * 1024;

/** `artifactUrl` of a version whose artifact was uploaded to Edgefleet: `ef-artifact:<sha256>`. */
export const EF_ARTIFACT_SCHEME = "ef-artifact:";

/**
 * Typed chunk errors. `not_found`: no such object in the organization's store (yet);
 * `not_allowed`: the node is not meant to run a version with this artifact; `too_large`: the
 * object exceeds MAX_ARTIFACT_BYTES; `bad_range`: offset past the end; `unavailable`: the store
 * cannot be read right now (retry).
 */
export const ARTIFACT_CHUNK_ERRORS = [
  "not_found",
  "not_allowed",
  "too_large",
  "bad_range",
  "unavailable",
] as const;
export type ArtifactChunkError = (typeof ARTIFACT_CHUNK_ERRORS)[number];

/** The organization's object store bucket (the platform account holds one per organization). */
export function artifactBucket(orgWireId: string): string {
  if (!/^[0-9a-z]{1,20}$/.test(orgWireId)) throw new Error(`invalid organization wire id ${orgWireId}`);
  return `ART_${orgWireId}`;
}

export function isSha256Hex(value: string): boolean {
  return SHA256_HEX_PATTERN.test(value);
}

/** `ef-artifact:<sha256>` → the object name; null for any other URL. */
export function parseEfArtifactUrl(url: string): string | null {
  if (!url.startsWith(EF_ARTIFACT_SCHEME)) return null;
  const name = url.slice(EF_ARTIFACT_SCHEME.length);
  return isSha256Hex(name) ? name : null;
}

export function efArtifactUrl(sha256: string): string {
  if (!isSha256Hex(sha256)) throw new Error(`not a lowercase hex SHA-256: ${sha256}`);
  return `${EF_ARTIFACT_SCHEME}${sha256}`;
}

/**
 * The object a version's artifact is fetched from: the one its `ef-artifact:` URL names, else
 * (an HTTPS URL imported into the store) the object named by its SHA-256. null: nothing to fetch
 * (no hash and no store URL: the run spec's command runs as it is).
 */
export function artifactObjectName(artifactUrl: string | null, artifactSha256: string | null): string | null {
  const named = artifactUrl === null ? null : parseEfArtifactUrl(artifactUrl);
  if (named) return named;
  const sha = artifactSha256?.toLowerCase() ?? null;
  return sha && isSha256Hex(sha) ? sha : null;
}

/**
 * The wire form of a version's artifact (DesiredDelta put `art`): the hash to verify and, when it
 * differs, the object to fetch. null: the version has no artifact to deliver. Throws on a stated
 * hash that is not a SHA-256 (the API validates it; a stored one that is not is a bug to surface).
 */
export function wireArtifactRef(
  artifactUrl: string | null,
  artifactSha256: string | null,
): { sha: string; obj?: string } | null {
  const obj = artifactObjectName(artifactUrl, artifactSha256);
  if (!obj) return null;
  const sha = artifactSha256 === null ? obj : artifactSha256.toLowerCase();
  if (!isSha256Hex(sha))
    throw new Error(`artifact SHA-256 ${JSON.stringify(artifactSha256)} is not 64 hex digits`);
  return sha === obj ? { sha } : { sha, obj };
}
