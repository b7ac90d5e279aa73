import { z } from "zod";
import {
  ARTIFACT_CHUNK_ERRORS,
  MAX_ARTIFACT_BYTES,
  MAX_ARTIFACT_CHUNK_BYTES,
  SHA256_HEX_PATTERN,
} from "./artifacts.js";
import {
  COMMAND_ERRORS,
  COMMAND_ID_PATTERN,
  COMMAND_REPLY_LIMIT,
  DIAG_MAX_CONFIG_ENTRIES,
  DIAG_MAX_LOG_LINE_CHARS,
  DIAG_MAX_LOG_LINES,
  isAppCommand,
  LOG_END_REASONS,
  LOG_MAX_BUDGET_BYTES,
  LOG_MAX_CREDIT_BYTES,
  LOG_MAX_LINE_BYTES,
  LOG_MAX_TAIL_LINES,
  PROBE_MAX_BYTES,
  PROBE_MAX_MS,
  PROBE_TARGETS,
  WIRE_COMMANDS,
} from "./commands.js";
import { runSpecSchema } from "./run-spec.js";
import { WIRE_ID_PATTERN } from "./subjects.js";

/** The protocol version every message carries in `v`. */
export const PROTOCOL_VERSION = 1;

const version = z.literal(PROTOCOL_VERSION);
const wireId = z.string().regex(WIRE_ID_PATTERN, "wire id must be [0-9a-z]{1,20}");
const count = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
/**
 * Values stored in a Postgres `integer` column (revisions, restarts) stay inside int4: a schema-valid
 * message must be storable, or it would fail at every redelivery (issue 8, #4 and #10).
 */
export const INT4_MAX = 2_147_483_647;
const int4Count = z.int().min(0).max(INT4_MAX);
const revision = int4Count;
const sequence = z.int().min(1).max(Number.MAX_SAFE_INTEGER);
const epochMillis = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Text that Postgres can store: it refuses NUL in `text`, so a NUL is a schema error here. */
const text = (min: number, max: number) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((value) => !value.includes("\u0000"), "must not contain NUL (U+0000)");
const shortText = text(1, 64);
const curveKey = z.string().regex(/^X[A-Z2-7]{55}$/, "must be a public curve nkey (X + 55 base32 chars)");
/** App key in deltas and reports: the app's name, unique in the organization. */
const appName = text(1, 128);
const versionLabel = text(1, 128);
const reason = text(0, 256);
const sha256Hex = z.string().regex(SHA256_HEX_PATTERN, "must be a lowercase hex SHA-256 (64 characters)");

export const INSTANCE_STATES = ["pending", "pulling", "starting", "running", "failed", "stopped"] as const;
export type InstanceState = (typeof INSTANCE_STATES)[number];

/** A node's user JWT (header.claims.signature, base64url); its permissions name its subjects. */
const nodeJwt = z
  .string()
  .min(1)
  .max(6144)
  .regex(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, "jwt must be a JWT (three base64url parts)");

export const enrollRequestSchema = z.object({
  v: version,
  tok: text(1, 256),
  /** The node's public user nkey ("U..."); the seed never leaves the node. */
  key: z.string().regex(/^U[A-Z2-7]{55}$/, "key must be a public user nkey (U + 55 base32 chars)"),
  name: text(1, 128),
  lab: z.record(text(1, 63), text(0, 255)).optional(),
  av: shortText,
  os: shortText,
  arch: shortText,
  /** The requester's one-time X25519 curve nkey ("X…"): the reply is sealed to it (issue 8, #3). */
  xk: curveKey,
  /** Proof of possession of `key`: its Ed25519 signature of enrollProofPayload(tok, xk), base64url. */
  sig: z.string().regex(/^[A-Za-z0-9_-]{86}$/, "sig must be a base64url Ed25519 signature (86 chars)"),
});

export const ENROLL_STATUSES = ["approved", "pending", "rejected"] as const;

