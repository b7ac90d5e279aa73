import { type DesiredDeltaBody, runSpecSchema } from "@edgefleet/agent-sdk/protocol";
import type { DesiredDelta } from "@edgefleet/db";

export class UnsendableDeltaError extends Error {
  override name = "UnsendableDeltaError";
}

/**
 * The protocol form of a stored delta. A stored run spec the agent could not run is refused here,
 * loudly, rather than sent (an API bug, not a node's fault).
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
      return { app: spec.app, ver: spec.version, spec: runSpec.data };
    }),
    del: delta.del,
  };
}
