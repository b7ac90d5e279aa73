"use client";

import type { RouterOutputs } from "@edgefleet/api";
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { ErrorNotice } from "~/components/error-notice";
import { RelativeTime } from "~/components/relative-time";
import { Badge } from "~/components/ui/badge";
import { Section } from "~/components/ui/card";
import { useTRPC } from "~/trpc/react";
import { TimeChart } from "../../nodes/[id]/time-chart";
import { type GateSpec, gateOutcome, gateSpecText, outcomeEffect } from "./gate-text";

type Gates = RouterOutputs["rollout"]["gates"];
type GatedBatch = Gates["batches"][number];
type Verdict = GatedBatch["verdicts"][number];

const LIVE_MS = 2_000;
const number = new Intl.NumberFormat("en", { maximumSignificantDigits: 4 });
const fmt = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : number.format(value);
const pct = (value: number | null | undefined) =>
  value === null || value === undefined ? "—" : `${number.format(value * 100)}%`;

const STATE_TEXT: Record<GatedBatch["state"], string> = {
  not_started: "not started",
  installing: "installing: judged once every node runs the version",
  watching: "watching the window",
  judging: "window over: being judged",
  judged: "judged",
  not_judged: "not judged: the batch failed on install",
};

/**
 * Metric gates on the live page: per gated batch, where judging stands (polled while the rollout
 * moves), the canary-vs-baseline charts so far while its window is open, the batch's outcome and
 * what it made the rollout do, and per gate its verdict with its chart and the numbers that decided it.
 */
export function RolloutGates(props: { id: string; live: boolean; status: string }) {
  const trpc = useTRPC();
  const gates = useQuery(
    trpc.rollout.gates.queryOptions(
      { id: props.id },
      { retry: false, refetchInterval: props.live ? LIVE_MS : false },
    ),
  );
  // A verdict and the rollback it causes can land within one poll: when the status moves (to
  // rolled_back, say, which stops polling), read the gates once more so the verdict shows.
  const { refetch } = gates;
  useEffect(() => {
    if (props.status) void refetch();
  }, [props.status, refetch]);
  if (gates.error && !gates.data) return <ErrorNotice error={gates.error} />;
  if (!gates.data || gates.data.batches.length === 0) return null;
  const { actions } = gates.data;
  return (
    <Section
      title="Metric gates"
      description={`After a batch runs the version, its nodes (canary) are compared with comparable nodes on the old version (baseline) over each gate's window. A failed gate: ${actions.onFail}; inconclusive or no data: ${actions.onInconclusive}.`}
      data-testid="rollout-gates"
    >
      {gates.data.batches.map((batch) => (
        <GatedBatchView key={batch.batch} batch={batch} actions={actions} />
      ))}
    </Section>
  );
}

function GatedBatchView(props: { batch: GatedBatch; actions: Gates["actions"] }) {
  const { batch } = props;
  const outcome = batch.outcome ? gateOutcome(batch.outcome) : null;
  const specs = batch.gates as GateSpec[];
  return (
    <div
      className="grid gap-3 rounded-lg border p-3"
      data-testid="gated-batch"
      data-batch={batch.batch}
      data-state={batch.state}
      data-outcome={batch.outcome ?? ""}
    >
      <div className="flex flex-wrap items-center gap-2">
        <h3 className="mr-auto text-sm font-medium">Batch {batch.batch + 1}</h3>
        <span className="text-sm text-muted-foreground" data-testid="gated-batch-state">
          {STATE_TEXT[batch.state]}
          {batch.state === "watching" && batch.windowEnd ? (
            <>
              {" "}
              (judged <RelativeTime date={batch.windowEnd} />)
            </>
          ) : null}
        </span>
        {outcome ? (
          <Badge variant={outcome.variant} data-testid="gated-batch-outcome">
            {outcome.label}
          </Badge>
        ) : null}
      </div>
      {batch.outcome ? (
        <p className="text-sm" data-testid="gated-batch-reason">
          {batch.reason} — the rollout {outcomeEffect(batch.outcome, props.actions)}.
          {batch.baseline ? (
            <span className="text-muted-foreground">
              {" "}
              Baseline: {batch.baseline.nodes} nodes ({batch.baseline.match.siteAndHardware} same site and
              hardware, {batch.baseline.match.hardware} same hardware, {batch.baseline.match.site} same site,{" "}
              {batch.baseline.match.other} other).
            </span>
          ) : null}
        </p>
      ) : null}
      {batch.verdicts.length > 0 ? (
        <div className="grid gap-3 lg:grid-cols-2">
          {batch.verdicts.map((verdict) => (
            <GateVerdictView
              key={verdict.gate}
              verdict={verdict}
              spec={specs.find((s) => s.name === verdict.gate)}
            />
          ))}
        </div>
      ) : (
        <>
          <ul className="grid gap-1 text-sm">
            {specs.map((spec) => (
              <li key={spec.name} data-testid="gate-spec" data-gate={spec.name}>
                <span className="font-medium">{spec.name}</span>
                {spec.critical ? " (critical)" : ""}: {gateSpecText(spec)}
              </li>
            ))}
          </ul>
          {batch.live ? <LiveCharts live={batch.live} specs={specs} /> : null}
        </>
      )}
    </div>
  );
}

