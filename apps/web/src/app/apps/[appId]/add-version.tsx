"use client";

import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { useWatch } from "react-hook-form";
import { formatBytes } from "~/app/fleet/top-bandwidth";
import { ApiForm } from "~/components/forms/api-form";
import { CheckboxField, SelectField, TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { Section } from "~/components/ui/card";
import { FormControl, FormField, FormItem, FormLabel, FormMessage } from "~/components/ui/form";
import { Input } from "~/components/ui/input";
import { toast } from "~/components/ui/sonner";
import { useTRPC } from "~/trpc/react";
import { uploadArtifact } from "./upload-artifact";
import { createVersionInputOf, versionFormDefaults, versionFormSchema } from "./version-form";

/**
 * Adds a version: the version is created first (immutable, artifact pending), then its file is
 * uploaded with progress, or the gateway imports its URL; the versions table polls the state.
 */
export function AddVersion(props: { appId: string; disabledReason: string | null }) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const form = useApiForm(versionFormSchema, versionFormDefaults);
  const source = useWatch({ control: form.control, name: "source" });
  const [progress, setProgress] = useState<{ sent: number; total: number } | null>(null);
  const refresh = () => queryClient.invalidateQueries(trpc.appVersion.list.queryFilter());
  const create = useMutation(
    trpc.appVersion.create.mutationOptions({
      onError: (error) => showServerError(form, error, { CONFLICT: "version" }),
    }),
  );
  const upload = useMutation({
    mutationFn: (input: { versionId: string; file: File }) =>
      uploadArtifact({ appId: props.appId, versionId: input.versionId }, input.file, (sent, total) =>
        setProgress({ sent, total }),
      ),
    onSettled: refresh,
  });
  const pending = create.isPending || upload.isPending;
  return (
    <Section
      title="Add version"
      description="The run command and the artifact (a .tar.gz unpacked into the app's folder, or a single binary). Nodes download it over NATS and check its SHA-256."
    >
      <ApiForm
        form={form}
        label="Add a version"
        className="sm:grid-cols-2"
        pending={pending}
        onSubmit={async (values) => {
          setProgress(null);
          const version = await create
            .mutateAsync(createVersionInputOf(props.appId, values))
            .catch(() => null);
          if (!version) return;
          await refresh();
          if (values.source === "upload" && values.file) {
            try {
              await upload.mutateAsync({ versionId: version.id, file: values.file });
              toast.success(`Uploaded ${version.version}`);
            } catch (error) {
              form.setError("root.server", {
                type: "server",
                message: `Version ${version.version} was created but its upload failed: ${(error as Error).message}`,
              });
              return;
            }
          } else {
            toast.success(`Added ${version.version}: the gateway imports its artifact`);
          }
          form.reset(versionFormDefaults);
        }}
      >
        <TextField name="version" label="Version" placeholder="1.4.2" />
        <TextField
          name="command"
          label="Command"
          placeholder="./collector --config /etc/collector.yaml"
          description="Run without a shell, from the app's folder."
        />
        <TextField name="env" label="Environment" placeholder="LOG_LEVEL=info, PORT=8080" />
        <SelectField
          name="restart"
          label="Restart"
          options={{ "": "always (default)", "on-failure": "on failure", never: "never" }}
        />
        <CheckboxField
          name="revertOnFailure"
          label="Go back to the previous version if this one fails to start"
        />
        <SelectField
          name="source"
          label="Artifact"
          options={{ upload: "Upload a file", url: "Import from an https URL" }}
        />
        {source === "url" ? (
          <TextField name="url" label="Artifact URL" placeholder="https://example.com/app-1.4.2.tar.gz" />
        ) : (
          <FormField
            control={form.control}
            name="file"
            render={({ field }) => (
              <FormItem>
                <FormLabel>Artifact file</FormLabel>
                <FormControl>
                  <Input
                    type="file"
                    name={field.name}
                    ref={field.ref}
                    onBlur={field.onBlur}
                    onChange={(event) => field.onChange(event.target.files?.[0] ?? null)}
                  />
                </FormControl>
                <FormMessage />
              </FormItem>
            )}
          />
        )}
        <TextField
          name="sha256"
          label="SHA-256 (optional)"
          placeholder="64 hex digits"
          description="If given, content that hashes otherwise is refused."
        />
        {progress ? (
          <div className="grid gap-1 sm:col-span-2">
            <progress
              aria-label="Upload progress"
              data-testid="upload-progress"
              className="h-2 w-full accent-primary"
              max={progress.total || 1}
              value={progress.sent}
            />
            <span className="text-xs text-muted-foreground tabular-nums">
              {formatBytes(progress.sent)} of {formatBytes(progress.total)}
              {upload.isPending ? " sent" : " uploaded"}
            </span>
          </div>
        ) : null}
        <FormFooter
          label="Add version"
          pendingLabel={upload.isPending ? "Uploading…" : "Adding…"}
          disabledReason={props.disabledReason}
        />
      </ApiForm>
    </Section>
  );
}
