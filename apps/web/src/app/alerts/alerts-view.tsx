"use client";

import Link from "next/link";
import type { Role } from "~/components/role-reason";
import { ChannelsSection } from "./channels-section";
import { FiringSection } from "./firing-section";
import { HistorySection } from "./history-section";
import { PoliciesSection } from "./policies-section";
import { QuietHoursSection } from "./quiet-hours-section";
import { SilencesSection } from "./silences-section";

/**
 * The Alerts page (issue 12): what fires now and what was sent, silences and quiet hours, and
 * the policies and channels behind them. Evaluating, grouping and silencing are Mimir's (the
 * organization's own ruler and Alertmanager); this page reads and steers them through the API.
 */
export function AlertsView(props: { role: Role }) {
  return (
    <>
      <p className="text-sm text-muted-foreground">
        Your own phone and e-mail notifications are set in{" "}
        <Link href="/settings/notifications" className="text-primary underline underline-offset-2">
          notification settings
        </Link>
        .
      </p>
      <FiringSection role={props.role} />
      <SilencesSection role={props.role} />
      <QuietHoursSection role={props.role} />
      <PoliciesSection role={props.role} />
      <ChannelsSection role={props.role} />
      <HistorySection />
    </>
  );
}
