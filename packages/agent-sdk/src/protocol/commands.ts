/**
 * Node operations (issue 13): commands the control plane sends a node and the node answers.
 * The request travels down on the node's one downlink subject `ef.down.<wid>` (no new per-node
 * subscription: SETUP-FACTS.md, "one wildcard per node"), told apart from a DesiredDelta by its
 * `cmd` key; the reply goes up on the node's own `ef.up.<wid>.cmd`, so the subject the server let
 * through says which node answered. docs/protocol.md, "Commands".
 */

/** What a node can be asked to do. App commands name the app in `app`. */
export const COMMANDS = ["restart", "stop", "start", "health", "diag", "report"] as const;
export type Command = (typeof COMMANDS)[number];

/** Commands that act on one app (`app` required). */
export const APP_COMMANDS = ["restart", "stop", "start", "health"] as const satisfies readonly Command[];
export type AppCommand = (typeof APP_COMMANDS)[number];

export function isAppCommand(command: Command): command is AppCommand {
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
