import { type CaseGroup, TARGETS } from "./cases.js";
import { type CaseSummary, formatMs, meetsTarget } from "./latency.js";
import type { ConsoleBenchResults, PassResult } from "./results.js";

/** docs/benchmarks/console-api.md from one run's results (pure: results and chart file names in, markdown out). */

const n = (value: number) => value.toLocaleString("en");

function targetCell(group: CaseGroup): string {
  const target = TARGETS[group];
  return `p${target.percentile} ≤ ${formatMs(target.ms)}`;
}

function verdict(summary: CaseSummary | null, group: CaseGroup): string {
  if (!summary) return "not measured";
  if (summary.errors > 0) return `**${summary.errors} errors**`;
  return meetsTarget(summary, TARGETS[group]) ? "met" : "**missed**";
}

function passTable(results: ConsoleBenchResults, pass: PassResult): string {
  const rows = results.cases.map((c) => {
    const run = pass.runs.find((r) => r.caseId === c.id);
    const s = run?.summary ?? null;
    const cells = s
      ? [formatMs(s.p50), formatMs(s.p95), formatMs(s.p99), formatMs(s.max)]
      : ["–", "–", "–", "–"];
    const what = c.group === "page" ? `${c.label} (TTFB)` : c.label;
    return `| ${c.group} | ${what} | ${cells.join(" | ")} | ${run ? run.throughput.toFixed(1) : "–"} | ${targetCell(c.group)} | ${verdict(s, c.group)} |`;
  });
  return [
    "| via | case | p50 | p95 | p99 | max | req/s | target | |",
    "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ...rows,
  ].join("\n");
}

/** Issue 8 #15: the victim organization's calls while another organization's script hammers the node list. */
function fairnessSection(results: ConsoleBenchResults): string {
  const fairness = results.fairness;
  if (!fairness?.scenarios.length) return "";
  const label = (id: string) => results.cases.find((c) => c.id === id)?.label ?? id;
  const group = (id: string) => results.cases.find((c) => c.id === id)?.group ?? "REST API";
  const victimRows = fairness.scenarios.flatMap((scenario) =>
    scenario.victim.map((run) => {
      const s = run.summary;
      const cells = s
        ? [formatMs(s.p50), formatMs(s.p95), formatMs(s.p99), formatMs(s.max)]
        : ["–", "–", "–", "–"];
      const errors = s ? s.errors : 0;
      return `| ${scenario.label} | ${group(run.caseId)}: ${label(run.caseId)} | ${cells.join(" | ")} | ${errors} | ${verdict(s, group(run.caseId))} |`;
    }),
  );
  const aggressorRows = fairness.scenarios
    .filter((scenario) => scenario.aggressor)
    .map((scenario) => {
      const a = scenario.aggressor as NonNullable<typeof scenario.aggressor>;
      return `| ${scenario.label} | ${n(a.requests)} | ${a.okPerSecond.toFixed(0)} | ${a.aggressorP50Ms === null ? "–" : formatMs(a.aggressorP50Ms)} | ${a.limitedPerSecond.toFixed(0)} (${n(a.limited)}) | ${n(a.limitedWithoutRetryAfter)} | ${n(a.otherErrors)} |`;
    });
  const burst = fairness.scenarios.find((s) => s.burstConcurrency > 0)?.burstConcurrency ?? 0;
  const worstP99 = (name: string) => {
    const p99s = (fairness.scenarios.find((s) => s.name === name)?.victim ?? []).map((r) => r.summary?.p99);
    return p99s.length && p99s.every((p) => p !== undefined) ? Math.max(...(p99s as number[])) : null;
  };
  const [quiet, fair, unlimited] = [worstP99("quiet"), worstP99("burst-fair"), worstP99("burst-unlimited")];
  const headline =
    quiet !== null && fair !== null && unlimited !== null
      ? `**acme's worst p99: ${formatMs(quiet)} alone, ${formatMs(fair)} beside globex's burst with fair queueing, ${formatMs(unlimited)} without it** (${(unlimited / fair).toFixed(2)}× lower with it).\n\n`
      : "";
  return `## Tenant fairness (issue 8 #15)

${headline}Two organizations at once. **globex** runs a script that hammers the node list (\`POST /api/v1/nodes/search\`,
first page of 100, its own viewer API key) with ${burst} calls in flight and never honours \`Retry-After\`;
**acme** meanwhile uses the console (tRPC with alice's session) and its integration (REST with its key),
one call at a time, at most one every ${fairness.victimIntervalMs} ms (inside its own rates, so any 429 it
got would be unfair). Each scenario restarts the console with its settings (\`EDGEFLEET_API_CONCURRENCY\`,
\`EDGEFLEET_ORG_RATE\`/\`_BURST\`, \`EDGEFLEET_API_KEY_RATE\`/\`_BURST\`; production limits are the defaults in
\`apps/web/src/env.ts\` and \`packages/api/src/fair-share.ts\`: two calls running per core, at least 4, of which one organization
holds at most half, the rest queued per organization and served in turn; 200/s burst 400 per organization, 50/s burst 100 per key).
The aggressor runs in the benchmark's own process on the same 2 cores, so it also competes for CPU.

| scenario | acme's call | p50 | p95 | p99 | max | errors | p99 ≤ 1 s |
| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |
${victimRows.join("\n")}

What globex's script got:

| scenario | requests | answered 200 /s | p50 of 200s | 429 /s (total) | 429 without Retry-After | other errors |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
${aggressorRows.join("\n")}
`;
}

