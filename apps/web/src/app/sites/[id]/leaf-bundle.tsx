"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { LEAF_CREDENTIALS_PATH, leafBundleInput } from "@edgefleet/api/schemas";
import { useMutation } from "@tanstack/react-query";
import { DownloadIcon } from "lucide-react";
import { useEffect, useState } from "react";
import { ApiForm } from "~/components/forms/api-form";
import { TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { Alert } from "~/components/ui/alert";
import { Button } from "~/components/ui/button";
import { CardDescription } from "~/components/ui/card";
import { useTRPC } from "~/trpc/react";

type Bundle = RouterOutputs["site"]["leafBundle"];

/** Object URLs for the bundle's files, released when the bundle is replaced or the page left. */
function useDownloadUrls(bundle: Bundle | null): Record<string, string> {
  const [urls, setUrls] = useState<Record<string, string>>({});
  useEffect(() => {
    if (!bundle) return setUrls({});
    const made = Object.fromEntries(
      bundle.files.map((file) => [
        file.name,
        URL.createObjectURL(new Blob([file.content], { type: "text/plain" })),
      ]),
    );
    setUrls(made);
    return () => {
      for (const url of Object.values(made)) URL.revokeObjectURL(url);
    };
  }, [bundle]);
  return urls;
}

/**
 * Generates the site's leaf-node configuration and credentials (minted by the gateway, which
 * holds the NATS keys) and offers them as downloads, with the steps to run the leaf node.
 */
export function LeafBundle(props: { siteId: string; disabledReason: string | null }) {
  const trpc = useTRPC();
  const [bundle, setBundle] = useState<Bundle | null>(null);
  const form = useApiForm(leafBundleInput, {
    id: props.siteId,
    listen: "0.0.0.0:4222",
    credentialsPath: LEAF_CREDENTIALS_PATH,
  });
  const generate = useMutation(
    trpc.site.leafBundle.mutationOptions({
      onSuccess: setBundle,
      onError: (error) => showServerError(form, error),
    }),
  );
  const urls = useDownloadUrls(bundle);
  const credentialsPath = form.watch("credentialsPath") ?? LEAF_CREDENTIALS_PATH;
  const listen = form.watch("listen") ?? "";
  const dir = credentialsPath.slice(0, credentialsPath.lastIndexOf("/")) || "/";

  return (
    <>
      <CardDescription>
        The leaf node is a nats-server on a machine at the site: the site&apos;s agents connect to it, and it
        keeps one link to the cloud. Every generation mints new site credentials.
      </CardDescription>
      <ApiForm form={form} label="Generate the leaf bundle" mutation={generate}>
        <TextField name="listen" label="Agents connect to (host:port)" accessibleName="Listen address" />
        <TextField
          name="credentialsPath"
          label="site.creds on the leaf machine"
          accessibleName="Credentials path"
        />
        <FormFooter
          label="Generate leaf bundle"
          pendingLabel="Generating…"
          disabledReason={props.disabledReason}
        />
      </ApiForm>
      {bundle ? (
        <div data-testid="leaf-bundle" className="grid gap-3 text-sm">
          <div className="flex flex-wrap gap-2">
            {bundle.files.map((file) => (
              <Button key={file.name} asChild variant="outline" size="sm">
                <a href={urls[file.name]} download={file.name}>
                  <DownloadIcon aria-hidden />
                  Download {file.name}
                </a>
              </Button>
            ))}
          </div>
          <Alert variant="warning">
            site.creds lets a machine act as this site: keep it on the leaf machine only, readable by the
            nats-server user alone.
          </Alert>
          <div className="grid gap-2">
            On the leaf machine (nats-server 2.10 or newer):
            <pre className="overflow-x-auto rounded-md border bg-muted p-3 text-xs">
              {[
                `sudo mkdir -p ${dir}`,
                `sudo cp ${bundle.files.map((file) => file.name).join(" ")} ${dir}/ && sudo chmod 600 ${bundle.files
                  .filter((file) => file.secret)
                  .map((file) => (file.name === "site.creds" ? credentialsPath : `${dir}/${file.name}`))
                  .join(" ")}`,
                `sudo ${bundle.runCommand}`,
              ].join("\n")}
            </pre>
            <span>
              Then point the site&apos;s agents at{" "}
              <code>nats://&lt;leaf machine&gt;:{listen.split(":").at(-1)}</code>.
            </span>
          </div>
        </div>
      ) : null}
    </>
  );
}
