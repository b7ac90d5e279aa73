"use client";

import { useQueryClient } from "@tanstack/react-query";
import { useRouter } from "next/navigation";
import { useTransition } from "react";
import type { Membership } from "~/auth";
import { selectOrganization } from "~/server/actions";
import { NativeSelect } from "../ui/native-select";
import { toast } from "../ui/sonner";

export function OrganizationSwitcher(props: { memberships: Membership[]; activeSlug: string | null }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const [pending, startTransition] = useTransition();

  if (props.memberships.length === 0) return null;

  return (
    <NativeSelect
      aria-label="Organization"
      containerClassName="w-auto max-w-40 sm:max-w-56"
      className="h-8 text-sm"
      value={props.activeSlug ?? ""}
      disabled={pending}
      onChange={(event) => {
        const slug = event.target.value;
        startTransition(async () => {
          try {
            await selectOrganization(slug);
            // Every cached query belongs to the previous organization.
            queryClient.removeQueries();
            router.refresh();
          } catch (e) {
            toast.error(e instanceof Error ? e.message : "could not switch organization");
          }
        });
      }}
    >
      {props.memberships.map((m) => (
        <option key={m.slug} value={m.slug}>
          {m.name}
        </option>
      ))}
    </NativeSelect>
  );
}
