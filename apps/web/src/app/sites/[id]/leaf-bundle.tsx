"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useMutation } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import table from "~/components/admin-table.module.css";
import { SubmitRow } from "~/components/submit-row";
import { useTRPC } from "~/trpc/react";
import styles from "../sites.module.css";

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
  const [listen, setListen] = useState("0.0.0.0:4222");
  const [credentialsPath, setCredentialsPath] = useState("/etc/edgefleet/site.creds");
  const [bundle, setBundle] = useState<Bundle | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const generate = useMutation(
    trpc.site.leafBundle.mutationOptions({
      onSuccess: (result) => {
        setProblem(null);
        setBundle(result);
      },
      onError: (error) => setProblem(error.message),
    }),
  );
  const urls = useDownloadUrls(bundle);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    generate.mutate({ id: props.siteId, listen, credentialsPath });
  };
  const dir = credentialsPath.slice(0, credentialsPath.lastIndexOf("/")) || "/";

  return (
    <>
      <p className={table.note}>
        The leaf node is a nats-server on a machine at the site: the site&apos;s agents connect to it, and it
        keeps one link to the cloud. Every generation mints new site credentials.
      </p>
      <form className={table.form} aria-label="Generate the leaf bundle" onSubmit={submit}>
        <label>
          <span>Agents connect to (host:port)</span>
          <input
            aria-label="Listen address"
            value={listen}
            onChange={(event) => setListen(event.target.value)}
          />
        </label>
        <label className={table.grow}>
          <span>site.creds on the leaf machine</span>
          <input
            aria-label="Credentials path"
            value={credentialsPath}
            onChange={(event) => setCredentialsPath(event.target.value)}
          />
        </label>
        <SubmitRow
          label="Generate leaf bundle"
          pendingLabel="Generating…"
          pending={generate.isPending}
          disabledReason={props.disabledReason}
          problem={problem}
        />
      </form>
      {bundle ? (
        <div data-testid="leaf-bundle">
          <div className={styles.downloads}>
            {bundle.files.map((file) => (
              <a key={file.name} className={styles.download} href={urls[file.name]} download={file.name}>
                Download {file.name}
              </a>
            ))}
          </div>
          <p className={styles.warning}>
            site.creds lets a machine act as this site: keep it on the leaf machine only, readable by the
            nats-server user alone.
          </p>
          <div className={styles.steps}>
            On the leaf machine (nats-server 2.10 or newer):
            <pre>
              {[
                `sudo mkdir -p ${dir}`,
                `sudo cp leaf.conf site.creds ${dir}/ && sudo chmod 600 ${credentialsPath}`,
                `sudo ${bundle.runCommand}`,
              ].join("\n")}
            </pre>
            Then point the site&apos;s agents at{" "}
            <code>nats://&lt;leaf machine&gt;:{listen.split(":").at(-1)}</code>.
          </div>
        </div>
      ) : null}
    </>
  );
}