/** What the gateway answers an enrollment, sealed to the requester's `xk` inside EnrollReply.box. */
export const enrollReplyBodySchema = z
  .object({
    v: version,
    st: z.enum(ENROLL_STATUSES),
    nid: z.string().min(1).max(64).optional(),
    wid: wireId.optional(),
    org: wireId.optional(),
    jwt: nodeJwt.optional(),
    err: reason.optional(),
    /** Pending only: seconds the agent should wait before asking again. */
    retry: z.int().min(1).max(3600).optional(),
  })
  .refine(
    (reply) =>
      reply.st !== "approved" ||
      (reply.nid !== undefined &&
        reply.wid !== undefined &&
        reply.org !== undefined &&
        reply.jwt !== undefined),
    { message: "an approved reply carries nid, wid, org and jwt" },
  );

/**
 * The enrollment reply on the wire. Anyone with the public enroll credentials can subscribe to
 * every reply inbox of the ENROLL account, so the answer (node id, wire ids, user JWT) travels
 * sealed to the requester's one-time curve key: `xk` is the gateway's one-time curve key, `box`
 * the nkeys-sealed EnrollReplyBody (base64url). Only a request too malformed to seal to gets a
 * plain `rejected` answer, which says nothing about anybody.
 */
export const enrollReplySchema = z.union([
  z.object({
    v: version,
    xk: curveKey,
    box: z
      .string()
      .min(1)
      .max(12 * 1024)
      .regex(/^[A-Za-z0-9_-]+$/),
  }),
  z.object({ v: version, st: z.literal("rejected"), err: reason }),
]);

export const helloSchema = z.object({
  v: version,
  av: shortText,
  os: shortText,
  arch: shortText,
  /** Random id of this agent process run: the gateway sees restarts. */
  boot: text(1, 64),
  /** Last desired revision the agent applied (0: none). */
  rev: revision,
});

/**
 * The artifact of a version (absent: the run spec's command runs as it is, nothing to fetch).
 * `sha` is the SHA-256 the agent verifies; `obj` names the object to fetch over `art` when it is
 * not `sha` itself (objects are named by their content's SHA-256, so `obj` ≠ `sha` only when the
 * version's stated hash is wrong, and then the agent refuses the download). Never a URL: nodes
 * fetch over NATS only.
 */
export const artifactRefSchema = z.object({ sha: sha256Hex, obj: sha256Hex.optional() });

export const desiredPutSchema = z.object({
  app: appName,
  ver: versionLabel,
  spec: runSpecSchema,
  art: artifactRefSchema.optional(),
});

/** Delta body, shared by DesiredDelta and HelloReply.d. */
const deltaFields = {
  from: revision,
  to: revision,
  put: z.array(desiredPutSchema).max(1024),
  del: z.array(appName).max(1024),
};
const fromNotAfterTo = {
  check: (delta: { from: number; to: number }) => delta.from <= delta.to,
  message: { message: "delta from must not be after to" },
};

export const desiredDeltaBodySchema = z
  .object(deltaFields)
  .refine(fromNotAfterTo.check, fromNotAfterTo.message);
export const desiredDeltaSchema = z
  .object({ v: version, ...deltaFields })
  .refine(fromNotAfterTo.check, fromNotAfterTo.message);

export const helloReplySchema = z.object({
  v: version,
  /** Heartbeat interval, seconds. */
  hb: z.int().min(1).max(3600),
  /** Metrics interval, seconds. */
  mx: z.int().min(1).max(86_400),
  /** Everything stamped after Hello.rev, or null when the agent is up to date. */
  d: desiredDeltaBodySchema.nullable(),
  /**
   * New credentials (a user JWT for the node's own key) when the Hello came on subjects that are
   * not the node's current ones: credentials of subject layout 1, or of the site the node left.
   * The agent stores them and connects again with them (docs/protocol.md "Credentials").
   */
  jwt: nodeJwt.optional(),
  /**
   * Reports quiet the heartbeat: the gateway counts each MetricsReport the hub stored as a sign of
   * life, so the agent sends no heartbeat while a metrics report was acknowledged within the last
   * heartbeat interval (and a twentieth, so a report on the same period wins). Absent: heartbeats
   * every interval (gateways before this field).
   */
  rq: z.boolean().optional(),
});

/**
 * New credentials pushed on the node's downlink (a node moved to another site): the agent stores
 * them and connects again with them, as with HelloReply.jwt.
 */
