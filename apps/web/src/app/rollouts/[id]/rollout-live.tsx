"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { HourglassIcon } from "lucide-react";
import Link from "next/link";
import { DetailCard } from "~/components/detail-card";
import { ErrorNotice } from "~/components/error-notice";
import { RelativeTime } from "~/components/relative-time";
import { Alert } from "~/components/ui/alert";
import { Badge } from "~/components/ui/badge";
import { Section } from "~/components/ui/card";
import { Skeleton } from "~/components/ui/skeleton";
import { LiveIndicator } from "~/trpc/live-indicator";
import { useTRPC } from "~/trpc/react";
import { TimeChart } from "../../nodes/[id]/time-chart";
import { PlanView } from "../plan-view";
import { FINISHED_STATUSES, rolloutStatus } from "../status";
import { BatchProgressTable } from "./batch-progress";
import { RolloutActions } from "./rollout-actions";
import { RolloutGates } from "./rollout-gates";
import { RolloutHistory } from "./rollout-history";
import { SiteUplinks } from "./site-uplinks";

type Detail = RouterOutputs["rollout"]["byId"];
interface Wait {
  reason: string;
  message: string;
  until: number | null;
  siteId: string | null;
  nodes: number;
}

/** Moving rollouts are polled every two seconds; finished ones no more. */
const LIVE_MS = 2_000;

export function RolloutLive(props: { id: string }) {
  const trpc = useTRPC();
  const rollout = useQuery(
    trpc.rollout.byId.queryOptions(
      { id: props.id },
      {
        retry: false,
        refetchInterval: (query) =>
          query.state.data && FINISHED_STATUSES.has(query.state.data.status) ? false : LIVE_MS,
      },
    ),
  );
  if (rollout.error && !rollout.data) return <ErrorNotice error={rollout.error} />;
  if (!rollout.data) return <Skeleton className="h-48" aria-label="Loading the rollout" />;
  const data = rollout.data;
  const finished = FINISHED_STATUSES.has(data.status);
  return (
    <div className="grid gap-6">
      <Summary detail={data} live={finished ? null : rollout.isError ? "offline" : "live"} />
      <Section title="Progress" description="Nodes dispatched and running the version over time.">
        <TimeChart
          title="Nodes"
          unit="nodes"
          testId="rollout-chart"
          series={[
            { name: "dispatched", points: data.timeline.map((p) => [p.at, p.dispatched]) },
            { name: "running", points: data.timeline.map((p) => [p.at, p.running]) },
            ...(data.rollback
              ? [
                  {
                    name: "rolled back",
                    points: data.timeline.map((p) => [p.at, p.rolledBack] as [number, number]),
                  },
                ]
              : []),
          ]}
        />
        <BatchProgressTable
          label="Batches"
          name="rollout-batches"
          batches={[
            ...data.batches,
            ...(data.lateJoiners && data.lateJoiners.liveTally.nodes > 0 ? [data.lateJoiners] : []),
          ]}
        />
        {data.rollback && data.rollback.length > 0 ? (
          <BatchProgressTable label="Rollback batches" name="rollback-batches" batches={data.rollback} />
        ) : null}
      </Section>
      <SiteUplinks id={props.id} live={!finished} />
      <RolloutGates id={props.id} live={!finished} status={data.status} />
      <RolloutHistory detail={data} />
      {data.plan ? (
        <Section title="Plan" description="Frozen when the rollout started.">
          <PlanView plan={data.plan} />
        </Section>
      ) : null}
    </div>
  );
}

function Summary(props: { detail: Detail; live: "live" | "offline" | null }) {
  const d = props.detail;
  const status = rolloutStatus(d.status);
  const waits = (Array.isArray(d.waits) ? d.waits : []) as Wait[];
  const roleReason = Object.values(d.actions).find((a) => a.reason?.startsWith("needs the"))?.reason;
  return (
    <DetailCard
      id="rollout-title"
      title={
        <>
          <Link href={`/apps/${d.appId}`} className="text-primary hover:underline">
            {d.appName}
          </Link>{" "}
          → {d.version}
        </>
      }
      actions={
        <>
          {props.live ? <LiveIndicator state={props.live} /> : null}
          <Badge variant={status.variant} data-testid="rollout-status" data-status={d.status}>
            {status.label}
          </Badge>
        </>
      }
      facts={[
        ...(d.statusReason
          ? [{ term: "Why", value: <span data-testid="rollout-reason">{d.statusReason}</span> }]
          : []),
        {
          term: "Target",
          value: `${d.target.selector || "every node"}${d.target.siteIds.length > 0 ? ` · ${d.target.siteIds.length} site(s)` : ""}`,
          className: "font-mono break-all",
        },
        { term: "Created", value: <RelativeTime date={d.createdAt} /> },
        { term: "Started", value: <RelativeTime date={d.startedAt} never="not yet" /> },
        { term: "Finished", value: <RelativeTime date={d.finishedAt} never="not yet" /> },
      ]}
    >
      {waits.map((wait) => (
        <Alert
          key={`${wait.reason}-${wait.siteId}-${wait.message}`}
          variant="warning"
          data-testid="rollout-wait"
          data-reason={wait.reason}
        >
          <HourglassIcon aria-hidden />
          {wait.message}
          {wait.until ? (
            <>
              {" "}
              (until <RelativeTime date={new Date(wait.until)} />)
            </>
          ) : null}
        </Alert>
      ))}
      <RolloutActions detail={d} />
      {roleReason ? (
        <p className="text-xs text-muted-foreground" data-testid="actions-denied">
          Actions disabled: {roleReason}
        </p>
      ) : null}
    </DetailCard>
  );
}