function baselineTable(results: ConsoleBenchResults): string {
  const baseline = results.baseline;
  if (!baseline) return "";
  const lines: string[] = [];
  for (const pass of results.passes) {
    const before = baseline.passes.find((p) => p.concurrency === pass.concurrency);
    if (!before) continue;
    lines.push(
      `**${pass.concurrency === 1 ? "Sequential" : `${pass.concurrency} in flight`}** (ratio = before / after)`,
      "",
      "| via | case | p50 before | p50 after | p50 ratio | tail before | tail after |",
      "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    );
    for (const c of results.cases) {
      const target = TARGETS[c.group];
      const a = before.runs.find((r) => r.caseId === c.id)?.summary;
      const b = pass.runs.find((r) => r.caseId === c.id)?.summary;
      if (!a || !b) continue;
      const tail = (s: CaseSummary) =>
        `${formatMs(target.percentile === 95 ? s.p95 : s.p99)} (p${target.percentile})`;
      lines.push(
        `| ${c.group} | ${c.label} | ${formatMs(a.p50)} | ${formatMs(b.p50)} | ${(a.p50 / b.p50).toFixed(1)}× | ${tail(a)} | ${tail(b)} |`,
      );
    }
    lines.push("");
  }
  return [
    `## Before and after (${baseline.label})`,
    "",
    `Before: commit \`${baseline.commit}\`; after: commit \`${results.commit}\`; same data set and machine.`,
    "Cases a change does not touch show how much the machine alone moved between the two runs.",
    "",
    ...lines,
  ].join("\n");
}

function explainSection(results: ConsoleBenchResults): string {
  if (results.explains.length === 0) return "";
  const labelOf = new Map(results.cases.map((c) => [c.id, `${c.group}: ${c.label}`]));
  const parts = ["## Query plans", ""];
  for (const explain of results.explains) {
    parts.push(
      `### ${labelOf.get(explain.caseId) ?? explain.caseId}`,
      "",
      `${explain.why} The request ran ${explain.requests} times with every statement logged by Postgres; statements per request, by time spent:`,
      "",
      "| calls/request | mean | max | statement |",
      "| ---: | ---: | ---: | --- |",
      ...explain.statements
        .slice(0, 8)
        .map(
          (s) =>
            `| ${s.callsPerRequest.toFixed(1)} | ${formatMs(s.meanMs)} | ${formatMs(s.maxMs)} | \`${s.sql.replace(/\s+/g, " ").replaceAll("|", "\\|").slice(0, 140)}${s.sql.length > 140 ? "…" : ""}\` |`,
        ),
      "",
    );
    if (explain.explained)
      parts.push(
        "The slowest statement, run again under `EXPLAIN (ANALYZE, BUFFERS)` with its parameters:",
        "",
        "```sql",
        explain.explained.sql.trim(),
        "```",
        "",
        "```",
        explain.explained.plan,
        "```",
        "",
      );
  }
  return parts.join("\n");
}

export function renderReport(results: ConsoleBenchResults, charts: Record<string, string>): string {
  const { config, machine, seed } = results;
  const sequential = results.passes.find((p) => p.concurrency === 1);
  const concurrent = results.passes.find((p) => p.concurrency > 1);
  const allRuns = results.passes.flatMap((p) => p.runs.map((r) => ({ pass: p, run: r })));
  const groupOf = new Map(results.cases.map((c) => [c.id, c.group]));
  const missed = allRuns.filter(
    ({ run }) => !meetsTarget(run.summary, TARGETS[groupOf.get(run.caseId) as CaseGroup]),
  );
  const median = (group: CaseGroup, pass: PassResult | undefined) => {
    const values = (pass?.runs ?? [])
      .filter((r) => groupOf.get(r.caseId) === group && r.summary)
      .map((r) => (r.summary as CaseSummary).p50)
      .sort((a, b) => a - b);
    return values.length ? formatMs(values[Math.floor((values.length - 1) / 2)] as number) : "–";
  };
  const chart = (name: string, alt: string) => (charts[name] ? `![${alt}](${charts[name]})\n` : "");
  const organizations = seed.organizations
    .map((o) => `${o.slug}: ${n(o.nodes)} nodes on ${n(o.sites)} sites, ${n(o.appInstances)} app instances`)
    .join("; ");

  return `# Benchmark: console and API at ${n(config.nodes)} nodes and ${n(config.nodes * config.appsPerNode)} app instances

Generated by \`${results.command}\` on ${machine.date.slice(0, 10)} (commit \`${results.commit}\`). Issue 4's
targets: **API p99 ≤ 1 s** (the Kubernetes API SLO) and **pages p95 ≤ 500 ms** (time to first byte).

**Result:** ${
    missed.length === 0
      ? "every case met its target, sequentially and with requests in flight."
      : `${missed.length} of ${allRuns.length} case × pass results missed their target: ${missed
          .map(
            ({ pass, run }) =>
              `${results.cases.find((c) => c.id === run.caseId)?.label} (${pass.concurrency === 1 ? "sequential" : `${pass.concurrency} in flight`})`,
          )
          .join(", ")}.`
  }
Median of the per-case p50s, sequential: REST ${median("REST API", sequential)}, tRPC ${median("tRPC (console)", sequential)}, pages ${median("page", sequential)}${
    concurrent
      ? `; with ${concurrent.concurrency} in flight: REST ${median("REST API", concurrent)}, tRPC ${median("tRPC (console)", concurrent)}, pages ${median("page", concurrent)}`
      : ""
  }.

## Machine

${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB RAM, ${machine.os}, Linux ${machine.kernel},
Node ${machine.node}. **The machine is shared**: other engineers' dev servers, tests and builds run
on the same 2 cores, and another benchmark (the edge data path) takes turns with this one through
\`flock /tmp/bench-cpu.lock\` (waited ${results.lockWaitSeconds.toFixed(0)} s for it). 1-minute load average
${results.loadAverage.before.toFixed(2)} before measuring, ${results.loadAverage.after.toFixed(2)} after. Quote
ratios and medians; single tail values move between runs.

## What runs

- The \`load\` stack profile (scripts/stack, ports +3000, fresh data in \`var/load\`): PostgreSQL 15,
  NATS, Mimir (node charts) and Keycloak (real sign-in), and the console built for production
  (\`next build\` + \`next start\`) from a snapshot of the commit (\`git archive\`).
- Data: ${organizations}. Labels \`site\`, \`region\` (6, by site), \`tier\` (prod 80 %, staging 15 %,
  canary 5 %), \`hw\` (4 kinds); statuses online 85 %, offline 10 %, pending 3 %, revoked 2 %; four agent
  versions; instances 96 % running, 2 % failed. Both organizations use the same node names, so a
  missing tenant filter would show. Seeded with set-based SQL in ${seed.seconds.total.toFixed(0)} s
  (nodes ${seed.seconds.nodes.toFixed(0)} s, app instances ${seed.seconds.appInstances.toFixed(0)} s, VACUUM ANALYZE
  ${seed.seconds.vacuum.toFixed(0)} s). Sizes: ${seed.tableSizes.map((t) => `${t.table} ${n(t.rows)} rows, ${t.totalMiB.toFixed(0)} MiB with indexes`).join("; ")}.
- Clients: REST (\`/api/v1\`) with an API key (\`efk_…\`, role viewer) that alice made through the
  console's own \`apiKey.create\`; tRPC (\`/api/trpc\`, superjson, unbatched GET) and pages with the
  session cookie of alice signed in through Keycloak's login form. Node ids of detail cases rotate
  over ${n(100)} nodes. Every answer is checked (status, page size, that items match the filter,
  counts equal to ${n(config.nodes)} + the demo nodes); wrong answers count as errors, not samples.
- Per case: ${config.warmup} warm-up requests, then ${config.requests} sequential requests, then a
  second pass of ${config.concurrentRequests} requests with ${config.concurrency} in flight. API cases
  are timed to the last byte, pages to the first byte (the server-rendered shell; the page's data
  then comes from the tRPC calls measured above). Deep cursors are ${n(config.deepDepth)} nodes in.

## Results

### Sequential

${sequential ? passTable(results, sequential) : "not measured"}

${concurrent ? `### ${concurrent.concurrency} requests in flight\n\n${passTable(results, concurrent)}\n` : ""}
${chart("tail-by-case", "tail latency per case")}
${chart("distribution-rest", "REST latency distributions")}
${chart("distribution-trpc", "tRPC latency distributions")}
${chart("distribution-pages", "page TTFB distributions")}
${fairnessSection(results)}
${baselineTable(results)}
${results.problems.length ? `## Problems\n\n${results.problems.map((p) => `- ${p}`).join("\n")}\n` : ""}
${results.notes.length ? `## Notes\n\n${results.notes.map((p) => `- ${p}`).join("\n")}\n` : ""}
${explainSection(results)}
## Reproduce

\`\`\`sh
${results.command}
\`\`\`

Set-up this run: stack ${results.setupSeconds.stack.toFixed(0)} s, console build ${
    results.setupSeconds.build === null
      ? "reused (same commit)"
      : `${results.setupSeconds.build.toFixed(0)} s`
  }, seed ${results.setupSeconds.seed.toFixed(0)} s. Raw numbers: [console-api-results.json](console-api-results.json) (and \`var/load/results.json\` on the machine that ran it).
`.replace(/\n{3,}/g, "\n\n");
}