export const credentialsUpdateSchema = z.object({ v: version, jwt: nodeJwt });

export const heartbeatSchema = z.object({ v: version, s: count });

export const desiredAckSchema = z.object({ v: version, rev: revision });

export const instanceStatusSchema = z.object({
  app: appName,
  /** Observed (running) version; absent before the first start. */
  ver: versionLabel.optional(),
  /**
   * State of the instance. While `tgt` is present it is the state of the switch to `tgt`
   * (`pulling`, `starting`, or `failed` with `why`), and `ver` is what still runs.
   */
  st: z.enum(INSTANCE_STATES),
  why: reason.optional(),
  /** Restarts since the agent took this version (an `integer` column). */
  rs: int4Count,
  /** Version the agent is switching to, or failed to switch to (added with artifacts; optional). */
  tgt: versionLabel.optional(),
  /** While pulling: artifact bytes on disk, and the artifact's size once known. */
  pb: count.optional(),
  pt: count.optional(),
});

export const statusReportSchema = z.object({
  v: version,
  seq: sequence,
  at: epochMillis,
  /** Full snapshot of the node's instances: an app absent here has no instance on the node. */
  inst: z.array(instanceStatusSchema).max(512),
});

/** Chunk request (agent → gateway, on the agent's own `ef.up.<site>.<wid>.art`). */
export const artifactChunkRequestSchema = z.object({
  v: version,
  /** Object name: lowercase hex SHA-256 of the artifact's content. */
  obj: sha256Hex,
  /** Byte offset; equal to the size asks for nothing but the size. */
  off: z.int().min(0).max(MAX_ARTIFACT_BYTES),
  len: z.int().min(1).max(MAX_ARTIFACT_CHUNK_BYTES),
});

/** Chunk reply: the bytes `[off, off + data.length)` of an object of `size` bytes, or an error. */
export const artifactChunkReplySchema = z
  .object({
    v: version,
    off: count.optional(),
    /** Size of the whole object, bytes. */
    size: count.optional(),
    data: z
      .custom<Uint8Array>((value) => value instanceof Uint8Array, { message: "data must be binary" })
      .refine((data) => data.byteLength <= MAX_ARTIFACT_CHUNK_BYTES, {
        message: `a chunk carries at most ${MAX_ARTIFACT_CHUNK_BYTES} bytes`,
      })
      .optional(),
    err: z.enum(ARTIFACT_CHUNK_ERRORS).optional(),
    why: reason.optional(),
  })
  .refine(
    (reply) =>
      reply.err !== undefined
        ? reply.off === undefined && reply.data === undefined
        : reply.off !== undefined && reply.size !== undefined && reply.data !== undefined,
    { message: "a chunk reply carries either err, or off, size and data" },
  );

const commandId = z.string().regex(COMMAND_ID_PATTERN, "id must be [A-Za-z0-9_-]{1,32}");

/** Command request (gateway → agent, on the node's `ef.down.<site>.<wid>.<token>`; told from a delta by `cmd`). */
export const commandRequestSchema = z
  .object({
    v: version,
    id: commandId,
    cmd: z.enum(WIRE_COMMANDS),
    /** The app an app command (restart, stop, start, health) or a log session acts on. */
    app: appName.optional(),
    /** logs: lines of history to start with. */
    n: z.int().min(0).max(LOG_MAX_TAIL_LINES).optional(),
    /** logs: keep streaming new lines after the history (false: history only, then `done`). */
    f: z.boolean().optional(),
    /** logs: the session's hard byte budget (bytes of lines, all parts together). */
    bud: z.int().min(1).max(LOG_MAX_BUDGET_BYTES).optional(),
    /** logs (initial) and credit (more): bytes the node may send before it hears more credit. */
    cr: z.int().min(0).max(LOG_MAX_CREDIT_BYTES).optional(),
    /** probe: where to. */
    to: z.enum(PROBE_TARGETS).optional(),
    /** probe: bytes to send at most, and time to take at most. */
    by: z.int().min(1).max(PROBE_MAX_BYTES).optional(),
    ms: z.int().min(1).max(PROBE_MAX_MS).optional(),
  })
  .refine((request) => !(isAppCommand(request.cmd) || request.cmd === "logs") || request.app !== undefined, {
    message: "restart, stop, start, health and logs name an app",
    path: ["app"],
  })
  .refine((request) => request.cmd !== "logs" || request.bud !== undefined, {
    message: "logs carries its byte budget bud",
    path: ["bud"],
  })
  .refine((request) => request.cmd !== "credit" || request.cr !== undefined, {
    message: "credit carries cr",
    path: ["cr"],
  })
  .refine(
    (request) =>
      request.cmd !== "probe" ||
      (request.to !== undefined && request.by !== undefined && request.ms !== undefined),
    { message: "probe carries to, by and ms", path: ["to"] },
  );

