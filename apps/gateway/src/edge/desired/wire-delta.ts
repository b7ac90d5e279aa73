import { type DesiredDeltaBody, runSpecSchema, wireArtifactRef } from "@edgefleet/agent-sdk/protocol";
import type { DesiredDelta } from "@edgefleet/db";

export class UnsendableDeltaError extends Error {
  override name = "UnsendableDeltaError";
}

/**
 * The protocol form of a stored delta. A stored run spec the agent could not run (or an artifact
 * hash that is not one) is refused here, loudly, rather than sent (an API bug, not a node's fault).
 * A version with an artifact (`ef-artifact:<sha256>`, or an HTTPS URL with its SHA-256, imported
 * into the store) carries `art`; one with neither runs its command as it is.
 */
export function toWireDelta(delta: DesiredDelta): DesiredDeltaBody {
  return {
    from: delta.from,
    to: delta.to,
    put: delta.put.map((spec) => {
      const runSpec = runSpecSchema.safeParse(spec.runSpec);
      if (!runSpec.success) {
        throw new UnsendableDeltaError(
          `run spec of ${spec.app}@${spec.version} is not valid: ${runSpec.error.issues[0]?.message ?? "invalid"}`,
        );
      }
      let art: ReturnType<typeof wireArtifactRef>;
      try {
        // Never a URL: the node fetches the object over NATS (ef.up.<site>.<wid>.art) and checks the hash.
        art = wireArtifactRef(spec.artifactUrl, spec.artifactSha256);
      } catch (error) {
        throw new UnsendableDeltaError(
          `artifact of ${spec.app}@${spec.version} is not valid: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
      return { app: spec.app, ver: spec.version, spec: runSpec.data, ...(art ? { art } : {}) };
    }),
    del: delta.del,
  };
}
