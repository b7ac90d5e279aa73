import { APP_COMMANDS, COMMANDS, type Command, isAppCommand } from "@edgefleet/agent-sdk/commands";
import { z } from "zod";

export { isAppCommand };

/** Nodes one call names (a page of the nodes table's selection). */
export const MAX_COMMAND_NODES = 100;

/** What a command asks, apart from which nodes: the command, its app, how long to wait. */
export const nodeCommandFields = z.object({
  command: z.enum(COMMANDS),
  /** The app of restart, stop, start and health. */
  app: z.string().trim().min(1).max(128).optional(),
  /** How long to wait for each node (default 10 s). */
  timeoutSeconds: z.int().min(1).max(30).default(10),
});

/** The rule every command input keeps (the console's command form too): app commands name their app. */
export function requireAppOfAppCommands<
  Schema extends z.ZodType<{ command: Command; app?: string | undefined }>,
>(schema: Schema) {
  return schema.refine((input) => !isAppCommand(input.command) || input.app !== undefined, {
    message: `${APP_COMMANDS.join(", ")} name an app`,
    path: ["app"],
  });
}

export const nodeCommandInput = requireAppOfAppCommands(
  nodeCommandFields.extend({ id: z.uuid({ error: "node id must be a UUID" }) }),
);

export const bulkNodeCommandInput = requireAppOfAppCommands(
  nodeCommandFields.extend({
    nodeIds: z
      .array(z.uuid({ error: "node ids must be UUIDs" }))
      .min(1)
      .max(MAX_COMMAND_NODES),
  }),
).refine((input) => input.command !== "diag", {
  message: "diagnostics are collected from one node at a time (POST /nodes/{id}/commands)",
  path: ["command"],
});