/** One part of a log session's stream (`lg` of a CommandReply). */
export const logPartSchema = z.object({
  /** Part number: 0 is the history, then 1, 2, … */
  p: count,
  /** Lines, oldest first, sanitized by the node (no control characters, cut to the line limit). */
  l: z.array(text(0, LOG_MAX_LINE_BYTES + 64)).max(LOG_MAX_TAIL_LINES),
  /** Lines the node's ring lost before they could be sent (the viewer read too slowly). */
  lost: count.optional(),
  /** Present on the last part: why the session ended. */
  end: z.enum(LOG_END_REASONS).optional(),
});

/** A probe's result (`prb` of a CommandReply). */
export const probeResultSchema = z.object({
  to: z.enum(PROBE_TARGETS),
  /** Bytes that got through, and how long that took (ms). */
  by: count,
  ms: count,
  /** The server that took them (the leaf's or hub's URL as the agent knows it). */
  via: text(0, 256).optional(),
});

/** Diagnostics bundle (`diag` of a CommandReply): what an operator needs to see, no secret. */
export const diagnosticsSchema = z.object({
  av: shortText,
  os: shortText,
  arch: shortText,
  /** Seconds since the agent started. */
  up: count,
  /** Agent settings, secrets left out (credentials are named by path, never included). */
  cfg: z
    .record(text(1, 64), text(0, 512))
    .refine((cfg) => Object.keys(cfg).length <= DIAG_MAX_CONFIG_ENTRIES, {
      message: `at most ${DIAG_MAX_CONFIG_ENTRIES} settings`,
    }),
  /** Disk used and total of the filesystem holding the state dir, bytes. */
  du: count,
  dt: count,
  /** The agent's own recent log, oldest first. */
  log: z.array(text(0, DIAG_MAX_LOG_LINE_CHARS)).max(DIAG_MAX_LOG_LINES),
  inst: z.array(instanceStatusSchema).max(512),
});

/**
 * Command reply (agent → gateway, core publish on the node's own `ef.up.<site>.<wid>.cmd`). `ok` false
 * carries `err` and `why`; the result fields depend on the command: `inst` (app commands: the
 * instance after the action), `hl` (health: the check's result), `diag`, `rep` (report: the
 * sequences of the status and metrics reports it queued).
 */
export const commandReplySchema = z
  .object({
    v: version,
    id: commandId,
    ok: z.boolean(),
    err: z.enum(COMMAND_ERRORS).optional(),
    why: reason.optional(),
    inst: instanceStatusSchema.optional(),
    hl: z.object({ ok: z.boolean(), why: reason.optional() }).optional(),
    diag: diagnosticsSchema.optional(),
    rep: z.object({ st: count, mx: count }).optional(),
    lg: logPartSchema.optional(),
    prb: probeResultSchema.optional(),
  })
  .refine((reply) => reply.ok === (reply.err === undefined), {
    message: "a failed reply carries err, a successful one does not",
    path: ["err"],
  });

export const CONTROL_MESSAGE_TYPES = [
  "enroll",
  "hello",
  "hb",
  "st",
  "mx",
  "ack",
  "delta",
  "art",
  "cmd",
] as const;
export type ControlMessageType = (typeof CONTROL_MESSAGE_TYPES)[number];

