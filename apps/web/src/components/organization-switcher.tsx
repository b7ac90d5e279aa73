"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useState, useTransition } from "react";
import type { Membership } from "~/auth";
import { selectOrganization } from "~/server/actions";

export function OrganizationSwitcher(props: { memberships: Membership[]; activeSlug: string | null }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();
  const [error, setError] = useState<string | null>(null);

  if (props.memberships.length === 0) return null;

  return (
    <>
      <select
        aria-label="Organization"
        value={props.activeSlug ?? ""}
        disabled={pending}
        onChange={(event) => {
          const slug = event.target.value;
          startTransition(async () => {
            try {
              await selectOrganization(slug);
              setError(null);
              // Every cached query belongs to the previous organization.
              queryClient.removeQueries();
              router.refresh();
            } catch (e) {
              setError(e instanceof Error ? e.message : "could not switch organization");
            }
          });
        }}
      >
        {props.memberships.map((m) => (
          <option key={m.slug} value={m.slug}>
            {m.name}
          </option>
        ))}
      </select>
      {error ? <span role="alert">{error}</span> : null}
    </>
  );
}
