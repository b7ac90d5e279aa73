/**
 * PUT /api/v1/apps/{appId}/versions/{versionId}/artifact (API key) and the console's same-origin
 * twin (session): the bytes of an `upload` version's artifact, streamed through to the gateway,
 * which hashes them into the organization's object store bucket.
 *
 * Order matters: the caller is authenticated and authorized (operator+, the version is theirs,
 * an upload version, still pending) by the `appVersion.uploadTarget` procedure BEFORE a byte is
 * read; the body then flows through without being held in memory; the gateway enforces the size
 * cap (413) and the declared hash. The outcome is written on the version with its audit row in
 * one transaction: ready (sha256, size), or failed when the content does not match the declared
 * sha256 (400 naming the field; the gateway kept nothing). A cut upload or one past the cap
 * leaves the version pending (nothing was kept), so it can be sent again.
 */
import type { Db } from "@edgefleet/db";
import { tenantDb } from "@edgefleet/db";
import type { z } from "zod";
import { recordUploadOutcome, type uploadTargetOutput } from "./domain/app-versions";
import { writeAuditRow } from "./domain/audit";
import { type GatewayConnection, streamArtifactToGateway } from "./gateway-client";
import { inMutationTransaction } from "./mutation-transaction";
import { type ErrorBody, errorResponseOf } from "./rest-errors";
import { createCaller } from "./root";
import { createTRPCContext, type TRPCContext } from "./trpc";

/** The REST path, relative to /api/v1. */
export const ARTIFACT_UPLOAD_PATH = /^\/apps\/([^/]+)\/versions\/([^/]+)\/artifact\/?$/;
export const ARTIFACT_UPLOAD_AUDIT_ACTION = "appVersion.upload";

export interface ArtifactUploadOptions {
  db: Db;
  gateway: GatewayConnection | null;
}

function answer(status: number, body: ErrorBody | unknown): Response {
  return Response.json(body, { status, headers: { "cache-control": "no-store" } });
}

/**
 * Answers one upload. `context`: the console's own (session) context; REST passes none and the
 * request's API key is used.
 */
export async function handleArtifactUpload(
  req: Request,
  ids: { appId: string; versionId: string },
  opts: ArtifactUploadOptions,
  context?: TRPCContext,
): Promise<Response> {
  if (req.method !== "PUT") {
    return new Response(
      JSON.stringify({ code: "METHOD_NOT_SUPPORTED", message: "use PUT with the artifact as the body" }),
      {
        status: 405,
        headers: { allow: "PUT", "content-type": "application/json" },
      },
    );
  }
  const caller = createCaller(
    context ??
      createTRPCContext({
        db: opts.db,
        session: null,
        activeOrganizationSlug: null,
        authorization: req.headers.get("authorization") ?? "",
      }),
  );
  let target: Awaited<ReturnType<typeof caller.appVersion.uploadTarget>>;
  try {
    target = await caller.appVersion.uploadTarget({ appId: ids.appId, id: ids.versionId });
  } catch (error) {
    return errorResponseOf(error);
  }
  if (!req.body) {
    return answer(400, { code: "BAD_REQUEST", message: "send the artifact's bytes as the request body" });
  }
  const declaredLength = req.headers.get("content-length");
  const contentLength = declaredLength === null ? null : Number(declaredLength);
  if (contentLength !== null && !(Number.isSafeInteger(contentLength) && contentLength > 0)) {
    return answer(400, { code: "BAD_REQUEST", message: "the artifact must not be empty" });
  }

  const stored = await streamArtifactToGateway(opts.gateway, {
    organizationId: target.organizationId,
    body: req.body,
    contentLength,
    declaredSha256: target.declaredSha256,
  });
  if (stored.ok) {
    const recorded = await record(opts.db, target, { ready: { sha256: stored.sha256, size: stored.size } });
    if (!recorded) return conflict();
    return answer(200, JSON.parse(JSON.stringify(recorded)));
  }
  if (stored.field === "sha256") {
    const recorded = await record(opts.db, target, { failed: stored.error });
    if (!recorded) return conflict();
    return answer(400, {
      code: "BAD_REQUEST",
      message: `the artifact does not match the version's sha256; the version failed: ${stored.error}`,
      issues: [{ path: ["sha256"], message: stored.error }],
    } satisfies ErrorBody);
  }
  if (stored.status === 413) {
    return answer(413, {
      code: "PAYLOAD_TOO_LARGE",
      message: `${stored.error}; nothing was kept, the version still waits for its artifact`,
    } satisfies ErrorBody);
  }
  if (stored.status === 400 || stored.status === 0) {
    return answer(400, {
      code: "BAD_REQUEST",
      message: `${stored.error}; nothing was kept, the version still waits for its artifact`,
    } satisfies ErrorBody);
  }
  if (stored.status === 404) return answer(404, { code: "NOT_FOUND", message: stored.error });
  return answer(503, {
    code: "SERVICE_UNAVAILABLE",
    message: `the gateway could not store the artifact: ${stored.error}`,
  } satisfies ErrorBody);
}

function conflict(): Response {
  return answer(409, {
    code: "CONFLICT",
    message: "another upload settled this version's artifact first; versions are immutable",
  } satisfies ErrorBody);
}

/** The outcome on the version and its audit row, one transaction (as every mutation). */
async function record(
  db: Db,
  target: z.infer<typeof uploadTargetOutput>,
  outcome: Parameters<typeof recordUploadOutcome>[2],
) {
  return inMutationTransaction(db, async (tx) => {
    const change = await recordUploadOutcome(tenantDb(tx, target.organizationId), target, outcome);
    if (!change) return null;
    await writeAuditRow(tx, {
      organizationId: target.organizationId,
      actor: target.actor,
      action: ARTIFACT_UPLOAD_AUDIT_ACTION,
      targetType: "appVersion",
      change: { targetId: target.versionId, before: change.before, after: change.after },
    });
    return change.after;
  });
}
