import { httpsUrl, RESTART_POLICIES, runSpecSchema, sha256Hex, versionLabel } from "@edgefleet/api/schemas";
import { z } from "zod";
import { labelAssignmentsText, optionalChoice, textFor } from "~/components/forms/text-fields";

/** A command line typed as text: split on white space (no quoting: the agent runs it without a shell). */
const commandText = textFor(
  z.string().transform((text) => text.split(/\s+/).filter(Boolean)),
  runSpecSchema.shape.command,
);

/**
 * The "Add version" form: the fields of the API's createVersionInput as a person types them, each
 * judged by the API's own rule (label, command, env, restart policy, URL, SHA-256). The file to
 * upload is not part of the API's input: it is sent after the version exists.
 */
export const versionFormSchema = z
  .object({
    version: versionLabel,
    command: commandText,
    env: labelAssignmentsText(runSpecSchema.shape.env),
    restart: optionalChoice(z.enum(RESTART_POLICIES).optional()),
    revertOnFailure: z.boolean(),
    source: z.enum(["upload", "url"]),
    url: z.string().trim(),
    sha256: optionalChoice(sha256Hex.optional()),
    file: z.custom<File | null>((value) => value === null || value instanceof File),
  })
  .superRefine((form, ctx) => {
    if (form.source === "url") {
      for (const issue of httpsUrl.safeParse(form.url).error?.issues ?? []) {
        ctx.addIssue({ code: "custom", path: ["url"], message: issue.message });
      }
    } else if (!form.file) {
      ctx.addIssue({ code: "custom", path: ["file"], message: "choose the file to upload" });
    }
  });

export type VersionFormValues = z.output<typeof versionFormSchema>;

export const versionFormDefaults: z.input<typeof versionFormSchema> = {
  version: "",
  command: "",
  env: "",
  restart: "",
  revertOnFailure: true,
  source: "upload",
  url: "",
  sha256: "",
  file: null,
};

/** The API's createVersionInput from the form's parsed values. */
export function createVersionInputOf(appId: string, form: VersionFormValues) {
  const env = form.env && Object.keys(form.env).length > 0 ? form.env : undefined;
  return {
    appId,
    version: form.version,
    runSpec: {
      command: form.command,
      ...(env ? { env } : {}),
      ...(form.restart ? { restart: form.restart } : {}),
      revertOnFailure: form.revertOnFailure,
    },
    artifact:
      form.source === "url"
        ? { source: "url" as const, url: form.url, ...(form.sha256 ? { sha256: form.sha256 } : {}) }
        : { source: "upload" as const, ...(form.sha256 ? { sha256: form.sha256 } : {}) },
  };
}
