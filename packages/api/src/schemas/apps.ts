import { RESTART_POLICIES, runSpecSchema } from "@edgefleet/agent-sdk/run-spec";
import { z } from "zod";

export { RESTART_POLICIES, runSpecSchema };

/** App names: what agents call the app (a folder on the node), so path-safe label characters only. */
export const appName = z
  .string()
  .trim()
  .regex(
    /^[a-z0-9]([a-z0-9._-]{0,61}[a-z0-9])?$/,
    "app names: 1-63 lower-case letters, digits, . _ -, starting and ending with a letter or digit",
  );
const appDescription = z.string().trim().max(500);

export const appIdInput = z.object({ id: z.uuid() });
export const createAppInput = z.object({ name: appName, description: appDescription.optional() });
export const updateAppInput = z.object({
  id: z.uuid(),
  name: appName.optional(),
  /** null clears it. */
  description: appDescription.nullable().optional(),
});

/** Semver-like labels ("1.4.2", "2.0.0-rc.1+build.7"); what operators and agents see. */
export const versionLabel = z
  .string()
  .trim()
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$/,
    "version: 1-64 letters, digits, . + _ -, starting with a letter or digit (e.g. 1.4.2)",
  );
export const sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, "sha256 must be the 64 lower-case hex digits of the artifact's SHA-256");
export const httpsUrl = z
  .url({ protocol: /^https$/, error: "url must be an https:// URL" })
  .max(2048)
  .refine((value) => {
    const url = new URL(value);
    return !url.username && !url.password;
  }, "url must not carry credentials");

export const artifactInput = z.discriminatedUnion("source", [
  z.object({
    source: z.literal("url"),
    url: httpsUrl,
    /** If given, the imported content must hash to it (else the version fails). */
    sha256: sha256Hex.optional(),
  }),
  z.object({
    source: z.literal("upload"),
    /** If given, the uploaded content must hash to it (else the version fails). */
    sha256: sha256Hex.optional(),
  }),
]);

export const createVersionInput = z.object({
  appId: z.uuid(),
  version: versionLabel,
  runSpec: runSpecSchema,
  artifact: artifactInput,
});