/** The watched batch's charts so far: the cohorts and series its verdict will be drawn from. */
function LiveCharts(props: { live: NonNullable<GatedBatch["live"]>; specs: GateSpec[] }) {
  const { live } = props;
  return (
    <div className="grid gap-2" data-testid="gate-live">
      <p className="text-sm text-muted-foreground">
        So far (as of <RelativeTime date={live.asOf} />
        ): {live.canaryNodes} canary node(s) against {live.baselineNodes} baseline node(s) on the old version.
      </p>
      <div className="grid gap-3 lg:grid-cols-2">
        {live.charts.map((chart) => {
          const spec = props.specs.find((s) => s.name === chart.gate);
          return (
            <div key={chart.gate} className="grid min-w-0 gap-1" data-gate={chart.gate}>
              <TimeChart
                title={`${chart.gate}: canary vs baseline so far (mean per node)`}
                unit={spec ? unitOf(spec) : "value"}
                testId="gate-live-chart"
                series={[
                  { name: "canary", points: chart.canary },
                  { name: "baseline", points: chart.baseline },
                ]}
              />
              {chart.error ? (
                <p className="text-xs text-destructive">Mimir refused the query: {chart.error}</p>
              ) : null}
            </div>
          );
        })}
      </div>
    </div>
  );
}

function GateVerdictView(props: { verdict: Verdict; spec: GateSpec | undefined }) {
  const v = props.verdict;
  const outcome = gateOutcome(v.outcome);
  return (
    <article
      className="grid min-w-0 gap-2 rounded-md border p-3"
      data-testid="gate-verdict"
      data-gate={v.gate}
      data-outcome={v.outcome}
      aria-label={`Gate ${v.gate}: ${outcome.label}`}
    >
      <div className="flex flex-wrap items-center gap-2">
        <h4 className="mr-auto text-sm font-medium">
          {v.gate}
          {v.critical ? <span className="font-normal text-muted-foreground"> (critical)</span> : null}
        </h4>
        <Badge variant={outcome.variant}>{outcome.label}</Badge>
      </div>
      {props.spec ? <p className="text-xs text-muted-foreground">{gateSpecText(props.spec)}</p> : null}
      <p className="text-sm" data-testid="gate-reason">
        {v.reason}
      </p>
      <TimeChart
        title="Canary vs baseline (mean per node)"
        unit={props.spec ? unitOf(props.spec) : "value"}
        testId="gate-chart"
        series={[
          { name: "canary", points: v.chart.canary },
          { name: "baseline", points: v.chart.baseline },
        ]}
      />
      <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm" data-testid="gate-numbers">
        <dt className="text-muted-foreground">Canary</dt>
        <dd className="tabular-nums">
          {v.canary.nodes} nodes, median {fmt(v.canary.median)} (min {fmt(v.canary.min)}, max{" "}
          {fmt(v.canary.max)})
        </dd>
        <dt className="text-muted-foreground">Baseline</dt>
        <dd className="tabular-nums">
          {v.baseline.nodes} nodes, median {fmt(v.baseline.median)}
        </dd>
        {v.compare ? (
          <>
            <dt className="text-muted-foreground">Mann–Whitney</dt>
            <dd className="tabular-nums" data-testid="gate-p-value">
              U = {fmt(v.compare.u)}, z = {fmt(v.compare.z)}, p = {fmt(v.compare.pValue)} (significant below{" "}
              {fmt(v.compare.alpha)}, worse = {v.compare.worse})
            </dd>
            <dt className="text-muted-foreground">Effect</dt>
            <dd className="tabular-nums">
              {pct(v.compare.relativeDelta)} vs tolerance {pct(v.compare.tolerance)}; Δ {fmt(v.compare.delta)}{" "}
              vs minimum {fmt(v.compare.minDelta)}
            </dd>
          </>
        ) : null}
        {v.threshold ? (
          <>
            <dt className="text-muted-foreground">Threshold</dt>
            <dd className="tabular-nums" data-testid="gate-threshold">
              {v.threshold.min !== null ? `≥ ${fmt(v.threshold.min)} ` : ""}
              {v.threshold.max !== null ? `≤ ${fmt(v.threshold.max)}` : ""}: {v.threshold.breaching.length}{" "}
              node(s) outside, {v.threshold.failureLimit} allowed
            </dd>
          </>
        ) : null}
      </dl>
      <details className="text-xs">
        <summary className="cursor-pointer text-muted-foreground">PromQL run</summary>
        <pre className="mt-1 overflow-x-auto whitespace-pre-wrap break-all font-mono">
          canary: {v.queries.canary}
          {"\n"}baseline: {v.queries.baseline}
        </pre>
      </details>
    </article>
  );
}

function unitOf(spec: GateSpec): string {
  if ("promql" in spec.metric) return "value";
  return PRESET_UNITS[spec.metric.preset] ?? "value";
}

const PRESET_UNITS: Record<string, string> = {
  app_cpu: "share of a core",
  app_memory: "bytes",
  app_restarts: "restarts",
  node_cpu: "share of all cores",
  node_memory: "bytes",
  node_bytes_up: "bytes",
  node_bytes_down: "bytes",
  hub_rtt: "seconds",
};
