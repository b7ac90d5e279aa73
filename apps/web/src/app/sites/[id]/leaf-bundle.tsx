"use client";

import type { RouterOutputs } from "@edgefleet/api";
import {
  LEAF_CREDENTIALS_PATH,
  leafBundleInput,
  SITE_CACHE_DEFAULT_DIR,
  SITE_CACHE_DEFAULT_MAX_MIB,
} from "@edgefleet/api/schemas";
import { useMutation } from "@tanstack/react-query";
import { DownloadIcon } from "lucide-react";
import { useEffect, useState } from "react";
import { z } from "zod";
import { ApiForm } from "~/components/forms/api-form";
import { CheckboxField, TextField } from "~/components/forms/fields";
import { FormFooter } from "~/components/forms/form-footer";
import { textFor } from "~/components/forms/text-fields";
import { showServerError, useApiForm } from "~/components/forms/use-api-form";
import { Alert } from "~/components/ui/alert";
import { Button } from "~/components/ui/button";
import { CardDescription } from "~/components/ui/card";
import { useTRPC } from "~/trpc/react";

type Bundle = RouterOutputs["site"]["leafBundle"];

/** The API's input, the cache size typed as text (judged by the API's own rule). */
const leafBundleForm = leafBundleInput.extend({
  siteCacheMaxMiB: textFor(
    z.string().transform((text) => (text.trim() ? Number(text) : undefined)),
    leafBundleInput.shape.siteCacheMaxMiB,
  ),
});

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
  const form = useApiForm(leafBundleForm, {
    id: props.siteId,
    listen: "0.0.0.0:4222",
    credentialsPath: LEAF_CREDENTIALS_PATH,
    siteCache: true,
    siteCacheDir: SITE_CACHE_DEFAULT_DIR,
    siteCacheMaxMiB: String(SITE_CACHE_DEFAULT_MAX_MIB),
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
  const siteCache = form.watch("siteCache") ?? true;
  const dir = credentialsPath.slice(0, credentialsPath.lastIndexOf("/")) || "/";

  return (
    <>
      <CardDescription>
        The leaf node is a nats-server on a machine at the site: the site&apos;s agents connect to it, and it
        keeps one link to the cloud. With the site artifact cache, it keeps a copy of each artifact its nodes
        need (seeded before their rollout batch), so the site&apos;s uplink carries an artifact once, not once
        per node. Every generation mints new site credentials.
      </CardDescription>
      <ApiForm form={form} label="Generate the leaf bundle" mutation={generate}>
        <TextField name="listen" label="Agents connect to (host:port)" accessibleName="Listen address" />
        <TextField
          name="credentialsPath"
          label="site.creds on the leaf machine"
          accessibleName="Credentials path"
        />
        <CheckboxField name="siteCache" label="Run the site artifact cache" />
        {siteCache ? (
          <>
            <TextField
              name="siteCacheDir"
              label="Cache directory on the leaf machine"
              accessibleName="Site cache directory"
            />
            <TextField
              name="siteCacheMaxMiB"
              label="Cache size (MiB)"
              accessibleName="Site cache size"
              inputMode="numeric"
              description="Least recently used artifacts are evicted first."
            />
          </>
        ) : null}
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
