/**
 * Node operations (issue 13): commands the control plane sends a node and the node answers.
 * The request travels down on the node's one downlink subject `ef.down.<site>.<wid>.<token>` (no new per-node
 * subscription: SETUP-FACTS.md, "one wildcard per node"), told apart from a DesiredDelta by its
 * `cmd` key; the reply goes up on the node's own `ef.up.<site>.<wid>.cmd`, so the subject the server let
 * through says which node answered. docs/protocol.md, "Commands".
 */

/** What a node can be asked to do. App commands name the app in `app`. */
export const COMMANDS = ["restart", "stop", "start", "health", "diag", "report"] as const;
export type Command = (typeof COMMANDS)[number];

/** Commands that act on one app (`app` required). */
export const APP_COMMANDS = ["restart", "stop", "start", "health"] as const satisfies readonly Command[];
export type AppCommand = (typeof APP_COMMANDS)[number];

export function isAppCommand(command: string): command is AppCommand {
  return (APP_COMMANDS as readonly string[]).includes(command);
}

/**
 * Why a node refused or failed a command (`err` of a CommandReply). The cloud side adds its own
 * codes for what never reached a node (offline, timeout, busy, bad_reply: see the gateway).
 */
export const COMMAND_ERRORS = [
  /** The node has no such app. */
  "unknown_app",
  /** The app has nothing to act on yet (no version started), or no health check to run. */
  "not_running",
  "no_health_check",
  /** This agent does not implement the command. */
  "unsupported",
  /** The command ran and failed (`why` says how). */
  "failed",
  /** The node already runs as many commands as it takes at once (4). */
  "busy",
] as const;
export type CommandError = (typeof COMMAND_ERRORS)[number];

/** Request ids: chosen by the gateway, unique among its pending requests. */
export const COMMAND_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

/** Bounds of a diagnostics bundle: the agent drops its oldest log lines until the reply fits. */
export const DIAG_MAX_LOG_LINES = 200;
export const DIAG_MAX_LOG_LINE_CHARS = 512;
export const DIAG_MAX_CONFIG_ENTRIES = 64;

/** Commands one agent works on at once; more are answered `busy`. */
export const AGENT_MAX_COMMANDS_IN_FLIGHT = 4;

/** Largest CommandReply (a diagnostics bundle); the gateway refuses a bigger one unread. */
export const COMMAND_REPLY_LIMIT = 128 * 1024;

/**
 * Streams and probes (docs/protocol.md, "Live logs" and "Network probes"). They ride the same
 * CommandRequest/CommandReply path but are not operator one-shot commands, so they sit next to
 * `COMMANDS` instead of in it (the API's command enum stays the one-shot list).
 * - `logs`: open a log session on an app; the node answers part 0 (history) at once, then more
 *   parts under the same `id` while it holds credit, within the session's byte budget.
 * - `credit`: grants a session `cr` more bytes (0: keepalive only). A session hearing neither
 *   credit nor anything else for `LOG_SESSION_LEASE_MS` ends itself (`lapsed`).
 * - `cancel`: ends the session `id` (the viewer left).
 * - `probe`: a throughput probe to the leaf or the hub; one reply (`prb`).
 */
export const STREAM_COMMANDS = ["logs", "credit", "cancel", "probe"] as const;
export type StreamCommand = (typeof STREAM_COMMANDS)[number];
export const WIRE_COMMANDS = [...COMMANDS, ...STREAM_COMMANDS] as const;
export type WireCommand = (typeof WIRE_COMMANDS)[number];

/** Lines of history a session starts with (at most). */
export const LOG_MAX_TAIL_LINES = 1000;
/** A log line longer than this (UTF-8 bytes) is cut, saying how much was dropped. */
export const LOG_MAX_LINE_BYTES = 2048;
/** Bytes of lines in one part (the part's encoding stays well under the reply limit). */
export const LOG_PART_BYTES = 16 * 1024;
/** Most credit a session may hold at once: what the node may send before the viewer reads it. */
export const LOG_MAX_CREDIT_BYTES = 256 * 1024;
/** Hard byte budget of one session, at most (the gateway asks for less). */
export const LOG_MAX_BUDGET_BYTES = 8 * 1024 * 1024;
/** A session that hears nothing (credit, keepalive) for this long ends by itself. */
export const LOG_SESSION_LEASE_MS = 30_000;
/** Sessions one agent serves at once; more are answered `busy`. */
export const AGENT_MAX_LOG_SESSIONS = 4;
/** Per app, the agent keeps this many bytes of recent output (the ring a session's history comes from). */
export const APP_LOG_RING_BYTES = 256 * 1024;
/** Why a session ended (`end` of its last part). */
export const LOG_END_REASONS = ["done", "budget", "cancelled", "lapsed", "app_gone", "shutdown"] as const;
export type LogEndReason = (typeof LOG_END_REASONS)[number];

/** Where a probe measures to: the site's leaf server (the node's own link), or the hub (the site's uplink too). */
export const PROBE_TARGETS = ["leaf", "hub"] as const;
export type ProbeTarget = (typeof PROBE_TARGETS)[number];
/** Bounds of one probe. */
export const PROBE_MAX_BYTES = 8 * 1024 * 1024;
export const PROBE_MAX_MS = 15_000;
/** Probe payload chunk (`ef.up.<site>.<wid>.prb` / `.sink`): the probe id, a 0 byte, filler. */
export const PROBE_CHUNK_BYTES = 16 * 1024;
/** Hub chunks in flight at once (each answered by the gateway). */
export const PROBE_WINDOW = 4;