export const metricsReportSchema = z.object({
  v: version,
  seq: sequence,
  at: epochMillis,
  /** Host CPU busy over the interval, per mille of all cores (0–1000). */
  cpu: z.int().min(0).max(1000),
  /** Memory used (total − available) and total, bytes. */
  mu: count,
  mt: count,
  /** Disk used and total of the filesystem holding the agent's state dir, bytes. */
  du: count,
  dt: count,
  /** Round trip to the server, microseconds; absent when not measured. */
  rtt: count.optional(),
  /** Cumulative bytes received/sent per interface (lo skipped, at most 4). */
  net: z.array(z.object({ if: text(1, 32), rx: count, tx: count })).max(4),
  /** Per app: CPU per mille of one core over the interval, resident memory bytes. */
  apps: z.array(z.object({ app: appName, cpu: count, mem: count })).max(64),
  /** Cumulative control-plane bytes [sent, received] per message type since the agent started. */
  ctl: z.partialRecord(z.enum(CONTROL_MESSAGE_TYPES), z.tuple([count, count])),
});

export const messageSchemas = {
  enrollRequest: enrollRequestSchema,
  enrollReply: enrollReplySchema,
  enrollReplyBody: enrollReplyBodySchema,
  hello: helloSchema,
  helloReply: helloReplySchema,
  credentialsUpdate: credentialsUpdateSchema,
  heartbeat: heartbeatSchema,
  desiredDelta: desiredDeltaSchema,
  desiredAck: desiredAckSchema,
  statusReport: statusReportSchema,
  metricsReport: metricsReportSchema,
  artifactChunkRequest: artifactChunkRequestSchema,
  artifactChunkReply: artifactChunkReplySchema,
  commandRequest: commandRequestSchema,
  commandReply: commandReplySchema,
} as const;

export type MessageType = keyof typeof messageSchemas;
export const MESSAGE_TYPES = Object.keys(messageSchemas) as MessageType[];

/** Largest encoded payload a receiver accepts, per message. */
export const MESSAGE_SIZE_LIMITS: Record<MessageType, number> = {
  enrollRequest: 4 * 1024,
  // The sealed body (≤ 8 KiB) in base64url, plus its nonce and MAC.
  enrollReply: 12 * 1024,
  enrollReplyBody: 8 * 1024,
  hello: 1024,
  helloReply: 1024 * 1024,
  credentialsUpdate: 8 * 1024,
  heartbeat: 64,
  desiredDelta: 1024 * 1024,
  desiredAck: 64,
  statusReport: 64 * 1024,
  metricsReport: 16 * 1024,
  artifactChunkRequest: 128,
  artifactChunkReply: MAX_ARTIFACT_CHUNK_BYTES + 512,
  commandRequest: 512,
  commandReply: COMMAND_REPLY_LIMIT,
};

export type MessageOf<T extends MessageType> = z.output<(typeof messageSchemas)[T]>;

export type EnrollRequest = MessageOf<"enrollRequest">;
export type EnrollReply = MessageOf<"enrollReply">;
export type EnrollReplyBody = MessageOf<"enrollReplyBody">;
export type Hello = MessageOf<"hello">;
export type HelloReply = MessageOf<"helloReply">;
export type CredentialsUpdate = MessageOf<"credentialsUpdate">;
export type Heartbeat = MessageOf<"heartbeat">;
export type DesiredDelta = MessageOf<"desiredDelta">;
export type DesiredDeltaBody = z.output<typeof desiredDeltaBodySchema>;
export type DesiredPut = z.output<typeof desiredPutSchema>;
export type DesiredAck = MessageOf<"desiredAck">;
export type StatusReport = MessageOf<"statusReport">;
export type InstanceStatus = z.output<typeof instanceStatusSchema>;
export type MetricsReport = MessageOf<"metricsReport">;
export type ArtifactRef = z.output<typeof artifactRefSchema>;
export type ArtifactChunkRequest = MessageOf<"artifactChunkRequest">;
export type ArtifactChunkReply = MessageOf<"artifactChunkReply">;
export type CommandRequest = MessageOf<"commandRequest">;
export type CommandReply = MessageOf<"commandReply">;
export type Diagnostics = z.output<typeof diagnosticsSchema>;
export type LogPart = z.output<typeof logPartSchema>;
export type ProbeResult = z.output<typeof probeResultSchema>;
